// The digest route of the CPU Fingerprinter (neardup/recipe.h): recipes whose
// feature hash is a cryptographic digest (MD5, SHA-1, SHA-256), as the Elixir
// library ExLSH computes them. Kept apart from the 64-bit fast path
// (cpu_fingerprinter.cc), which it shares nothing with but the normalizer
// and tokenizers:
//   normalize (NormalizeAsciiWord or Normalize) -> tokens (ForEachToken,
//   graphemes included) -> stopword filter (word and whitespace tokens) ->
//   every window of shingle_width consecutive tokens (none when the text has
//   fewer tokens) -> digest of the window's bytes, tokens concatenated with
//   no separator -> DigestSimHashAccumulator -> WideSimHash.
// Cost: one digest per shingle (the dominant cost) and O(bytes) text work;
// memory: the tokens of one text (views) and a shingle buffer per thread.
// Thread safety: as Fingerprinter.
#ifndef NEARDUP_ENGINE_DIGEST_FINGERPRINTER_H_
#define NEARDUP_ENGINE_DIGEST_FINGERPRINTER_H_

#include <memory>

#include "neardup/fingerprinter.h"

namespace neardup::internal {

// REQUIRES: ValidateRecipe(recipe) is ok and IsDigestRecipe(recipe).
// Fails when the selection asks for anything but SimHash, or libcrypto lacks
// the digest.
Result<std::unique_ptr<Fingerprinter>> CreateDigestFingerprinter(const Recipe& recipe,
                                                                 const SketchSelection& selection);

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_DIGEST_FINGERPRINTER_H_
