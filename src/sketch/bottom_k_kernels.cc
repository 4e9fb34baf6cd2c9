#include "sketch/bottom_k_kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include "hash/cpu_features.h"
#include "util/insertion_sort.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace neardup::internal {
namespace {

// first <= v <= last iff v - first <= last - first, modulo 2^64: one compare.
size_t FilterInRangePortable(const uint64_t* values, size_t count, uint64_t first, uint64_t last,
                             uint64_t* out) {
  const uint64_t width = last - first;
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    out[n] = values[i];
    n += values[i] - first <= width;
  }
  return n;
}

size_t UniquePortable(const uint64_t* values, size_t count, uint64_t* out, size_t room) {
  if (count == 0) return 0;
  uint64_t previous = values[0];
  out[0] = previous;
  size_t m = 1;
  // out[m] is written before m advances past it, so m < room bounds every
  // store; whether a value repeats is flag arithmetic, not a branch.
  for (size_t i = 1; i < count && m < room; ++i) {
    const uint64_t v = values[i];
    out[m] = v;
    m += v != previous;
    previous = v;
  }
  return m;
}

// One pass instead of a merge and then a dedup; the choice of side and
// whether the value repeats the last one kept are flag arithmetic, not
// branches.
size_t MergeUniquePortable(const uint64_t* a, size_t na, const uint64_t* b, size_t nb,
                           uint64_t* out, size_t room) {
  if (na + nb == 0) return 0;
  size_t i = 0;
  size_t j = 0;
  uint64_t previous = nb == 0 || (na > 0 && a[0] <= b[0]) ? a[i++] : b[j++];
  out[0] = previous;
  size_t m = 1;
  // out[m] is written before m advances past it, so m < room bounds every
  // store.
  while (i < na && j < nb && m < room) {
    const uint64_t x = a[i];
    const uint64_t y = b[j];
    const bool from_a = x <= y;
    const uint64_t v = from_a ? x : y;
    i += from_a;
    j += !from_a;
    out[m] = v;
    m += v != previous;
    previous = v;
  }
  for (; i < na && m < room; ++i) {
    const uint64_t v = a[i];
    out[m] = v;
    m += v != previous;
    previous = v;
  }
  for (; j < nb && m < room; ++j) {
    const uint64_t v = b[j];
    out[m] = v;
    m += v != previous;
    previous = v;
  }
  return m;
}

// counts[0, num) becomes its inclusive prefix sums.
template <typename Count>
void PrefixSumsPortable(Count* counts, size_t num) {
  // The running sum in a register: with byte counts (which may alias
  // anything) counts[b - 1] would be loaded again after every store.
  Count sum = 0;
  for (size_t b = 0; b < num; ++b) {
    sum = static_cast<Count>(sum + counts[b]);
    counts[b] = sum;
  }
}

// bucket[i] = (values[i] - first) >> shift for i < n. REQUIRES: each fits
// in Index.
template <typename Index>
void BucketNumbersPortable(const uint64_t* values, size_t n, uint64_t first, int shift,
                           Index* bucket) {
  // A loop the compiler vectorizes for the baseline ISA (SSE2).
  for (size_t i = 0; i < n; ++i) bucket[i] = static_cast<Index>((values[i] - first) >> shift);
}

// Writes values[0, n) to out grouped by bucket (value - first) >> shift,
// buckets ascending, each in input order: a counting pass, prefix sums of
// the counts, a scatter. Count holds any count up to n and any offset.
template <typename Count, typename Index, void (*kPrefixSums)(Count*, size_t),
          void (*kBucketNumbers)(const uint64_t*, size_t, uint64_t, int, Index*)>
void ScatterByBucket(const uint64_t* values, size_t n, uint64_t first, int shift,
                     size_t num_buckets, uint64_t* out, uint64_t* scratch) {
  // scratch: num_buckets + 1 bucket offsets, then n bucket numbers.
  Count* starts = reinterpret_cast<Count*>(scratch);
  std::memset(starts, 0, (num_buckets + 1) * sizeof(Count));
  Count* count = starts + 1;
  // The bucket of every value first (kBucketNumbers: BucketNumbersPortable,
  // a loop the compiler vectorizes for the baseline ISA, or the AVX-512
  // kernel's), so the counting and scattering loops start each
  // read-modify-write from an address one load away.
  // Index holds any bucket number (below num_buckets).
  Index* bucket =
      reinterpret_cast<Index*>(scratch + (num_buckets + 1) * sizeof(Count) / sizeof(uint64_t) + 1);
  kBucketNumbers(values, n, first, shift, bucket);
  for (size_t i = 0; i < n; ++i) ++count[bucket[i]];
  // starts[b] = the values in buckets before b.
  kPrefixSums(count, num_buckets);
  Count* next = starts;  // next free slot of bucket b: starts[b], advanced
  for (size_t i = 0; i < n; ++i) out[next[bucket[i]]++] = values[i];
}

// A counting sort on the top bits of value - first into about two buckets
// per value, then an insertion pass that only moves values within their
// bucket. Linear expected time for values spread uniformly over [first,
// last] (the feature hashes); the range comes from the caller, so no pass
// looks for the maximum. Clustered input goes to std::sort once the
// insertion pass has made 8n moves. Out of place: the scatter writes the
// caller's output directly (no copy back). Below 256 values (most sorts
// here) the counts and offsets fit in bytes: a quarter of the memory to
// clear and to prefix-sum.
template <void (*kPrefixSums32)(uint32_t*, size_t), void (*kPrefixSums8)(uint8_t*, size_t),
          void (*kBucketNumbers16)(const uint64_t*, size_t, uint64_t, int, uint16_t*),
          void (*kBucketNumbers32)(const uint64_t*, size_t, uint64_t, int, uint32_t*)>
void BucketSort(const uint64_t* values, size_t n, uint64_t first, uint64_t last, uint64_t* out,
                uint64_t* scratch) {
  if (n <= 32) {
    std::copy(values, values + n, out);
    InsertionSort(out, n);
    return;
  }
  // 2^bucket_bits >= 2n: with half a value per bucket few values move in
  // the insertion pass, at the price of a longer prefix sum; measured best
  // against n and 4n buckets.
  const int bucket_bits = std::bit_width(n - 1) + 1;
  const int range_bits = std::bit_width(last - first);
  const int shift = range_bits > bucket_bits ? range_bits - bucket_bits : 0;
  const size_t num_buckets = size_t{1} << bucket_bits;  // a multiple of 64
  if (n <= 255) {
    ScatterByBucket<uint8_t, uint16_t, kPrefixSums8, kBucketNumbers16>(values, n, first, shift,
                                                                       num_buckets, out, scratch);
  } else {
    ScatterByBucket<uint32_t, uint32_t, kPrefixSums32, kBucketNumbers32>(values, n, first, shift,
                                                                         num_buckets, out, scratch);
  }
  // Values are grouped by bucket in order; sort within buckets.
  if (!InsertionSortNearlySorted(out, n)) std::sort(out, out + n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_X86_KERNELS 1

// kCompress4[mask] lists, as pairs of 32-bit lanes, the 64-bit lanes set in
// the 4-bit mask, in order: the permutation that packs them to the front.
constexpr std::array<std::array<int32_t, 8>, 16> MakeCompress4() {
  std::array<std::array<int32_t, 8>, 16> table{};
  for (int mask = 0; mask < 16; ++mask) {
    int n = 0;
    for (int lane = 0; lane < 4; ++lane) {
      if ((mask >> lane) & 1) {
        table[mask][2 * n] = 2 * lane;
        table[mask][2 * n + 1] = 2 * lane + 1;
        ++n;
      }
    }
  }
  return table;
}
alignas(32) constexpr std::array<std::array<int32_t, 8>, 16> kCompress4 = MakeCompress4();

__attribute__((target("avx2,popcnt"))) size_t FilterInRangeAvx2(const uint64_t* values,
                                                                size_t count, uint64_t first,
                                                                uint64_t last, uint64_t* out) {
  // AVX2 compares signed: flipping the sign bits of both sides makes it
  // unsigned.
  const __m256i sign = _mm256_set1_epi64x(static_cast<int64_t>(0x8000000000000000ULL));
  const uint64_t width = last - first;
  const __m256i base = _mm256_set1_epi64x(static_cast<int64_t>(first));
  const __m256i bound = _mm256_xor_si256(_mm256_set1_epi64x(static_cast<int64_t>(width)), sign);
  size_t n = 0;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + i));
    const __m256i offset = _mm256_sub_epi64(v, base);
    const __m256i over = _mm256_cmpgt_epi64(_mm256_xor_si256(offset, sign), bound);
    const unsigned keep =
        ~static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(over))) & 15;
    const __m256i perm =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress4[keep].data()));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + n), _mm256_permutevar8x32_epi32(v, perm));
    n += static_cast<size_t>(__builtin_popcount(keep));
  }
  for (; i < count; ++i) {
    out[n] = values[i];
    n += values[i] - first <= width;
  }
  return n;
}

#define NEARDUP_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,popcnt")))

NEARDUP_AVX512_TARGET size_t FilterInRangeAvx512(const uint64_t* values, size_t count,
                                                 uint64_t first, uint64_t last, uint64_t* out) {
  if (first == 0 && last == UINT64_MAX) {
    // Every value passes (a document's features until k are held): a copy,
    // with no compare and no chain of output counts (3% on BM_BottomKAddMany
    // of 100 and 1000 features).
    std::copy(values, values + count, out);
    return count;
  }
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(first));
  const __m512i bound = _mm512_set1_epi64(static_cast<long long>(last - first));
  // Compressed in registers and stored whole (out has kFilterSlack spare
  // values): vpcompressq to memory is microcoded on Intel cores.
  size_t n = 0;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m512i v = _mm512_loadu_si512(values + i);
    const __mmask8 keep = _mm512_cmple_epu64_mask(_mm512_sub_epi64(v, base), bound);
    _mm512_storeu_si512(out + n, _mm512_maskz_compress_epi64(keep, v));
    n += static_cast<size_t>(__builtin_popcount(keep));
  }
  if (i < count) {
    const __mmask8 lanes = static_cast<__mmask8>((1u << (count - i)) - 1);
    const __m512i v = _mm512_maskz_loadu_epi64(lanes, values + i);
    const __mmask8 keep = _mm512_mask_cmple_epu64_mask(lanes, _mm512_sub_epi64(v, base), bound);
    _mm512_storeu_si512(out + n, _mm512_maskz_compress_epi64(keep, v));
    n += static_cast<size_t>(__builtin_popcount(keep));
  }
  return n;
}

// UniquePortable eight values per step: a value is kept iff it differs from
// the one before it (an overlapping load), the kept ones packed with
// vpcompressq and stored as a whole vector (out has kUniqueSlack of room).
// The loop-carried chain is the output count (a popcount and an add per
// eight values) instead of one add per value.
NEARDUP_AVX512_TARGET size_t UniqueAvx512(const uint64_t* values, size_t count, uint64_t* out,
                                          size_t room) {
  if (count == 0) return 0;
  out[0] = values[0];
  size_t m = 1;
  size_t i = 1;
  for (; i + 8 <= count && m < room; i += 8) {
    const __m512i v = _mm512_loadu_si512(values + i);
    const __mmask8 keep = _mm512_cmpneq_epu64_mask(v, _mm512_loadu_si512(values + i - 1));
    _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi64(keep, v));
    m += static_cast<size_t>(__builtin_popcount(keep));
  }
  uint64_t previous = values[i - 1];
  for (; i < count && m < room; ++i) {
    const uint64_t v = values[i];
    out[m] = v;
    m += v != previous;
    previous = v;
  }
  return std::min(m, room);
}

NEARDUP_INTRINSICS_WARNINGS_OFF
// PrefixSumsPortable 16 counts per vector: log-step shifted adds within the
// vector, plus the running total of the vectors before. REQUIRES: num is a
// multiple of 16.
NEARDUP_AVX512_TARGET void PrefixSumsAvx512(uint32_t* counts, size_t num) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i last = _mm512_set1_epi32(15);
  __m512i carry = zero;
  for (size_t b = 0; b < num; b += 16) {
    __m512i x = _mm512_loadu_si512(counts + b);
    // alignr(x, 0, 16 - s) moves lane i - s to lane i, zeros below s.
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 15));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 14));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 12));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 8));
    x = _mm512_add_epi32(x, carry);
    _mm512_storeu_si512(counts + b, x);
    carry = _mm512_permutexvar_epi32(last, x);
  }
}
// PrefixSumsPortable of byte counts, 64 per vector: log-step byte shifts
// within each 128-bit lane, then the totals of the lanes below, then the
// running total of the vectors before. REQUIRES: num is a multiple of 64;
// every prefix sum is below 256 (the caller's counts add up to at most 255).
NEARDUP_AVX512_TARGET void PrefixSumsBytesAvx512(uint8_t* counts, size_t num) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i byte15 = _mm512_set1_epi8(15);
  __m512i carry = zero;
  for (size_t b = 0; b < num; b += 64) {
    __m512i x = _mm512_loadu_si512(counts + b);
    x = _mm512_add_epi8(x, _mm512_bslli_epi128(x, 1));
    x = _mm512_add_epi8(x, _mm512_bslli_epi128(x, 2));
    x = _mm512_add_epi8(x, _mm512_bslli_epi128(x, 4));
    x = _mm512_add_epi8(x, _mm512_bslli_epi128(x, 8));
    // Each 128-bit lane's total in all its bytes; then lane i gets the sum
    // of lanes 0..i-1 (alignr by 2 and 4 64-bit words: one and two lanes up).
    const __m512i totals = _mm512_shuffle_epi8(x, byte15);
    __m512i below = _mm512_alignr_epi64(totals, zero, 6);
    below = _mm512_add_epi8(below, _mm512_alignr_epi64(below, zero, 6));
    below = _mm512_add_epi8(below, _mm512_alignr_epi64(below, zero, 4));
    x = _mm512_add_epi8(_mm512_add_epi8(x, below), carry);
    _mm512_storeu_si512(counts + b, x);
    // The last byte, in every byte.
    carry =
        _mm512_shuffle_i64x2(_mm512_shuffle_epi8(x, byte15), _mm512_shuffle_epi8(x, byte15), 0xff);
  }
}
// BucketNumbersPortable eight values per vector: subtract, shift, and
// narrow each 64-bit lane to the index width (vpmovqw / vpmovqd, which
// truncate: every bucket number fits); the tail under a mask. The portable
// template compiled for the baseline ISA (SSE2, two values per vector, the
// narrowing by shuffles) took ~1% of `fingerprint --minhash` (session 15).
template <typename Index>
NEARDUP_AVX512_TARGET void BucketNumbersAvx512(const uint64_t* values, size_t n, uint64_t first,
                                               int shift, Index* bucket) {
  static_assert(sizeof(Index) == 2 || sizeof(Index) == 4);
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(first));
  const __m128i count = _mm_cvtsi32_si128(shift);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i v = _mm512_loadu_si512(values + i);
    const __m512i b = _mm512_srl_epi64(_mm512_sub_epi64(v, base), count);
    if constexpr (sizeof(Index) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bucket + i), _mm512_cvtepi64_epi16(b));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(bucket + i), _mm512_cvtepi64_epi32(b));
    }
  }
  if (i < n) {
    const __mmask8 lanes = static_cast<__mmask8>((1u << (n - i)) - 1);
    const __m512i v = _mm512_maskz_loadu_epi64(lanes, values + i);
    const __m512i b = _mm512_srl_epi64(_mm512_sub_epi64(v, base), count);
    if constexpr (sizeof(Index) == 2) {
      _mm512_mask_cvtepi64_storeu_epi16(bucket + i, lanes, b);
    } else {
      _mm512_mask_cvtepi64_storeu_epi32(bucket + i, lanes, b);
    }
  }
}
// Up to eight values of p[0, n) from `at` on, the lanes past n set to
// UINT64_MAX (above or equal to every value, so they sort last). An input
// read to its end (at >= n) gives all UINT64_MAX without forming p + at,
// which may lie past one beyond its end.
NEARDUP_AVX512_TARGET inline __m512i LoadEightOrMax(const uint64_t* p, size_t n, size_t at) {
  const __m512i max = _mm512_set1_epi64(-1);
  if (at + 8 <= n) return _mm512_loadu_si512(p + at);
  if (at >= n) return max;
  const size_t left = n - at;
  const __mmask8 lanes = static_cast<__mmask8>((1u << left) - 1);
  return _mm512_mask_loadu_epi64(max, lanes, p + at);
}

// Sorts the bitonic eight lanes of v ascending: compare-exchange lanes i and
// i ^ 4, then i ^ 2, then i ^ 1 (the lower lane of each pair takes the min).
NEARDUP_AVX512_TARGET inline __m512i SortBitonicEight(__m512i v) {
  const __m512i swap4 = _mm512_set_epi64(3, 2, 1, 0, 7, 6, 5, 4);
  const __m512i swap2 = _mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2);
  const __m512i swap1 = _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1);
  __m512i p = _mm512_permutexvar_epi64(swap4, v);
  v = _mm512_mask_blend_epi64(0xF0, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
  p = _mm512_permutexvar_epi64(swap2, v);
  v = _mm512_mask_blend_epi64(0xCC, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
  p = _mm512_permutexvar_epi64(swap1, v);
  v = _mm512_mask_blend_epi64(0xAA, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
  return v;
}

// MergeUniquePortable eight values per step: the running vector of the
// eight largest values so far and the next eight of the input whose next
// value is smaller (either way every value still to come is at least that
// value) form a bitonic sequence once one is reversed; its lower half,
// sorted, is the next eight of the merge. Those are written as UniqueAvx512
// writes (kept where they differ from the value before, packed,
// stored whole). Inputs are read eight at a time with the lanes past their
// end at UINT64_MAX, and only the first na + nb merged values are used, so
// a real UINT64_MAX and a padding lane (equal) are never told apart.
NEARDUP_AVX512_TARGET size_t MergeUniqueAvx512(const uint64_t* a, size_t na, const uint64_t* b,
                                               size_t nb, uint64_t* out, size_t room) {
  const size_t total = na + nb;
  if (total == 0) return 0;
  const __m512i reverse = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i last_lane = _mm512_set1_epi64(7);
  __m512i high = LoadEightOrMax(a, na, 0);
  __m512i next = LoadEightOrMax(b, nb, 0);
  size_t ia = 8;
  size_t ib = 8;
  // The value before the first: any value other than the first.
  const uint64_t first = nb == 0 || (na > 0 && a[0] <= b[0]) ? a[0] : b[0];
  __m512i previous = _mm512_set1_epi64(static_cast<long long>(first - 1));
  size_t merged = 0;
  size_t m = 0;
  while (true) {
    const __m512i flipped = _mm512_permutexvar_epi64(reverse, next);
    const __m512i low = SortBitonicEight(_mm512_min_epu64(high, flipped));
    high = SortBitonicEight(_mm512_max_epu64(high, flipped));
    const size_t valid = std::min<size_t>(8, total - merged);
    const __mmask8 lanes = static_cast<__mmask8>((1u << valid) - 1);
    const __m512i before = _mm512_alignr_epi64(low, previous, 7);
    const __mmask8 keep = _mm512_mask_cmpneq_epu64_mask(lanes, low, before);
    _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi64(keep, low));
    m += static_cast<size_t>(__builtin_popcount(keep));
    merged += valid;
    if (merged == total || m >= room) break;
    previous = _mm512_permutexvar_epi64(last_lane, low);
    if (ia < na && (ib >= nb || a[ia] <= b[ib])) {
      next = LoadEightOrMax(a, na, ia);
      ia += 8;
    } else {
      // b's next eight, or (both inputs read) lanes of UINT64_MAX, which
      // leave high's values for the next step.
      next = LoadEightOrMax(b, nb, ib);
      ib += 8;
    }
  }
  return std::min(m, room);
}
NEARDUP_INTRINSICS_WARNINGS_ON

#endif

}  // namespace

size_t SortScratchSize(size_t count) {
  // BucketSort: up to 4 * count + 1 32-bit offsets, then count 32-bit
  // bucket indices.
  return 3 * count + 8;
}

std::vector<BottomKKernel> BottomKKernelsFor(const CpuFeatures& f) {
  // The portable bucket sort: the portable and avx2 rows share it.
  constexpr auto kSortPortable =
      &BucketSort<PrefixSumsPortable<uint32_t>, PrefixSumsPortable<uint8_t>,
                  BucketNumbersPortable<uint16_t>, BucketNumbersPortable<uint32_t>>;
  std::vector<BottomKKernel> kernels = {
      {"portable", &FilterInRangePortable, kSortPortable, &UniquePortable, &MergeUniquePortable}};
#ifdef NEARDUP_HAVE_X86_KERNELS
  if (f.avx2 && f.popcnt) {
    kernels.push_back(
        {"avx2", &FilterInRangeAvx2, kSortPortable, &UniquePortable, &MergeUniquePortable});
  }
  if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.popcnt) {
    kernels.push_back({"avx512", &FilterInRangeAvx512,
                       &BucketSort<PrefixSumsAvx512, PrefixSumsBytesAvx512,
                                   BucketNumbersAvx512<uint16_t>, BucketNumbersAvx512<uint32_t>>,
                       &UniqueAvx512, &MergeUniqueAvx512});
  }
#else
  (void)f;
#endif
  return kernels;
}

std::vector<BottomKKernel> SupportedBottomKKernels() {
  return BottomKKernelsFor(HostCpuFeatures());
}

BottomKKernel BottomKKernelFor(const CpuFeatures& features) {
  return BottomKKernelsFor(features).back();
}

}  // namespace neardup::internal
