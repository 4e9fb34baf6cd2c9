// The AVX-512 prefix filter: PrefixFilterScalar eight values at a time.
// Compiled for AVX-512 by a function attribute only, so the rest of the
// library keeps the baseline ISA; BestPrefixFilter picks it at run time.
#include "sketch/similarity_kernels.h"

#if defined(__x86_64__)

// GCC 12 warns that the _mm512_undefined_* placeholders inside its own
// intrinsic headers are uninitialized (GCC bug 105593), which -Werror turns
// into a build failure; the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace neardup::internal {

__attribute__((target("avx512f,avx512bw,avx512vl,popcnt"))) PrefixCounts PrefixFilterAvx512(
    const uint64_t* probe, const uint64_t* build, size_t prefix) {
  const __m512i cut = _mm512_set1_epi64(static_cast<long long>(probe[prefix - 1]));
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i low8 = _mm512_set1_epi64(255);
  const __m512i k64 = _mm512_set1_epi64(64);
  const __m512i k128 = _mm512_set1_epi64(128);
  const __m512i k192 = _mm512_set1_epi64(192);
  // Bitmap word w collects 1 << (bucket - 64 w); VPSLLVQ gives 0 for a
  // count outside [0, 64) (a negative one wraps to a huge unsigned count),
  // so each word only takes the buckets that are its own.
  __m512i word0 = _mm512_setzero_si512();
  __m512i word1 = _mm512_setzero_si512();
  __m512i word2 = _mm512_setzero_si512();
  __m512i word3 = _mm512_setzero_si512();
  size_t below = 0;
  for (size_t j = 0; j < prefix; j += 8) {
    const __m512i y = _mm512_loadu_si512(build + j);
    const __m512i bucket = _mm512_and_si512(y, low8);
    word0 = _mm512_or_si512(word0, _mm512_sllv_epi64(one, bucket));
    word1 = _mm512_or_si512(word1, _mm512_sllv_epi64(one, _mm512_sub_epi64(bucket, k64)));
    word2 = _mm512_or_si512(word2, _mm512_sllv_epi64(one, _mm512_sub_epi64(bucket, k128)));
    word3 = _mm512_or_si512(word3, _mm512_sllv_epi64(one, _mm512_sub_epi64(bucket, k192)));
    below += static_cast<size_t>(__builtin_popcount(_mm512_cmple_epu64_mask(y, cut)));
  }
  // OR each word's eight lanes together, all four at once: after this,
  // lanes 0-3 of `bitmap` hold words 0-3 (lanes 4-7 repeat them).
  const __m512i pair01 =
      _mm512_or_si512(_mm512_unpacklo_epi64(word0, word1), _mm512_unpackhi_epi64(word0, word1));
  const __m512i pair23 =
      _mm512_or_si512(_mm512_unpacklo_epi64(word2, word3), _mm512_unpackhi_epi64(word2, word3));
  const __m512i half = _mm512_or_si512(_mm512_shuffle_i64x2(pair01, pair23, 0x88),
                                       _mm512_shuffle_i64x2(pair01, pair23, 0xDD));
  const __m512i bitmap = _mm512_or_si512(_mm512_shuffle_i64x2(half, half, 0x88),
                                         _mm512_shuffle_i64x2(half, half, 0xDD));
  size_t maybe = 0;
  for (size_t i = 0; i < prefix; i += 8) {
    const __m512i x = _mm512_loadu_si512(probe + i);
    // Word (x >> 6) & 3 of the bitmap, rotated right by x mod 64 so the
    // bucket's bit lands in bit 0 (the rotate count is taken mod 64).
    const __m512i word = _mm512_permutexvar_epi64(
        _mm512_and_si512(_mm512_srli_epi64(x, 6), _mm512_set1_epi64(3)), bitmap);
    const __m512i bit = _mm512_rorv_epi64(word, x);
    maybe += static_cast<size_t>(__builtin_popcount(_mm512_test_epi64_mask(bit, one)));
  }
  return PrefixCounts{below, maybe};
}

}  // namespace neardup::internal

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // defined(__x86_64__)
