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
// JaccardAtLeastBatch prefetches ahead. The k-value estimator is O(k); set
// functions O(|A| + |B|). No allocation.
// Thread safety: pure functions (JaccardAtLeast keeps a per-thread cache of
// the last threshold's match count; results never depend on it).
#ifndef NEARDUP_SIMILARITY_H_
#define NEARDUP_SIMILARITY_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "neardup/minhash.h"

namespace neardup {

// The bottom-k estimator of the Jaccard similarity (Broder 1997; Cohen &
// Kaplan 2007): of the k' = min(k, |A_s ∪ B_s|) smallest values of the union
// of the two sketches, the fraction present in both. These k' values are
// exactly the k' smallest hashes of A ∪ B, a uniform sample of it, so the
// estimate is unbiased, with standard error about sqrt(J(1 - J) / k). Not the
// Jaccard of the two sketch sets, which is biased low. When both documents
// have fewer than k distinct features it is their exact Jaccard.
// REQUIRES: a.k == b.k.
double EstimateJaccard(const BottomKSketch& a, const BottomKSketch& b);

// Returns exactly EstimateJaccard(a, b) >= threshold, stopping the merge as
// soon as the threshold can no longer be reached. When it returns true it
// sets *estimate (if not null) to EstimateJaccard(a, b); when it returns
// false *estimate is left unchanged. A NaN threshold gives false.
// REQUIRES: a.k == b.k.
bool JaccardAtLeast(const BottomKSketch& a, const BottomKSketch& b, double threshold,
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

// The one-permutation estimator: the fraction of positions with equal values.
// 0.0 if either sketch is empty (KValueSketch::empty).
// REQUIRES: a.values.size() == b.values.size().
double EstimateJaccard(const KValueSketch& a, const KValueSketch& b);

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
