// Writes a document's fingerprints as one JSON object (one JSONL line), the
// format of `neardup fingerprint`:
//   {"id":"a.txt","recipe":"<16 hex>","tokens":42,"simhash":"<16 or 32 hex>",
//    "minhash":["<16 hex>",...],"kminhash":["<16 hex>",...],"chunks":[17,...]}
// 64-bit values are hex strings because JSON numbers lose precision past
// 2^53 in most readers; chunk ids are 32-bit and stay numbers. Keys appear
// only for the selected sketches. A 128-bit SimHash is written high word
// first. A digest-route SimHash (Fingerprint::simhash_wide: 128, 160 or 256
// bits) is written as all its bytes in hex, in order, and again in Base64
// under "simhash_base64" (ExLSH's text form).
#ifndef NEARDUP_ENGINE_FINGERPRINT_JSON_H_
#define NEARDUP_ENGINE_FINGERPRINT_JSON_H_

#include <string>
#include <string_view>

#include "neardup/fingerprinter.h"

namespace neardup::internal {

// REQUIRES: `id` and `recipe_id` do not view `*out` (it may reallocate).
void AppendFingerprintJson(std::string* out, std::string_view id, const Fingerprint& fingerprint,
                           const SketchSelection& selection, int simhash_bits,
                           std::string_view recipe_id);
// The same line for one document of a flat batch.
void AppendFingerprintJson(std::string* out, std::string_view id,
                           const FingerprintView& fingerprint, const SketchSelection& selection,
                           int simhash_bits, std::string_view recipe_id);

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_FINGERPRINT_JSON_H_
