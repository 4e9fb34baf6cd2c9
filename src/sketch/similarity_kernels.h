// Kernels behind JaccardAtLeast (src/sketch/similarity.cc): an exact cheap
// upper bound on the bottom-k match count that rejects unrelated pairs
// without a merge walk, and a merge walk split in two independent halves so
// the two latency chains overlap. docs/JACCARD_KERNEL.md has the argument
// and the figures. Every function here is pure; results are identical on
// every path (the SIMD kernel is tested against the scalar one).
#ifndef NEARDUP_SKETCH_SIMILARITY_KERNELS_H_
#define NEARDUP_SKETCH_SIMILARITY_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace neardup {
struct BottomKSketch;
struct BottomKSummary;
}  // namespace neardup

namespace neardup::internal {

struct CpuFeatures;

// What the prefix filter learns about two sketch prefixes of `prefix`
// values: `probe` is the side whose last prefix value is the cut
// c = probe[prefix - 1] (so probe[prefix - 1] <= build[prefix - 1]).
struct PrefixCounts {
  // |{x in build[0, prefix) : x <= c}|, exactly.
  size_t build_below_cut;
  // An upper bound on |probe[0, prefix) ∩ build[0, prefix)|: the probe
  // values whose low 8 bits occur among the low 8 bits of build[0, prefix)
  // (a 256-bit bitmap; a value of A can only be in B if its bucket is).
  size_t maybe_common;
};

// The number of low bits that name a bucket of the prefix bitmap.
inline constexpr int kPrefixBucketBits = 8;
// The largest prefix the kernels take.
inline constexpr size_t kMaxPrefix = 64;

// REQUIRES: 0 < prefix <= kMaxPrefix, prefix % 8 == 0, both arrays hold at
// least `prefix` strictly ascending values, probe[prefix-1] <= build[prefix-1].
PrefixCounts PrefixFilterScalar(const uint64_t* probe, const uint64_t* build, size_t prefix);
#if defined(__x86_64__)
// Same result as PrefixFilterScalar. REQUIRES: the CPU has AVX-512F/BW/VL.
PrefixCounts PrefixFilterAvx512(const uint64_t* probe, const uint64_t* build, size_t prefix);
#endif

// |{x in values[0, n) : x <= bound}| of a strictly ascending array, by a
// branch-free binary search.
size_t CountAtMost(const uint64_t* values, size_t n, uint64_t bound);

using PrefixFilterFn = PrefixCounts (*)(const uint64_t*, const uint64_t*, size_t);
// The fastest kernel whose features `features` has (AVX-512 F/BW/VL, else
// scalar); the kernel table of a CPU path (sketch/sketch_kernels.h) holds
// PrefixFilterFor(FeaturesAt(path)).
PrefixFilterFn PrefixFilterFor(const CpuFeatures& features);

// Walks the min(limit, |A ∪ B|) smallest elements of the union of two
// strictly ascending arrays.
struct WalkCount {
  size_t steps;    // union elements walked
  size_t matches;  // of those, present in both
};

// The reference: one branch-free merge walk.
WalkCount MergeWalkReference(const uint64_t* a, size_t na, const uint64_t* b, size_t nb,
                             size_t limit);

// The same result as MergeWalkReference, computed as two independent walks
// (values up to a cut, values above it) interleaved in one loop, so each
// step's load-compare-advance latency overlaps the other walk's.
// REQUIRES: limit <= 4096 (the second walk's match history lives on the
// stack).
WalkCount MergeWalkSplit(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t limit);

inline constexpr size_t kMaxSplitLimit = 4096;

#if defined(__x86_64__)
// The same result as MergeWalkReference, by an AVX-512 block intersection
// that finds the common values with their indices and counts those whose
// union rank is below `limit`. REQUIRES: the CPU has AVX-512F/DQ and POPCNT.
WalkCount MergeWalkAvx512(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t limit);
#endif

using MergeWalkFn = WalkCount (*)(const uint64_t*, size_t, const uint64_t*, size_t, size_t);
// The fastest exact walk whose features `features` has (MergeWalkAvx512:
// AVX-512 F/DQ and POPCNT, else MergeWalkSplit). REQUIRES of the walk:
// limit <= kMaxSplitLimit.
MergeWalkFn MergeWalkFor(const CpuFeatures& features);
// MergeWalkSplit first, then the walks this CPU runs; for tests.
std::vector<MergeWalkFn> SupportedMergeWalks();

// EstimateJaccard / JaccardAtLeast of two bottom-k sketches without the
// public calls' check of equal k, for the batch calls that check it once.
// REQUIRES: a.k == b.k.
double EstimateJaccardSameK(const BottomKSketch& a, const BottomKSketch& b);
bool JaccardAtLeastSameK(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                         double* estimate);

// The kernels of the BottomKSummary test (src/sketch/similarity_summary.cc);
// every one gives the same results. kBest is the one the public calls use.
enum class SummaryKernel { kPortable, kPopcnt, kAvx512, kBest };
// kPortable, then those this CPU runs.
std::vector<SummaryKernel> SupportedSummaryKernels();
// The fastest of kPortable, kPopcnt (POPCNT), kAvx512 (AVX-512 F and
// VPOPCNTDQ) whose features `features` has; never kBest.
SummaryKernel SummaryKernelFor(const CpuFeatures& features);
// MaxCommonValues / JaccardAtLeastPairs through one kernel, for tests.
// REQUIRES: the CPU runs `kernel` (checked, abort).
size_t MaxCommonValuesWith(SummaryKernel kernel, const BottomKSummary& a, const BottomKSummary& b);
size_t JaccardAtLeastPairsWith(SummaryKernel kernel, std::span<const BottomKSketch* const> sketches,
                               std::span<const BottomKSummary> summaries,
                               std::span<const std::pair<uint64_t, uint64_t>> pairs,
                               double threshold, std::span<uint8_t> accepted,
                               std::span<double> estimates);

// The summary test's decision for a bound of `bound` common values when
// the larger side holds `most` > 0 values: the integer form the pairs call
// uses (a per-thread table of the fewest matches per size, or the division
// above its range). Equals !(Ratio(bound, most) >= threshold); for tests.
bool SummaryBoundRejects(size_t bound, size_t most, double threshold);

// The one place the bottom-k estimate is computed, so EstimateJaccard and
// every JaccardAtLeast path agree to the last bit. Correctly rounded, so
// monotone in `matches`: the kernels compare bounds through it exactly.
inline double Ratio(size_t matches, size_t steps) {
  return steps == 0 ? 0.0 : static_cast<double>(matches) / static_cast<double>(steps);
}

// JaccardAtLeast's result for an exact estimate `value`.
inline bool Report(double value, double threshold, double* estimate) {
  if (value >= threshold) {
    if (estimate != nullptr) *estimate = value;
    return true;
  }
  return false;
}

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_SIMILARITY_KERNELS_H_
