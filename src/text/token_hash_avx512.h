// XXH3-64 of many short tokens at once with AVX-512 (F, BW, DQ): eight
// tokens per vector. A first pass hashes the 1-3- and 4-8-byte tokens in one
// branch-free chain (the two classes' avalanches have the same shape; each
// lane's input word comes from one vpshufb and its constants from one
// vpermq by length) and lists the others: a second pass hashes the
// 9-16-byte ones eight per vector, a third the 17-128-byte ones
// (XXH3_len_17to128_64b: one to four pairs of 16-byte mixes, masked by
// length), both writing back by index. A 1-8-byte token's bytes come from
// one 64-bit gather (the 8 bytes ending at its end, which hold it), a
// 9-16-byte token's from two (its first and last 8 bytes), a 17-128-byte
// token's from four per 32 bytes of length; every read lies inside the
// token. Tokens longer than 128 bytes, empty ones, and 1-8-byte ones ending
// in the first 8 bytes of the text (where the gather would read before it)
// take the scalar Xxh3HashInline.
//
// The values are exactly XXH3_64bits_withSeed's (xxHash 0.8):
// token_hash_kernels_test.cc checks every length 0..300 at 64 offsets from
// the start and from the end of the text, mixed length classes, and many
// seeds against the library.
//
// Cost: about 7 instructions per token of 1-8 bytes (57 per eight in the
// first-pass loop, objdump of GCC 12's Release build); a 9-16-byte
// token costs about twice that in the second pass, a 17-128-byte token
// 4-8 gathers and 2-8 128-bit multiplies per eight.
// Thread safety: a pure function.
#ifndef NEARDUP_TEXT_TOKEN_HASH_AVX512_H_
#define NEARDUP_TEXT_TOKEN_HASH_AVX512_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/token_scan.h"

namespace neardup::internal {

// out[i] = XXH3_64bits_withSeed(text.substr(spans[i].begin, spans[i].length),
// seed) for i < num_spans.
// REQUIRES: CpuSupports(CpuPath::kAvx512); every span lies inside `text`.
// REQUIRES: out does not overlap spans or text (the later passes re-read
// spans after the first pass has written out).
void Xxh3SpansAvx512(std::string_view text, const TokenSpan* spans, size_t num_spans, uint64_t seed,
                     uint64_t* out);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_HASH_AVX512_H_
