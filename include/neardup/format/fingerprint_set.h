// A fingerprinted corpus (FingerprintedCorpus: ids, text lengths, JSONL
// flags, raw records, and every Fingerprint field including chunk sets and
// the wide SimHash) as bytes and as a checksummed file, read back exactly:
// for state saved by one run and used by a later one (neardup-mpi's
// --checkpoint, one file per rank). Unlike fingerprint_record.h (fixed
// width, for numpy) it carries variable-length fields and has a reader.
// Layout of the payload (docs/formats/fingerprint_set.md), little-endian:
//   u64 documents, u8 has_raw_records, then per document
//   id (u64 length + bytes), u64 text length, u8 is_jsonl,
//   [raw record (u64 length + bytes) when has_raw_records],
//   u64 simhash, u64 simhash128.high, u64 simhash128.low,
//   u32 simhash_wide.bits, 4 x u64 simhash_wide.words, u64 num_shingles,
//   u32 minhash.k, u64 n + n x u64 minhash.values,
//   u8 kvalue_minhash.empty, u64 n + n x u64 kvalue_minhash.values,
//   u64 n + n x u32 chunks, u64 num_tokens, u64 invalid_utf8_sequences.
// The file (WriteFingerprintSetFile) is a checksummed_file.h file of kind
// "fingerprint-set" whose payload is u64 metadata length, the caller's
// metadata bytes, then the set: the version, size and checksum are the
// container's. record_files and record_locations are not stored (they name
// the input files of one run).
// Thread safety: free functions.
#ifndef NEARDUP_FORMAT_FINGERPRINT_SET_H_
#define NEARDUP_FORMAT_FINGERPRINT_SET_H_

#include <string>
#include <string_view>

#include "neardup/fingerprint_pipeline.h"
#include "neardup/status.h"

namespace neardup::format {

// Appends the payload of `corpus` to *out. InvalidArgument when its vectors
// differ in length (raw_records may be empty).
Status EncodeFingerprintSet(const FingerprintedCorpus& corpus, std::string* out);

// Replaces *corpus with the set encoded in `bytes`, which must hold exactly
// one. DataLoss (never a crash or an allocation beyond the input's size)
// when the bytes are not such a set.
Status DecodeFingerprintSet(std::string_view bytes, FingerprintedCorpus* corpus);

// Writes `corpus` and `metadata` (any bytes the caller reads back) to
// `path` atomically (checksummed_file.h).
Status WriteFingerprintSetFile(const std::string& path, const FingerprintedCorpus& corpus,
                               std::string_view metadata);

// Reads a file of WriteFingerprintSetFile into *corpus and *metadata.
// NotFound, or DataLoss naming the file when it is damaged (checksum,
// truncation, a malformed set).
Status ReadFingerprintSetFile(const std::string& path, FingerprintedCorpus* corpus,
                              std::string* metadata);

}  // namespace neardup::format

#endif  // NEARDUP_FORMAT_FINGERPRINT_SET_H_
