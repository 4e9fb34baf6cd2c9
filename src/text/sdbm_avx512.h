// sdbm (hash/feature_hash.h) of many tokens at once with AVX-512 (F, BW, DQ),
// with the stopword filter in the same pass: the hash path of the `paper`
// preset.
//
// Why it is exact without a loop per byte: sdbm is a polynomial,
//   SdbmHash(c_0 .. c_{n-1}, seed) = seed * P^n + sum_i c_i * P^(n-1-i)
// (mod 2^64, P = 65599), so any split of the bytes into 8-byte chunks gives
// the same value if each chunk is weighted by the right power of P. Within a
// chunk, Sdbm8 (sdbm_avx512.cc) evaluates sum_j byte_j * P^(7-j) for eight
// 64-bit lanes at once: pairs of bytes with vpmaddubsw (P = 2^16 + 63),
// pairs of pairs with vpmuludq (P^2 = 2^32 + 8261505), the two halves with
// one vpmullq. Tokens of 1..8 bytes are eight per vector (one token per
// lane, its bytes from one 64-bit gather of the 8 bytes that end at its end,
// one Sdbm8); tokens of 9..15 bytes are listed and then taken eight per
// vector in a second pass (two gathers, two Sdbm8); longer tokens run their
// 8-byte chunks eight per vector.
//
// The stopword test of a lane is one probe of the set's perfect hash table
// (StopwordProbeTable in text/stopwords.h), keyed by the unseeded sdbm the
// lane has already computed: two gathers and two compares, no branch.
//
// Tokens over 15 bytes are hashed 64 bytes per step after the loop (when the
// set has no word that long they cannot be stopwords, so the loop only notes
// where their hash goes); 1-8-byte tokens that end in the first 7 bytes of
// the text (where the gather would leave it), empty tokens, and long tokens
// that could be stopwords take SdbmHashAvx512 and StopwordSet::Contains in
// the loop. Each hash is first written at its span's index in out[], and
// the kept ones are then compacted in place.
// sdbm_avx512_test.cc checks every length 0..300 at every alignment, random
// bytes and seeds, and the stopword decision against Contains.
//
// Cost: about 10 vector instructions per short token (S of two chunks, the
// probe); a long token about 0.5 instructions per byte.
// Thread safety: pure functions.
#ifndef NEARDUP_TEXT_SDBM_AVX512_H_
#define NEARDUP_TEXT_SDBM_AVX512_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/stopwords.h"
#include "text/token_scan.h"

namespace neardup::internal {

// Writes SdbmHash(token, seed) of each span that is not in `stopwords` to
// out[], in order, and returns their number. `stopwords` may be null (no
// filter). REQUIRES: TextKernels::sdbm_spans (text/text_kernels.h) is set; every span inside
// `text`; out[] has room for num_spans values; stopwords null or stopwords->probe_table() non-null.
size_t SdbmSpansAvx512(std::string_view text, const TokenSpan* spans, size_t num_spans,
                       uint64_t seed, const StopwordSet* stopwords, uint64_t* out);

// SdbmHash(bytes, seed) for any length, 64 bytes per step.
// REQUIRES: TextKernels::sdbm_spans (text/text_kernels.h) is set.
uint64_t SdbmHashAvx512(std::string_view bytes, uint64_t seed);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_SDBM_AVX512_H_
