// BottomKSummary: a one-cache-line bucket bitmap per bottom-k sketch, and the
// checks that reject a pair from the two summaries before any value is read
// (include/neardup/similarity.h, docs/JACCARD_KERNEL.md section 5).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "hash/cpu_features.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
NEARDUP_INTRINSICS_WARNINGS_OFF
#include <immintrin.h>
NEARDUP_INTRINSICS_WARNINGS_ON
#endif

#include "neardup/check.h"
#include "neardup/similarity.h"
#include "sketch/similarity_kernels.h"
#include "sketch/sketch_kernels.h"

namespace neardup {
namespace {

constexpr size_t kSummaryWords = kBottomKSummaryBuckets / 64;

// Multiply-shift of the low 32 bits: bottom-k values are the smallest of
// uniform hashes, so their high bits are mostly 0 and their low bits uniform.
size_t BucketOf(uint64_t value) {
  return static_cast<size_t>(((value & 0xFFFFFFFFu) * kBottomKSummaryBuckets) >> 32);
}

// popcount(a.buckets & b.buckets) + min(a.excess, b.excess). Always inlined
// into its callers, so each caller's target (baseline or +popcnt) decides the
// instruction __builtin_popcountll becomes.
__attribute__((always_inline)) inline size_t MaxCommonInline(const BottomKSummary& a,
                                                             const BottomKSummary& b) {
  size_t shared = 0;
  for (size_t w = 0; w < kSummaryWords; ++w) {
    shared += static_cast<size_t>(__builtin_popcountll(a.buckets[w] & b.buckets[w]));
  }
  return shared + std::min(a.excess, b.excess);
}

// True when the summaries prove EstimateJaccard < threshold. The estimate
// is at most |A ∩ B| / M with M = max(|A|, |B|), and |A ∩ B| is at most
// min(|A|, |B|) and at most MaxCommonValues. Ratio(m, M) is correctly
// rounded, hence monotone in m, so comparing the bound's ratio with the
// threshold is exact; a NaN threshold compares false and rejects, as the
// one-pair call does. REQUIRES: max(|A|, |B|) > 0.
//
// In the pairs call the comparison is an integer one: for M <=
// kMaxTabulated the pair is rejected iff bound < needed[M], where needed[M]
// is the fewest matches m with Ratio(m, M) >= threshold (M + 1 when there is
// none: a NaN threshold or one above 1). Since Ratio is monotone in m this
// is the same decision, without a conversion and a division on every
// pair's path (and a mispredicted survivor branch resolves that much
// sooner). Larger M (k above kMaxTabulated) takes the division.
constexpr size_t kMaxTabulated = 256;

uint32_t FewestMatches(double threshold, size_t most) {
  if (threshold <= 0.0) return 0;
  if (!(threshold <= 1.0)) return static_cast<uint32_t>(most + 1);  // above 1, or NaN
  auto m = static_cast<size_t>(std::ceil(threshold * static_cast<double>(most)));
  m = std::min(m, most + 1);
  // Correct the rounding of threshold * most so the table agrees with Ratio.
  while (m > 0 && internal::Ratio(m - 1, most) >= threshold) --m;
  while (m <= most && internal::Ratio(m, most) < threshold) ++m;
  return static_cast<uint32_t>(m);
}

// needed[0, kMaxTabulated] for `threshold`, kept per thread for the last
// threshold seen: verification calls the pairs API many times (a block of
// candidates at a time) at one threshold, and the table costs several
// hundred divisions. Results never depend on the cache.
const uint32_t* NeededTable(double threshold) {
  struct Table {
    uint64_t threshold_bits = 0;
    bool valid = false;
    uint32_t needed[kMaxTabulated + 1] = {};
  };
  thread_local Table table;
  const auto bits = std::bit_cast<uint64_t>(threshold);
  if (!table.valid || table.threshold_bits != bits) {
    for (size_t most = 0; most <= kMaxTabulated; ++most) {
      table.needed[most] = FewestMatches(threshold, most);
    }
    table.threshold_bits = bits;
    table.valid = true;
  }
  return table.needed;
}

// True when at most `bound` common values, with `most` > 0 values on the
// larger side, cannot reach the threshold. `needed` is NeededTable(threshold).
__attribute__((always_inline)) inline bool BoundRejects(size_t bound, size_t most,
                                                        const uint32_t* needed, double threshold) {
  return most <= kMaxTabulated ? bound < needed[most]
                               : !(internal::Ratio(bound, most) >= threshold);
}

__attribute__((always_inline)) inline bool SummariesReject(const BottomKSummary& a,
                                                           const BottomKSummary& b,
                                                           const uint32_t* needed,
                                                           double threshold) {
  const size_t most = std::max(a.size, b.size);
  const size_t bound = std::min<size_t>(std::min(a.size, b.size), MaxCommonInline(a, b));
  return BoundRejects(bound, most, needed, threshold);
}

// The pairs the summaries do not reject: their exact estimate by one split
// walk (it returns k' = min(k, |A ∪ B|) itself), or for k above the split
// walk's limit the one-pair call.
bool WalkPair(const BottomKSketch& a, const BottomKSketch& b, double threshold, double* estimate) {
  NEARDUP_CHECK(a.k == b.k) << "bottom-k sketches of different k (" << a.k << " and " << b.k << ")";
  if (a.values.empty() || b.values.empty()) return internal::Report(0.0, threshold, estimate);
  if (a.k > internal::kMaxSplitLimit) {
    return internal::JaccardAtLeastSameK(a, b, threshold, estimate);
  }
  static const internal::MergeWalkFn walk_fn = internal::ActiveSketchKernels().merge_walk;
  const internal::WalkCount walk =
      walk_fn(a.values.data(), a.values.size(), b.values.data(), b.values.size(), a.k);
  return internal::Report(internal::Ratio(walk.matches, walk.steps), threshold, estimate);
}

// Pairs are taken in blocks: the summary test for the whole block first,
// then the walks of its survivors. Big enough that the survivors of one
// block keep the prefetcher busy, small enough for the stack.
constexpr size_t kBlock = 256;
// Prefetch distance of the summary test, in pairs.
constexpr size_t kSummariesAhead = 16;
// Prefetch distance of the pairs themselves, in pairs (16 bytes each): a
// block is one 4 KB page of pairs, and the hardware streamer stops at page
// boundaries, so without it each block began with misses on its pairs.
constexpr size_t kPairsAhead = 256;
// Prefetch distance of the walks, in surviving pairs, into L1: 4 pairs of
// full k = 128 sketches are 8 KB, which L1 holds until their walks. Into L1
// rather than L2 (as before) measured 3-5% faster on the real sketches: the
// walk's loads then hit L1 instead of each taking a fill buffer for the
// L2-to-L1 fill, and the fill buffers are what the value prefetches wait
// for. Distances 2 to 8 measured within noise of each other.
constexpr size_t kWalksAhead = 4;

void PrefetchValues(const BottomKSketch& s) {
  const uint64_t* v = s.values.data();
  const size_t n = std::min<size_t>(s.values.size(), s.k);
  for (size_t i = 0; i < n; i += 8) __builtin_prefetch(v + i, 0, 3);
}

// One block's summary test: writes the survivors' positions (in the block)
// to `survivors`, sets accepted[] to 0 for the rejected ones, prefetches
// the survivors' sketch objects. Returns the number of survivors.
__attribute__((always_inline)) inline size_t FilterBlockInline(
    const BottomKSketch* const* sketches, const BottomKSummary* summaries,
    const std::pair<uint64_t, uint64_t>* pairs, size_t count, size_t num_pairs_after,
    const uint32_t* needed, double threshold, uint8_t* accepted, uint16_t* survivors) {
  size_t num_survivors = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i + kPairsAhead < count + num_pairs_after) __builtin_prefetch(&pairs[i + kPairsAhead]);
    if (i + kSummariesAhead < count + num_pairs_after) {
      __builtin_prefetch(&summaries[pairs[i + kSummariesAhead].first]);
      __builtin_prefetch(&summaries[pairs[i + kSummariesAhead].second]);
    }
    const BottomKSummary& a = summaries[pairs[i].first];
    const BottomKSummary& b = summaries[pairs[i].second];
    // Both empty: the estimate is 0, decided by the walk's empty rule.
    const bool reject = (a.size | b.size) != 0 && SummariesReject(a, b, needed, threshold);
    accepted[i] = 0;
    survivors[num_survivors] = static_cast<uint16_t>(i);
    num_survivors += static_cast<size_t>(!reject);
    if (!reject) {
      __builtin_prefetch(sketches[pairs[i].first]);
      __builtin_prefetch(sketches[pairs[i].second]);
    }
  }
  return num_survivors;
}

// REQUIRES (checked, abort): every index in `pairs` is below `num_sketches`.
void CheckIndices(std::span<const std::pair<uint64_t, uint64_t>> pairs, size_t num_sketches) {
  uint64_t largest = 0;
  for (const auto& [x, y] : pairs) largest = std::max(largest, std::max(x, y));
  if (pairs.empty() || largest < num_sketches) return;
  for (const auto& [x, y] : pairs) {
    NEARDUP_CHECK(x < num_sketches && y < num_sketches)
        << "JaccardAtLeastPairs: pair (" << x << ", " << y << ") indexes past " << num_sketches
        << " sketches";
  }
}

using FilterBlockFn = size_t (*)(const BottomKSketch* const*, const BottomKSummary*,
                                 const std::pair<uint64_t, uint64_t>*, size_t, size_t,
                                 const uint32_t*, double, uint8_t*, uint16_t*);

size_t FilterBlockPortable(const BottomKSketch* const* sketches, const BottomKSummary* summaries,
                           const std::pair<uint64_t, uint64_t>* pairs, size_t count,
                           size_t num_pairs_after, const uint32_t* needed, double threshold,
                           uint8_t* accepted, uint16_t* survivors) {
  return FilterBlockInline(sketches, summaries, pairs, count, num_pairs_after, needed, threshold,
                           accepted, survivors);
}

size_t MaxCommonPortable(const BottomKSummary& a, const BottomKSummary& b) {
  return MaxCommonInline(a, b);
}

#if defined(__x86_64__)
__attribute__((target("popcnt"))) size_t FilterBlockPopcnt(
    const BottomKSketch* const* sketches, const BottomKSummary* summaries,
    const std::pair<uint64_t, uint64_t>* pairs, size_t count, size_t num_pairs_after,
    const uint32_t* needed, double threshold, uint8_t* accepted, uint16_t* survivors) {
  return FilterBlockInline(sketches, summaries, pairs, count, num_pairs_after, needed, threshold,
                           accepted, survivors);
}

__attribute__((target("popcnt"))) size_t MaxCommonPopcnt(const BottomKSummary& a,
                                                         const BottomKSummary& b) {
  return MaxCommonInline(a, b);
}

bool HasPopcnt() { return internal::HostCpuFeatures().popcnt; }

bool HasAvx512Popcnt() {
  const internal::CpuFeatures& f = internal::HostCpuFeatures();
  return f.avx512f && f.avx512vpopcntdq;
}

// FilterBlockInline with the bucket bound from one AND and one VPOPCNTQ over
// the summaries' cache lines (lane 7, size and excess, masked off): about
// half the instructions of seven scalar popcounts. The loop is repeated here
// rather than shared because GCC does not inline target-specific intrinsics
// into a helper compiled without that target.
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) size_t FilterBlockAvx512(
    const BottomKSketch* const* sketches, const BottomKSummary* summaries,
    const std::pair<uint64_t, uint64_t>* pairs, size_t count, size_t num_pairs_after,
    const uint32_t* needed, double threshold, uint8_t* accepted, uint16_t* survivors) {
  size_t num_survivors = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i + kPairsAhead < count + num_pairs_after) __builtin_prefetch(&pairs[i + kPairsAhead]);
    if (i + kSummariesAhead < count + num_pairs_after) {
      __builtin_prefetch(&summaries[pairs[i + kSummariesAhead].first]);
      __builtin_prefetch(&summaries[pairs[i + kSummariesAhead].second]);
    }
    const BottomKSummary& a = summaries[pairs[i].first];
    const BottomKSummary& b = summaries[pairs[i].second];
    const __m512i both = _mm512_and_si512(_mm512_load_si512(&a), _mm512_load_si512(&b));
    const auto shared =
        static_cast<size_t>(_mm512_reduce_add_epi64(_mm512_maskz_popcnt_epi64(0x7F, both)));
    const size_t bound =
        std::min<size_t>(std::min(a.size, b.size), shared + std::min(a.excess, b.excess));
    const size_t most = std::max(a.size, b.size);
    const bool reject = most != 0 && BoundRejects(bound, most, needed, threshold);
    accepted[i] = 0;
    survivors[num_survivors] = static_cast<uint16_t>(i);
    num_survivors += static_cast<size_t>(!reject);
    if (!reject) {
      __builtin_prefetch(sketches[pairs[i].first]);
      __builtin_prefetch(sketches[pairs[i].second]);
    }
  }
  return num_survivors;
}

__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) size_t MaxCommonAvx512(
    const BottomKSummary& a, const BottomKSummary& b) {
  const __m512i both = _mm512_and_si512(_mm512_load_si512(&a), _mm512_load_si512(&b));
  return static_cast<size_t>(_mm512_reduce_add_epi64(_mm512_maskz_popcnt_epi64(0x7F, both))) +
         std::min(a.excess, b.excess);
}
#endif

using MaxCommonFn = size_t (*)(const BottomKSummary&, const BottomKSummary&);

// The summary kernels of one instruction set, chosen together.
struct SummaryFns {
  FilterBlockFn filter_block;
  MaxCommonFn max_common;
};

SummaryFns SummaryFnsFor(internal::SummaryKernel kernel);

// The kernels of the CPU path's table (sketch/sketch_kernels.h), resolved on
// first use.
const SummaryFns& BestSummaryFns() {
  static const SummaryFns best = SummaryFnsFor(internal::ActiveSketchKernels().summary);
  return best;
}

SummaryFns SummaryFnsFor(internal::SummaryKernel kernel) {
  switch (kernel) {
    case internal::SummaryKernel::kPortable:
      return {&FilterBlockPortable, &MaxCommonPortable};
#if defined(__x86_64__)
    case internal::SummaryKernel::kPopcnt:
      NEARDUP_CHECK(HasPopcnt()) << "this CPU has no POPCNT";
      return {&FilterBlockPopcnt, &MaxCommonPopcnt};
    case internal::SummaryKernel::kAvx512:
      NEARDUP_CHECK(HasAvx512Popcnt()) << "this CPU has no AVX-512 VPOPCNTDQ";
      return {&FilterBlockAvx512, &MaxCommonAvx512};
#endif
    default:
      return BestSummaryFns();
  }
}

}  // namespace

namespace internal {

std::vector<SummaryKernel> SupportedSummaryKernels() {
  std::vector<SummaryKernel> kernels = {SummaryKernel::kPortable};
#if defined(__x86_64__)
  if (HasPopcnt()) kernels.push_back(SummaryKernel::kPopcnt);
  if (HasAvx512Popcnt()) kernels.push_back(SummaryKernel::kAvx512);
#endif
  return kernels;
}

bool SummaryBoundRejects(size_t bound, size_t most, double threshold) {
  return BoundRejects(bound, most, NeededTable(threshold), threshold);
}

size_t MaxCommonValuesWith(SummaryKernel kernel, const BottomKSummary& a, const BottomKSummary& b) {
  return SummaryFnsFor(kernel).max_common(a, b);
}

SummaryKernel SummaryKernelFor(const CpuFeatures& f) {
#if defined(__x86_64__)
  if (f.avx512f && f.avx512vpopcntdq) return SummaryKernel::kAvx512;
  if (f.popcnt) return SummaryKernel::kPopcnt;
#else
  (void)f;
#endif
  return SummaryKernel::kPortable;
}

}  // namespace internal

BottomKSummary SummarizeBottomK(const BottomKSketch& sketch) {
  NEARDUP_CHECK(sketch.values.size() <= std::numeric_limits<uint32_t>::max())
      << "bottom-k sketch of " << sketch.values.size() << " values; at most 2^32 - 1";
  BottomKSummary summary;
  for (uint64_t value : sketch.values) {
    const size_t bucket = BucketOf(value);
    summary.buckets[bucket / 64] |= uint64_t{1} << (bucket % 64);
  }
  size_t occupied = 0;
  for (uint64_t word : summary.buckets) occupied += static_cast<size_t>(__builtin_popcountll(word));
  summary.size = static_cast<uint32_t>(sketch.values.size());
  summary.excess = static_cast<uint32_t>(sketch.values.size() - occupied);
  return summary;
}

size_t MaxCommonValues(const BottomKSummary& a, const BottomKSummary& b) {
  return BestSummaryFns().max_common(a, b);
}

Result<bool> JaccardAtLeast(const BottomKSketch& a, const BottomKSummary& summary_a,
                            const BottomKSketch& b, const BottomKSummary& summary_b,
                            double threshold, double* estimate) {
  if (a.k != b.k) {
    return InvalidArgumentError("bottom-k sketches of different k (" + std::to_string(a.k) +
                                " and " + std::to_string(b.k) + ")");
  }
  if ((summary_a.size | summary_b.size) != 0) {
    const size_t most = std::max(summary_a.size, summary_b.size);
    const size_t bound = std::min<size_t>(std::min(summary_a.size, summary_b.size),
                                          MaxCommonValues(summary_a, summary_b));
    if (!(internal::Ratio(bound, most) >= threshold)) return false;
  }
  return WalkPair(a, b, threshold, estimate);
}

size_t JaccardAtLeastPairs(std::span<const BottomKSketch* const> sketches,
                           std::span<const BottomKSummary> summaries,
                           std::span<const std::pair<uint64_t, uint64_t>> pairs, double threshold,
                           std::span<uint8_t> accepted, std::span<double> estimates) {
  return internal::JaccardAtLeastPairsWith(internal::SummaryKernel::kBest, sketches, summaries,
                                           pairs, threshold, accepted, estimates);
}

namespace internal {

size_t JaccardAtLeastPairsWith(SummaryKernel kernel, std::span<const BottomKSketch* const> sketches,
                               std::span<const BottomKSummary> summaries,
                               std::span<const std::pair<uint64_t, uint64_t>> pairs,
                               double threshold, std::span<uint8_t> accepted,
                               std::span<double> estimates) {
  const size_t n = pairs.size();
  NEARDUP_CHECK(summaries.size() == sketches.size())
      << "JaccardAtLeastPairs: " << summaries.size() << " summaries for " << sketches.size()
      << " sketches";
  NEARDUP_CHECK(accepted.size() == n) << "JaccardAtLeastPairs: accepted size (" << accepted.size()
                                      << ") differs from " << n << " pairs";
  NEARDUP_CHECK(estimates.empty() || estimates.size() == n)
      << "JaccardAtLeastPairs: estimates size (" << estimates.size() << ") is neither 0 nor " << n;
  const FilterBlockFn filter = SummaryFnsFor(kernel).filter_block;
  const uint32_t* needed = NeededTable(threshold);
  size_t count = 0;
  size_t checked = 0;  // pairs[0, checked) index inside `sketches`
  uint16_t survivors[kBlock];
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t block = std::min(kBlock, n - start);
    // The indices are checked a block at a time, just before the filter
    // reads them (and the pairs whose summaries it prefetches), rather than
    // in a pass of their own, which read all the pairs once more from memory.
    const size_t check_end = std::min(n, start + block + kSummariesAhead);
    CheckIndices(pairs.subspan(checked, check_end - checked), sketches.size());
    checked = check_end;
    const std::pair<uint64_t, uint64_t>* block_pairs = pairs.data() + start;
    const size_t num_survivors =
        filter(sketches.data(), summaries.data(), block_pairs, block, n - start - block, needed,
               threshold, accepted.data() + start, survivors);
    for (size_t s = 0; s < std::min(kWalksAhead, num_survivors); ++s) {
      PrefetchValues(*sketches[block_pairs[survivors[s]].first]);
      PrefetchValues(*sketches[block_pairs[survivors[s]].second]);
    }
    for (size_t s = 0; s < num_survivors; ++s) {
      if (s + kWalksAhead < num_survivors) {
        PrefetchValues(*sketches[block_pairs[survivors[s + kWalksAhead]].first]);
        PrefetchValues(*sketches[block_pairs[survivors[s + kWalksAhead]].second]);
      }
      const size_t i = survivors[s];
      double estimate = 0.0;
      const bool ok = WalkPair(*sketches[block_pairs[i].first], *sketches[block_pairs[i].second],
                               threshold, &estimate);
      accepted[start + i] = static_cast<uint8_t>(ok);
      if (ok && !estimates.empty()) estimates[start + i] = estimate;
      count += static_cast<size_t>(ok);
    }
  }
  return count;
}

}  // namespace internal

}  // namespace neardup
