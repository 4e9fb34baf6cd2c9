// Fixed-width binary fingerprint records: `neardup fingerprint --format
// binary`, for bulk use (numpy, memory maps) without parsing JSON.
//
// The file is the records back to back, one per document in input order, no
// header; every field is an unsigned 64-bit little-endian integer, so
// numpy reads it with np.fromfile(path, dtype=FingerprintRecordDtype(...)).
// The fields, in this order, only for the selected sketches:
//   tokens                          tokens after stopwords (0: no features)
//   simhash                         64-bit SimHash, or
//   simhash_hi, simhash_lo          a 128-bit one (high word first)
//   minhash_count, minhash[k]       bottom-k values, ascending; the first
//                                   minhash_count are real, the rest are
//                                   2^64-1 (a short document has fewer than k)
//   kminhash_empty, kminhash[k]     1 when the document had no features (the
//                                   values are then 0), else 0; k values
// Record size: 8 x (1 + {0,1,2} + {0, 1+k} + {0, 1+k}) bytes.
// Ids are not in the records (they vary in length): record i is input
// document i, and the CLI can write the ids beside (--ids-output).
// Not representable: chunk sets (variable length) and the digest route's
// wide SimHash (160, 256 bits); FingerprintRecordLayout refuses them.
// Frozen: the field order and widths above.
// Thread safety: pure functions.
#ifndef NEARDUP_FORMAT_FINGERPRINT_RECORD_H_
#define NEARDUP_FORMAT_FINGERPRINT_RECORD_H_

#include <cstddef>
#include <string>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::format {

struct FingerprintRecordLayout {
  SketchSelection selection;
  int simhash_bits = 64;  // 64 or 128
  size_t num_hashes = 0;  // k of minhash and kminhash
  size_t record_bytes = 0;
};

// The layout for a recipe and selection: InvalidArgument for chunks or a
// SimHash wider than 128 bits.
Result<FingerprintRecordLayout> MakeFingerprintRecordLayout(const Recipe& recipe,
                                                            const SketchSelection& selection);

// numpy's dtype for the layout, as Python source:
// [("tokens", "<u8"), ("simhash", "<u8"), ("minhash_count", "<u8"),
//  ("minhash", "<u8", (128,))].
std::string FingerprintRecordDtype(const FingerprintRecordLayout& layout);

// Appends one record (layout.record_bytes bytes) to *out.
void AppendFingerprintRecord(std::string* out, const Fingerprint& fingerprint,
                             const FingerprintRecordLayout& layout);
// The same record for one document of a flat batch (fingerprint_batch.h).
void AppendFingerprintRecord(std::string* out, const FingerprintView& fingerprint,
                             const FingerprintRecordLayout& layout);

}  // namespace neardup::format

#endif  // NEARDUP_FORMAT_FINGERPRINT_RECORD_H_
