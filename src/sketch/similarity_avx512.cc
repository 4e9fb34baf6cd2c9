// The AVX-512 prefix filter: PrefixFilterScalar eight values at a time.
// Compiled for AVX-512 by a function attribute only, so the rest of the
// library keeps the baseline ISA; BestPrefixFilter picks it at run time.
#include "sketch/similarity_kernels.h"

#include <algorithm>

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)

NEARDUP_INTRINSICS_WARNINGS_OFF
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

// The block intersection behind MergeWalkAvx512 (the argument is in
// docs/JACCARD_KERNEL.md section 6). A common value x = a[i] = b[j] is the
// union's element number i + j - m (0-based), m = the common values below x;
// it is among the union's `limit` smallest iff that rank is below `limit`.
// Blocks of 8 values of A are compared with blocks of 8 of B (each B value
// broadcast from memory, so only the compare uses the shuffle port), and the
// block with the smaller maximum advances: every pair of blocks that share a
// value is compared exactly once, and common values come out in increasing
// order, so their ranks increase and only the last one of a block needs
// testing.
// The lanes of `va` (valid lanes `a_valid`) equal to one of bb[0, 8).
// Each B value is broadcast from memory (a load, not a shuffle). The
// "equal to none" masks are chained through the compares' write masks (two
// chains of four), so combining them costs no KOR: the KORs competed with
// the compares for the two vector ports.
__attribute__((target("avx512f,avx512dq"), always_inline)) inline __mmask8 EqualToAny8(
    __mmask8 a_valid, __m512i va, const uint64_t* bb) {
  auto bcast = [&](int r) __attribute__((target("avx512f,avx512dq"), always_inline)) {
    return _mm512_set1_epi64(static_cast<long long>(bb[r]));
  };
  __mmask8 none1 = _mm512_mask_cmpneq_epu64_mask(a_valid, va, bcast(0));
  __mmask8 none2 = _mm512_mask_cmpneq_epu64_mask(a_valid, va, bcast(4));
  none1 = _mm512_mask_cmpneq_epu64_mask(none1, va, bcast(1));
  none2 = _mm512_mask_cmpneq_epu64_mask(none2, va, bcast(5));
  none1 = _mm512_mask_cmpneq_epu64_mask(none1, va, bcast(2));
  none2 = _mm512_mask_cmpneq_epu64_mask(none2, va, bcast(6));
  none1 = _mm512_mask_cmpneq_epu64_mask(none1, va, bcast(3));
  none2 = _mm512_mask_cmpneq_epu64_mask(none2, va, bcast(7));
  return _kandn_mask8(_kand_mask8(none1, none2), a_valid);
}

// The union rank of a common value: a[ia + lane], found in the B block at
// jb (valid lanes b_valid, values vb), the `before`-th common value found.
// Its index in B is jb + |B block < x|.
__attribute__((target("avx512f,avx512dq,popcnt"), always_inline)) inline size_t CommonRank(
    const uint64_t* a, size_t ia, unsigned lane, __mmask8 b_valid, __m512i vb, size_t jb,
    size_t before) {
  const __m512i x = _mm512_set1_epi64(static_cast<long long>(a[ia + lane]));
  const size_t j =
      jb + static_cast<size_t>(__builtin_popcount(_mm512_mask_cmplt_epu64_mask(b_valid, vb, x)));
  return ia + lane + j - before;
}

__attribute__((target("avx512f,avx512dq,popcnt"))) WalkCount MergeWalkAvx512(
    const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t limit) {
  // Values at index >= limit have rank >= limit: they never count.
  na = std::min(na, limit);
  nb = std::min(nb, limit);
  size_t ia = 0;
  size_t jb = 0;
  size_t m = 0;       // common values found so far, all of rank < limit
  bool full = false;  // a common value of rank >= limit was seen
  // Any common value still unseen has i >= ia, j >= jb and at most i - ia
  // unseen common values before it, so its rank is >= ia + jb - m: once
  // that reaches limit nothing more counts (and the union has >= limit
  // elements, because a[0, ia) and b[0, jb) share at most m values).
  // The fast loop: whole blocks on both sides, and every common value
  // found has rank <= (ia + 7) + (jb + 7) - m < limit, so all of them count
  // and no rank is computed. (Computing the advance with masks instead of
  // the compiler's branch + CMOV was 50% slower: it puts the load of the
  // next block maximum on a serial chain that speculation otherwise skips.)
  while (ia + 8 <= na && jb + 8 <= nb && ia + jb + 14 < limit + m) {
    const __m512i va = _mm512_loadu_si512(a + ia);
    m += static_cast<size_t>(__builtin_popcount(EqualToAny8(0xFF, va, b + jb)));
    const uint64_t a_max = a[ia + 7];
    const uint64_t b_max = b[jb + 7];
    const size_t next_ia = a_max <= b_max ? ia + 8 : ia;
    jb = b_max <= a_max ? jb + 8 : jb;
    ia = next_ia;
  }
  // The general loop: partial blocks, and ranks checked near the limit.
  while (ia < na && jb < nb) {
    if (ia + jb >= limit + m) {
      full = true;
      break;
    }
    const size_t a_left = na - ia;
    const size_t b_left = nb - jb;
    const __mmask8 a_valid =
        a_left >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << a_left) - 1);
    const __m512i va = _mm512_maskz_loadu_epi64(a_valid, a + ia);
    __mmask8 found = 0;
    if (b_left >= 8) {
      found = EqualToAny8(a_valid, va, b + jb);
    } else {
      for (size_t r = 0; r < b_left; ++r) {
        found |= _mm512_mask_cmpeq_epu64_mask(a_valid, va,
                                              _mm512_set1_epi64(static_cast<long long>(b[jb + r])));
      }
    }
    if (found != 0) {
      const __mmask8 b_valid =
          b_left >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << b_left) - 1);
      const __m512i vb = _mm512_maskz_loadu_epi64(b_valid, b + jb);
      const auto count = static_cast<size_t>(__builtin_popcount(found));
      const auto last = static_cast<unsigned>(31 - __builtin_clz(found));
      if (CommonRank(a, ia, last, b_valid, vb, jb, m + count - 1) < limit) {
        m += count;
      } else {
        // Ranks increase with the lane: count the ones below limit.
        for (unsigned bits = found; bits != 0; bits &= bits - 1) {
          if (CommonRank(a, ia, static_cast<unsigned>(__builtin_ctz(bits)), b_valid, vb, jb, m) >=
              limit)
            break;
          ++m;
        }
        full = true;
        break;
      }
    }
    const uint64_t a_max = a[ia + std::min<size_t>(a_left, 8) - 1];
    const uint64_t b_max = b[jb + std::min<size_t>(b_left, 8) - 1];
    // Branch-free: which side advances is data-dependent and unpredictable.
    ia += std::min<size_t>(a_left, 8) & (size_t{0} - static_cast<size_t>(a_max <= b_max));
    jb += std::min<size_t>(b_left, 8) & (size_t{0} - static_cast<size_t>(b_max <= a_max));
  }
  // Stopped early: the union has more than `limit` elements. Otherwise
  // one side is exhausted and m is the whole intersection.
  const size_t steps = full ? limit : std::min(limit, na + nb - m);
  return WalkCount{steps, m};
}

}  // namespace neardup::internal

NEARDUP_INTRINSICS_WARNINGS_ON

#endif  // defined(__x86_64__)
