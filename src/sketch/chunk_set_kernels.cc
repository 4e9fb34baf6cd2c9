#include "sketch/chunk_set_kernels.h"

#include <algorithm>
#include <bit>
#include <cstddef>

#include "hash/cpu_features.h"
#include "util/insertion_sort.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace neardup::internal {
namespace {

// Documents of fewer IDs go to std::sort.
constexpr size_t kSmall = 64;
static_assert(kSmall > 0);

void SortUniqueSmall(std::vector<uint32_t>* ids) {
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
}

// Writes ids[0, n) to out grouped by bucket (top bits), buckets ascending,
// each in input order. 2^bits buckets, bits = min(bit_width(n), 20): 1-2
// buckets per ID while n < 2^20, so uniform IDs leave 0.5-1 per bucket; at
// most 2^20 + 1 counts (4 MiB, kept by the builder): a cache-sized table
// whatever the document's size. REQUIRES: n >= kSmall.
void ScatterByTopBits(const uint32_t* ids, size_t n, uint32_t* out, std::vector<uint32_t>* counts) {
  constexpr int kMaxBits = 20;
  // n < 2^bits unless capped (n >= 2^kMaxBits).
  const int bits = std::min<int>(std::bit_width(n), kMaxBits);
  const int shift = 32 - bits;  // in [12, 26) since n >= kSmall
  const size_t buckets = size_t{1} << bits;
  counts->assign(buckets + 1, 0);
  uint32_t* count = counts->data() + 1;
  for (size_t i = 0; i < n; ++i) ++count[ids[i] >> shift];
  uint32_t sum = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    const uint32_t c = (*counts)[b];
    (*counts)[b] = sum;
    sum += c;
  }
  // counts[b + 1] is now the first slot of bucket b: the scatter's cursor.
  uint32_t* cursor = counts->data() + 1;
  for (size_t i = 0; i < n; ++i) out[cursor[ids[i] >> shift]++] = ids[i];
}

// Past the bucket pass only distinct IDs of one bucket are out of order.
// Equal IDs (a repeated shingle) never move past each other. Past 2^20 IDs
// the buckets hold n / 2^20 IDs each and the insertion sort's cost grows as
// n^2 / 2^22; a crafted input (many distinct IDs in one bucket) or a huge
// document stops it after 8n moves and takes std::sort: O(n log n) at worst.
void SortUniquePortable(std::vector<uint32_t>* ids, std::vector<uint32_t>* scratch,
                        std::vector<uint32_t>* counts) {
  const size_t n = ids->size();
  if (n < kSmall) return SortUniqueSmall(ids);
  scratch->resize(n);
  uint32_t* out = scratch->data();
  ScatterByTopBits(ids->data(), n, out, counts);
  if (!InsertionSortWithBudget(out, n)) std::sort(out, out + n);
  // Unique without a branch per ID: write each, advance past it when it
  // differs from the one before.
  uint32_t* dst = ids->data();
  uint32_t previous = out[0];
  dst[0] = previous;
  size_t kept = 1;
  for (size_t i = 1; i < n; ++i) {
    const uint32_t id = out[i];
    dst[kept] = id;
    kept += id != previous ? 1 : 0;
    previous = id;
  }
  ids->resize(kept);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_X86_KERNELS 1
#define NEARDUP_AVX512_TARGET __attribute__((target("avx512f,popcnt")))

NEARDUP_INTRINSICS_WARNINGS_OFF
// The compare-exchange of the pairs of lanes (0, 1), (2, 3), ...: the
// smaller ID to the even lane.
NEARDUP_AVX512_TARGET inline __m512i CompareExchangeEvenPairs(__m512i v) {
  const __m512i swapped = _mm512_shuffle_epi32(v, _MM_PERM_CDAB);  // lanes 1, 0, 3, 2, ...
  return _mm512_mask_max_epu32(_mm512_min_epu32(v, swapped), 0xAAAA, v, swapped);
}

// One round of odd-even transposition on a[0, 16 * vectors): the
// compare-exchange of the pairs (2i, 2i + 1), then of (2i + 1, 2i + 2).
// One pass: the odd pairs are formed in registers from a vector and the next
// one (valignd), so each vector is loaded and stored once, at the same
// offsets, and the next round's loads are forwarded from these stores
// (loads at offset 1 from memory would straddle two stores and stall).
// REQUIRES: a[16 * vectors, 16 * vectors + 16) is readable and holds
// UINT32_MAX (which no compare-exchange moves below an ID).
NEARDUP_AVX512_TARGET void TranspositionRound(uint32_t* a, size_t vectors) {
  __m512i even = CompareExchangeEvenPairs(_mm512_loadu_si512(a));
  // Lane 15 of the previous vector's odd result goes to lane 0; a[0] has
  // no odd pair.
  __m512i odd_before = _mm512_broadcastd_epi32(_mm512_castsi512_si128(even));
  for (size_t j = 0; j < vectors; ++j) {
    const __m512i even_next = CompareExchangeEvenPairs(_mm512_loadu_si512(a + 16 * j + 16));
    // Lanes 16j + 1 .. 16j + 16: the odd pairs as even ones.
    const __m512i odd = CompareExchangeEvenPairs(_mm512_alignr_epi32(even_next, even, 1));
    _mm512_storeu_si512(a + 16 * j, _mm512_alignr_epi32(odd, odd_before, 15));
    even = even_next;
    odd_before = odd;
  }
}

// ScatterByTopBits with the bucket counts' prefix sums 16 per vector
// (log-step shifted adds within the vector, plus the running total of the
// vectors before): the counts are summed inclusively, so each holds its
// bucket's end, and the scatter runs backwards, decrementing them (the IDs
// of a bucket keep their input order). Same output as ScatterByTopBits.
NEARDUP_AVX512_TARGET void ScatterByTopBitsAvx512(const uint32_t* ids, size_t n, uint32_t* out,
                                                  std::vector<uint32_t>* counts) {
  constexpr int kMaxBits = 20;
  const int bits = std::min<int>(std::bit_width(n), kMaxBits);
  const int shift = 32 - bits;
  const size_t buckets = size_t{1} << bits;  // a multiple of 16: n >= kSmall
  counts->assign(buckets, 0);
  uint32_t* count = counts->data();
  for (size_t i = 0; i < n; ++i) ++count[ids[i] >> shift];
  const __m512i zero = _mm512_setzero_si512();
  const __m512i last = _mm512_set1_epi32(15);
  __m512i carry = zero;
  for (size_t b = 0; b < buckets; b += 16) {
    __m512i x = _mm512_loadu_si512(count + b);
    // alignr(x, 0, 16 - s) moves lane i - s to lane i, zeros below s.
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 15));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 14));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 12));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 8));
    x = _mm512_add_epi32(x, carry);
    _mm512_storeu_si512(count + b, x);
    carry = _mm512_permutexvar_epi32(last, x);
  }
  for (size_t i = n; i-- > 0;) out[--count[ids[i] >> shift]] = ids[i];
}

// Three rounds of odd-even transposition sort every bucket of up to six IDs
// (three rounds are six phases, and n phases sort n items: Knuth 5.3.4,
// exercise 37; compare-exchanges across a bucket boundary never swap);
// measured against one, two and four rounds on 500-3000 uniform IDs, with
// and without repeats.
constexpr int kTranspositionRounds = 3;

NEARDUP_AVX512_TARGET void SortUniqueAvx512(std::vector<uint32_t>* ids,
                                            std::vector<uint32_t>* scratch,
                                            std::vector<uint32_t>* counts) {
  const size_t n = ids->size();
  if (n < kSmall) return SortUniqueSmall(ids);
  const size_t vectors = (n + 15) / 16;
  // out = scratch + 16: out[-16, 16 * vectors + 16) is readable, and
  // out[n, 16 * vectors + 16) holds UINT32_MAX, which no compare-exchange
  // moves below an ID.
  scratch->resize(16 * vectors + 32);
  uint32_t* out = scratch->data() + 16;
  ScatterByTopBitsAvx512(ids->data(), n, out, counts);
  std::fill(out + n, out + 16 * vectors + 16, UINT32_MAX);
  for (int round = 0; round < kTranspositionRounds; ++round) TranspositionRound(out, vectors);
  // The order check. (After the last phase, on the odd pairs, the pair
  // across a vector boundary is in order, so only the even pairs could be
  // checked; the whole check is cheap.)
  __mmask16 disorder = 0;
  for (size_t j = 0; j < vectors; ++j) {
    const __m512i v = _mm512_loadu_si512(out + 16 * j);
    const __m512i before = _mm512_loadu_si512(out + 16 * j - 1);
    disorder |= _mm512_mask_cmpgt_epu32_mask(j == 0 ? 0xFFFE : 0xFFFF, before, v);
  }
  if (disorder != 0 && !InsertionSortWithBudget(out, n)) std::sort(out, out + n);
  // Unique: keep an ID iff it differs from the one before it.
  uint32_t* dst = ids->data();
  dst[0] = out[0];
  size_t kept = 1;
  for (size_t i = 1; i < n; i += 16) {
    const __mmask16 lanes =
        n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i v = _mm512_loadu_si512(out + i);
    const __mmask16 keep = _mm512_mask_cmpneq_epu32_mask(lanes, v, _mm512_loadu_si512(out + i - 1));
    // Compressed in a register and stored with a mask of the kept lanes
    // (vpcompressd to memory is microcoded on Intel cores; a masked store is
    // not, and its masked-off lanes are neither written nor fault): the
    // stores end at the last kept ID, inside ids[0, n).
    const int count = __builtin_popcount(keep);
    _mm512_mask_storeu_epi32(dst + kept, static_cast<__mmask16>((1u << count) - 1),
                             _mm512_maskz_compress_epi32(keep, v));
    kept += static_cast<size_t>(count);
  }
  ids->resize(kept);
}
NEARDUP_INTRINSICS_WARNINGS_ON

#endif

}  // namespace

std::vector<ChunkSetKernel> ChunkSetKernelsFor(const CpuFeatures& f) {
  std::vector<ChunkSetKernel> kernels = {{"portable", &SortUniquePortable}};
#ifdef NEARDUP_HAVE_X86_KERNELS
  if (f.avx512f && f.popcnt) kernels.push_back({"avx512", &SortUniqueAvx512});
#else
  (void)f;
#endif
  return kernels;
}

std::vector<ChunkSetKernel> SupportedChunkSetKernels() {
  return ChunkSetKernelsFor(HostCpuFeatures());
}

ChunkSetKernel ChunkSetKernelFor(const CpuFeatures& features) {
  return ChunkSetKernelsFor(features).back();
}

}  // namespace neardup::internal
