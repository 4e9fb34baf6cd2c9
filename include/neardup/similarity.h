// Similarity of two sketches or sets: the verification step after candidate
// generation.
//
// Empty convention: any similarity involving an empty sketch or set is 0.0
// (an empty document has no features and is similar to nothing, not even to
// another empty document). No function returns NaN.
//
// Cost: the bottom-k functions are O(k). JaccardAtLeast first applies an
// exact upper bound on the matches from the two sketches' smallest values
// (AVX-512 where present), which rejects most unrelated pairs without a walk;
// the pairs it cannot reject take a two-way split merge walk
// (docs/JACCARD_KERNEL.md). Two sketches shorter than k are first rejected
// in O(1) when their sizes differ too much (J <= min/max). On large sketch
// sets the check is bound by memory (about 1 KB read per pair):
// JaccardAtLeastBatch prefetches ahead. With a BottomKSummary per sketch
// (64 bytes, computed once) most unrelated pairs are rejected from two cache
// lines, and JaccardAtLeastPairs overlaps the misses of many pairs. The k-value estimator is O(k);
// set functions O(|A| + |B|). No allocation. Thread safety: pure functions (JaccardAtLeast keeps a
// per-thread cache of the last threshold's match count, JaccardAtLeastPairs one of the last
// threshold's match counts per sketch size up to 256; results never depend on them).
#ifndef NEARDUP_SIMILARITY_H_
#define NEARDUP_SIMILARITY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "neardup/minhash.h"
#include "neardup/status.h"

namespace neardup {

// The bottom-k estimator of the Jaccard similarity (Broder 1997; Cohen &
// Kaplan 2007): of the k' = min(k, |A_s ∪ B_s|) smallest values of the union
// of the two sketches, the fraction present in both. These k' values are
// exactly the k' smallest hashes of A ∪ B, a uniform sample of it, so the
// estimate is unbiased, with standard error about sqrt(J(1 - J) / k). Not the
// Jaccard of the two sketch sets, which is biased low. When both documents
// have fewer than k distinct features it is their exact Jaccard.
// InvalidArgument when a.k != b.k (sketches of different recipes).
Result<double> EstimateJaccard(const BottomKSketch& a, const BottomKSketch& b);

// Returns exactly EstimateJaccard(a, b) >= threshold, stopping the merge as
// soon as the threshold can no longer be reached. When it returns true it
// sets *estimate (if not null) to EstimateJaccard(a, b); when it returns
// false *estimate is left unchanged. A NaN threshold gives false.
// InvalidArgument when a.k != b.k.
Result<bool> JaccardAtLeast(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                            double* estimate);

// JaccardAtLeast over many pairs: for each i, accepted[i] =
// JaccardAtLeast(*a[i], *b[i], threshold, ...) and, where accepted[i] is 1,
// estimates[i] = EstimateJaccard(*a[i], *b[i]) (other entries of estimates are
// left unchanged; an empty `estimates` is not written). Returns the number of
// accepted pairs. Same results as the one-pair call; faster on many pairs
// because the sketches of the pairs a few places ahead are prefetched while
// the current pair is decided, so their cache misses overlap its work.
// REQUIRES: a.size() == b.size() == accepted.size(), estimates empty or of
// the same size, a[i]->k == b[i]->k (all checked, abort).
size_t JaccardAtLeastBatch(std::span<const BottomKSketch* const> a,
                           std::span<const BottomKSketch* const> b, double threshold,
                           std::span<uint8_t> accepted, std::span<double> estimates);

// A 64-byte summary of a bottom-k sketch, computed once per sketch
// (SummarizeBottomK, O(n)) and kept beside it, that lets a pair be rejected
// from one cache line per sketch instead of about 1 KB of values. Each value
// falls in one of kBottomKSummaryBuckets buckets (multiply-shift of its low
// 32 bits); `buckets` marks the occupied ones. A value common to both
// sketches lies in a bucket occupied in both, so
//   |A ∩ B| <= popcount(a.buckets & b.buckets) + min(a.excess, b.excess)
// (each common bucket holds at most 1 + its extra values of one side, and a
// side's extra values total its `excess`). Since the estimate is at most
// |A ∩ B| / max(|A|, |B|) (the union's k' >= max(|A|, |B|)), this rejects
// exactly: no pair at or above the threshold is ever rejected. For k = 128,
// two unrelated full sketches give a bound of about 44 common values (the
// threshold 0.5 needs 64). docs/JACCARD_KERNEL.md has the argument and the
// figures. Not frozen: recompute it from the sketch, never store it on disk.
inline constexpr size_t kBottomKSummaryBuckets = 448;
struct alignas(64) BottomKSummary {
  // Bit (i % 64) of word i / 64 is set iff some value falls in bucket i.
  uint64_t buckets[kBottomKSummaryBuckets / 64] = {};
  // values.size() of the sketch.
  uint32_t size = 0;
  // size minus the number of occupied buckets (values sharing a bucket).
  uint32_t excess = 0;

  friend bool operator==(const BottomKSummary& a, const BottomKSummary& b) = default;
};
static_assert(sizeof(BottomKSummary) == 64);

// The summary of `sketch`. REQUIRES: sketch.values.size() <= UINT32_MAX
// (always true: it is at most sketch.k).
BottomKSummary SummarizeBottomK(const BottomKSketch& sketch);

// An upper bound on |A_s ∩ B_s| (the values the two sketches share), from
// the summaries alone. Exposed for tests and for callers that filter.
size_t MaxCommonValues(const BottomKSummary& a, const BottomKSummary& b);

// JaccardAtLeast(a, b, threshold, estimate), with the same result, that
// first rejects from the summaries (one cache line each) and only reads the
// values of a pair that passes; those are walked in full (no second filter:
// on typical data they are near-duplicates).
// InvalidArgument when a.k != b.k.
// REQUIRES: summary_a == SummarizeBottomK(a), summary_b == SummarizeBottomK(b).
Result<bool> JaccardAtLeast(const BottomKSketch& a, const BottomKSummary& summary_a,
                            const BottomKSketch& b, const BottomKSummary& summary_b,
                            double threshold, double* estimate);

// The pairs form of the summary check, for verifying many candidate pairs
// over one set of sketches: for each i with (x, y) = pairs[i],
// accepted[i] = JaccardAtLeast(*sketches[x], *sketches[y], threshold, ...),
// and where accepted, estimates[i] = EstimateJaccard(*sketches[x],
// *sketches[y]) (other entries left unchanged; an empty `estimates` is not
// written). Returns the number accepted. Runs in two stages per block of
// pairs: the summary test over the block (summaries prefetched ahead), then
// the walks of the pairs left, with their values prefetched ahead, so the
// cache misses of different pairs overlap.
// REQUIRES: summaries.size() == sketches.size(), summaries[i] ==
// SummarizeBottomK(*sketches[i]), every index in `pairs` below
// sketches.size(), accepted.size() == pairs.size(), estimates empty or of the
// same size (all but the summaries' contents checked, abort), and equal k in
// each pair (checked on the pairs the summaries cannot reject).
size_t JaccardAtLeastPairs(std::span<const BottomKSketch* const> sketches,
                           std::span<const BottomKSummary> summaries,
                           std::span<const std::pair<uint64_t, uint64_t>> pairs, double threshold,
                           std::span<uint8_t> accepted, std::span<double> estimates);

// The one-permutation estimator: the fraction of positions with equal values.
// 0.0 if either sketch is empty (KValueSketch::empty). InvalidArgument when
// a.values.size() != b.values.size().
Result<double> EstimateJaccard(const KValueSketch& a, const KValueSketch& b);

// |A ∩ B| of two sets. REQUIRES: both strictly ascending (as ChunkSetBuilder
// produces).
size_t IntersectionSize(std::span<const uint32_t> a, std::span<const uint32_t> b);

// |A ∩ B| / |A ∪ B|; 0.0 if either is empty. REQUIRES: strictly ascending.
double ExactJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b);

// |A ∩ B| / |A|: the fraction of A found in B; asymmetric. 0.0 if either is
// empty. REQUIRES: strictly ascending.
double Containment(std::span<const uint32_t> a, std::span<const uint32_t> b);

}  // namespace neardup

#endif  // NEARDUP_SIMILARITY_H_
