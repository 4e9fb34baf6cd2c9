// XXH3-64 of many short tokens at once with AVX2: four tokens per vector.
// The 1-3- and 4-8-byte tokens (about 90% of the words of English mail, 80%
// of those of the translated man pages) run one branch-free chain: each
// lane's bytes come from one 8-byte load ending at the token's end (which
// holds the token), both classes' input words are built with variable
// shifts (vpsrlvq) and their avalanches, which have the same shape, use
// per-lane blended constants. AVX2 has no 64x64-bit multiply: each
// multiply is three vpmuludq (the low 64 bits of the product). Every other
// token (empty, 9 bytes or more, or 1-8 bytes ending in the first 8 bytes
// of the text, where the load would read before it) takes the scalar
// Xxh3HashInline in a second pass.
//
// The values are exactly XXH3_64bits_withSeed's (xxHash 0.8):
// token_hash_avx2_test.cc checks every length 0..300 at many offsets from
// the start and from the end of the text and many seeds against the library.
// Thread safety: a pure function.
#ifndef NEARDUP_TEXT_TOKEN_HASH_AVX2_H_
#define NEARDUP_TEXT_TOKEN_HASH_AVX2_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/token_scan.h"

namespace neardup::internal {

// out[i] = XXH3_64bits_withSeed(text.substr(spans[i].begin, spans[i].length),
// seed) for i < num_spans.
// REQUIRES: CpuSupports(CpuPath::kAvx2); every span lies inside `text`.
void Xxh3SpansAvx2(std::string_view text, const TokenSpan* spans, size_t num_spans, uint64_t seed,
                   uint64_t* out);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_HASH_AVX2_H_
