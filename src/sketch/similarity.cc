#include "neardup/similarity.h"

#include <algorithm>
#include <cmath>

#include "neardup/check.h"

namespace neardup {
namespace {

// One step of the merge walk of two ascending arrays, without branches:
// consumes the smaller head (both when equal) and counts an equal pair.
// A macro, not a function, so the 8-step blocks below stay one straight line
// of code whatever the inliner decides.
#define NEARDUP_MERGE_STEP(a, b)            \
  do {                                      \
    const uint64_t x = (a)[i];              \
    const uint64_t y = (b)[j];              \
    matches += static_cast<size_t>(x == y); \
    i += static_cast<size_t>(x <= y);       \
    j += static_cast<size_t>(y <= x);       \
  } while (false)

struct Walk {
  size_t steps;    // k': union elements walked
  size_t matches;  // of those, present in both
};

// Walks the k' = min(limit, |A ∪ B|) smallest elements of the union of two
// strictly ascending arrays.
Walk MergeWalk(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t limit) {
  size_t i = 0;
  size_t j = 0;
  size_t steps = 0;
  size_t matches = 0;
  while (i < na && j < nb && steps < limit) {
    NEARDUP_MERGE_STEP(a, b);
    ++steps;
  }
  // Once one side is exhausted the rest of the union holds no common element.
  steps = std::min(limit, steps + (na - i) + (nb - j));
  return Walk{steps, matches};
}

// The one place the estimate is computed, so EstimateJaccard and
// JaccardAtLeast agree to the last bit.
double Ratio(size_t matches, size_t steps) {
  return steps == 0 ? 0.0 : static_cast<double>(matches) / static_cast<double>(steps);
}

// The smallest m in [0, k] with Ratio(m, k) >= threshold, or k + 1 if none.
size_t MinMatches(double threshold, size_t k) {
  if (threshold <= 0.0) return 0;
  if (threshold > 1.0) return k + 1;
  auto m = static_cast<size_t>(std::ceil(threshold * static_cast<double>(k)));
  m = std::min(m, k + 1);
  // Correct the rounding of threshold * k so the bound matches Ratio exactly.
  while (m > 0 && Ratio(m - 1, k) >= threshold) --m;
  while (m <= k && Ratio(m, k) < threshold) ++m;
  return m;
}

bool Report(double value, double threshold, double* estimate) {
  if (value >= threshold) {
    if (estimate != nullptr) *estimate = value;
    return true;
  }
  return false;
}

}  // namespace

double EstimateJaccard(const BottomKSketch& a, const BottomKSketch& b) {
  NEARDUP_CHECK(a.k == b.k) << "bottom-k sketches of different k (" << a.k << " and " << b.k << ")";
  if (a.values.empty() || b.values.empty()) return 0.0;
  const Walk walk =
      MergeWalk(a.values.data(), a.values.size(), b.values.data(), b.values.size(), a.k);
  return Ratio(walk.matches, walk.steps);
}

bool JaccardAtLeast(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                    double* estimate) {
  NEARDUP_CHECK(a.k == b.k) << "bottom-k sketches of different k (" << a.k << " and " << b.k << ")";
  if (std::isnan(threshold)) return false;
  const size_t na = a.values.size();
  const size_t nb = b.values.size();
  const size_t k = a.k;
  if (na == 0 || nb == 0) return Report(0.0, threshold, estimate);
  if (na < k && nb < k) {
    // Two small documents: k' = min(k, |A ∪ B|) is known only at the end of
    // the walk, so walk it all (these sketches are short anyway).
    return Report(EstimateJaccard(a, b), threshold, estimate);
  }
  // One sketch holds k values, so |A_s ∪ B_s| >= k and k' == k: the estimate
  // is matches / k and reaches the threshold iff matches >= needed.
  const size_t needed = MinMatches(threshold, k);
  if (needed > std::min(na, nb)) return false;

  const uint64_t* av = a.values.data();
  const uint64_t* bv = b.values.data();
  size_t i = 0;
  size_t j = 0;
  size_t steps = 0;
  size_t matches = 0;
  // Blocks of 8 steps with no bounds test inside: each step advances i and j
  // by at most 1. After each block, abort if even a match at every remaining
  // step (at most min(k - steps, na - i, nb - j) more) cannot reach `needed`.
  constexpr size_t kBlock = 8;
  while (i + kBlock <= na && j + kBlock <= nb && steps + kBlock <= k) {
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    NEARDUP_MERGE_STEP(av, bv);
    steps += kBlock;
    if (matches + std::min(k - steps, std::min(na - i, nb - j)) < needed) return false;
  }
  while (i < na && j < nb && steps < k) {
    NEARDUP_MERGE_STEP(av, bv);
    ++steps;
  }
  // The rest of the union (if any) holds no common element.
  return Report(Ratio(matches, k), threshold, estimate);
}

#undef NEARDUP_MERGE_STEP

double EstimateJaccard(const KValueSketch& a, const KValueSketch& b) {
  NEARDUP_CHECK(a.values.size() == b.values.size())
      << "k-value sketches of different sizes (" << a.values.size() << " and " << b.values.size()
      << ")";
  if (a.empty || b.empty || a.values.empty()) return 0.0;
  size_t equal = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    equal += static_cast<size_t>(a.values[i] == b.values[i]);
  }
  return static_cast<double>(equal) / static_cast<double>(a.values.size());
}

size_t IntersectionSize(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  size_t i = 0;
  size_t j = 0;
  size_t common = 0;
  while (i < a.size() && j < b.size()) {
    const uint32_t x = a[i];
    const uint32_t y = b[j];
    common += static_cast<size_t>(x == y);
    i += static_cast<size_t>(x <= y);
    j += static_cast<size_t>(y <= x);
  }
  return common;
}

double ExactJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.empty() || b.empty()) return 0.0;
  const size_t common = IntersectionSize(a, b);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

double Containment(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.empty() || b.empty()) return 0.0;
  return static_cast<double>(IntersectionSize(a, b)) / static_cast<double>(a.size());
}

}  // namespace neardup
