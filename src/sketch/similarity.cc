#include "neardup/similarity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "neardup/check.h"
#include "sketch/set_intersection.h"
#include "sketch/similarity_kernels.h"
#include "sketch/sketch_kernels.h"

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

using internal::Ratio;
using internal::Report;

// The kernels of the CPU path's table, resolved once: these run per pair.
internal::PrefixFilterFn PrefixFilterKernel() {
  static const internal::PrefixFilterFn kernel = internal::ActiveSketchKernels().prefix_filter;
  return kernel;
}

internal::MergeWalkFn MergeWalkKernel() {
  static const internal::MergeWalkFn kernel = internal::ActiveSketchKernels().merge_walk;
  return kernel;
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

// MinMatches for the same (threshold, k) as the previous call on this
// thread: callers test many pairs at one threshold, and MinMatches costs a
// few dependent divisions (about 15% of a rejected pair's time before).
size_t CachedMinMatches(double threshold, size_t k) {
  struct Last {
    double threshold;
    size_t k;
    size_t needed;
  };
  thread_local Last last{0.0, 0, 0};  // MinMatches(0.0, 0) == 0
  if (last.k != k || last.threshold != threshold) {
    last = Last{threshold, k, MinMatches(threshold, k)};
  }
  return last.needed;
}

// The prefix filter over the first `prefix` values of both sides; the side
// whose prefix ends lower probes (its last prefix value is the cut c).
struct PrefixFilter {
  const uint64_t* probe;
  const uint64_t* build;
  size_t n_probe;
  size_t n_build;
  internal::PrefixCounts counts;
};

PrefixFilter RunPrefixFilter(const uint64_t* av, size_t na, const uint64_t* bv, size_t nb,
                             size_t prefix) {
  const bool a_probes = av[prefix - 1] <= bv[prefix - 1];
  PrefixFilter f{
      a_probes ? av : bv, a_probes ? bv : av, a_probes ? na : nb, a_probes ? nb : na, {}};
  f.counts = PrefixFilterKernel()(f.probe, f.build, prefix);
  return f;
}

// Both sketches hold fewer than k values (short documents). The estimate is
// matches / k' with k' = min(k, |A ∪ B|) >= max(na, nb) = M (the union holds
// the larger side, and k > M), and matches <= |A ∩ B|. So the estimate is at
// most Ratio(|A ∩ B|, M): the pair can only pass if |A ∩ B| >= needed, the
// fewest matches with Ratio(matches, M) >= threshold. (Division is
// correctly rounded, hence monotone, so these bounds are exact in floating
// point too.) Two O(1) or O(prefix) tests reject most pairs:
//   - |A ∩ B| <= min(na, nb): pairs of very different sizes (J <= min/max);
//   - |A ∩ B| <= gamma + min(|A > c|, |B > c|) with the prefix filter's
//     gamma over the first h values of each side and the cut c (the common
//     values <= c are the gamma ones, those above c are at most the values
//     above c on either side).
// The pairs left are walked exactly, in two interleaved halves.
bool SmallPairAtLeast(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                      double* estimate) {
  const size_t na = a.values.size();
  const size_t nb = b.values.size();
  const size_t most = std::max(na, nb);
  const size_t needed = CachedMinMatches(threshold, most);
  if (needed > std::min(na, nb)) return false;
  const uint64_t* av = a.values.data();
  const uint64_t* bv = b.values.data();
  const size_t prefix = std::min({na, nb, internal::kMaxPrefix}) / 8 * 8;
  if (prefix >= 8 && needed > 0) {
    const PrefixFilter f = RunPrefixFilter(av, na, bv, nb, prefix);
    const size_t bound =
        f.counts.maybe_common + std::min(f.n_probe - prefix, f.n_build - f.counts.build_below_cut);
    if (bound < needed) return false;
  }
  if (a.k > internal::kMaxSplitLimit) {
    return Report(internal::EstimateJaccardSameK(a, b), threshold, estimate);
  }
  const internal::WalkCount walk = MergeWalkKernel()(av, na, bv, nb, a.k);
  return Report(Ratio(walk.matches, walk.steps), threshold, estimate);
}

}  // namespace

namespace {

Status CheckSameK(const BottomKSketch& a, const BottomKSketch& b) {
  if (a.k == b.k) return Status::Ok();
  return InvalidArgumentError("bottom-k sketches of different k (" + std::to_string(a.k) + " and " +
                              std::to_string(b.k) + ")");
}

}  // namespace

Result<double> EstimateJaccard(const BottomKSketch& a, const BottomKSketch& b) {
  NEARDUP_RETURN_IF_ERROR(CheckSameK(a, b));
  return internal::EstimateJaccardSameK(a, b);
}

Result<bool> JaccardAtLeast(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                            double* estimate) {
  NEARDUP_RETURN_IF_ERROR(CheckSameK(a, b));
  return internal::JaccardAtLeastSameK(a, b, threshold, estimate);
}

namespace internal {

double EstimateJaccardSameK(const BottomKSketch& a, const BottomKSketch& b) {
  NEARDUP_DCHECK(a.k == b.k);
  if (a.values.empty() || b.values.empty()) return 0.0;
  const internal::WalkCount walk = internal::MergeWalkReference(
      a.values.data(), a.values.size(), b.values.data(), b.values.size(), a.k);
  return Ratio(walk.matches, walk.steps);
}

bool JaccardAtLeastSameK(const BottomKSketch& a, const BottomKSketch& b, double threshold,
                         double* estimate) {
  NEARDUP_DCHECK(a.k == b.k);
  if (std::isnan(threshold)) return false;
  const size_t na = a.values.size();
  const size_t nb = b.values.size();
  const size_t k = a.k;
  if (na == 0 || nb == 0) return Report(0.0, threshold, estimate);
  if (na < k && nb < k) return SmallPairAtLeast(a, b, threshold, estimate);
  // One sketch holds k values, so |A_s ∪ B_s| >= k and k' == k: the estimate
  // is matches / k and reaches the threshold iff matches >= needed.
  const size_t needed = CachedMinMatches(threshold, k);
  if (needed > std::min(na, nb)) return false;

  const uint64_t* av = a.values.data();
  const uint64_t* bv = b.values.data();

  // Prefix bound (docs/JACCARD_KERNEL.md). Take h = min(k / 2, 64) values of
  // each side (h a multiple of 8) and the cut c = min(a[h-1], b[h-1]); say
  // c = a[h-1] (A "probes"). The union elements <= c number n_c = alpha +
  // beta - gamma <= 2h <= k (alpha = h of A, beta = |B <= c| <= h, gamma of
  // them common), so all are among the union's k smallest (S). The common
  // elements of S above c are at most
  //   - the k - n_c elements of S above c,
  //   - the values of B in (c, t], t >= max(S) any upper bound (t = x[k-1]
  //     of a side x holding k values), and likewise those of A;
  // so matches <= gamma + min(k - n_c, |B <= t| - beta, |A <= t| - alpha),
  // which only grows with gamma, and gamma <= maybe_common (a bucket bitmap
  // cannot miss a common value). A bound below `needed` proves the pair is
  // below the threshold.
  // A high threshold needs a shorter prefix to reject (the prefix term
  // k - n_c must fall below `needed`, and n_c is about 2h minus a little), so
  // take h near (k - needed) / 2 plus a margin: fewer bytes read per pair.
  const size_t wanted = (k - needed + 8 + 7) / 8 * 8;
  const size_t prefix = std::min<size_t>({k / 2, internal::kMaxPrefix, wanted}) / 8 * 8;
  if (prefix >= 8 && na >= prefix && nb >= prefix) {
    const PrefixFilter f = RunPrefixFilter(av, na, bv, nb, prefix);
    const uint64_t* probe = f.probe;
    const uint64_t* build = f.build;
    const size_t n_probe = f.n_probe;
    const size_t n_build = f.n_build;
    const size_t gamma = f.counts.maybe_common;
    const size_t beta = f.counts.build_below_cut;
    // The first term needs no search and rejects most unrelated pairs of
    // similar size; only the rest pay for the binary search (a chain of
    // dependent loads, often cache misses on large sketch sets).
    if (gamma + (k + gamma - prefix - beta) < needed) return false;
    // t = the smaller k-th value among the full sides (at least one is
    // full); the full side that gives t has exactly k values <= t.
    const bool probe_gives_t = n_probe >= k && (n_build < k || probe[k - 1] <= build[k - 1]);
    const uint64_t t = probe_gives_t ? probe[k - 1] : build[k - 1];
    const size_t probe_to_t = probe_gives_t ? k : internal::CountAtMost(probe, n_probe, t);
    const size_t build_to_t = probe_gives_t ? internal::CountAtMost(build, n_build, t) : k;
    const size_t above = std::min(build_to_t - beta, probe_to_t - prefix);
    if (gamma + above < needed) return false;
    // Where the prefix term can fire (k - 2h < needed, e.g. k = 128 at any
    // threshold above 0), most pairs that pass are similar and need the
    // whole walk: run the fastest exact walk, no abort. Otherwise
    // (large k) the walk with early abort below is the better bet.
    if (k - 2 * prefix < needed && k <= internal::kMaxSplitLimit) {
      const internal::WalkCount walk = MergeWalkKernel()(av, na, bv, nb, k);
      return Report(Ratio(walk.matches, walk.steps), threshold, estimate);
    }
  }

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

}  // namespace internal

#undef NEARDUP_MERGE_STEP

namespace {

// How many pairs ahead the batch prefetches the sketch objects, and half
// that for their values (the values' address is known only once the object
// is in cache). Chosen on the sketch_bench pairs (1 MB of sketches).
constexpr size_t kObjectsAhead = 16;
constexpr size_t kValuesAhead = 8;

void PrefetchValues(const BottomKSketch& s) {
  // The prefix filter reads the first 64 values (8 cache lines); the bound
  // also reads the k-th value. Prefetch the first half of the prefix and the
  // k-th value: enough to start the filter while the rest streams in.
  const uint64_t* v = s.values.data();
  const size_t n = s.values.size();
  if (n == 0) return;
  for (size_t i = 0; i < std::min<size_t>(n, 64); i += 8) __builtin_prefetch(v + i);
  __builtin_prefetch(v + std::min<size_t>(n, s.k) - 1);
}

}  // namespace

size_t JaccardAtLeastBatch(std::span<const BottomKSketch* const> a,
                           std::span<const BottomKSketch* const> b, double threshold,
                           std::span<uint8_t> accepted, std::span<double> estimates) {
  const size_t n = a.size();
  NEARDUP_CHECK(b.size() == n && accepted.size() == n)
      << "JaccardAtLeastBatch spans of different sizes (" << n << ", " << b.size() << ", "
      << accepted.size() << ")";
  NEARDUP_CHECK(estimates.empty() || estimates.size() == n)
      << "JaccardAtLeastBatch estimates size (" << estimates.size() << ") is neither 0 nor " << n;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kObjectsAhead < n) {
      __builtin_prefetch(a[i + kObjectsAhead]);
      __builtin_prefetch(b[i + kObjectsAhead]);
    }
    if (i + kValuesAhead < n) {
      PrefetchValues(*a[i + kValuesAhead]);
      PrefetchValues(*b[i + kValuesAhead]);
    }
    double estimate = 0.0;
    NEARDUP_CHECK(a[i]->k == b[i]->k)
        << "bottom-k sketches of different k (" << a[i]->k << " and " << b[i]->k << ")";
    const bool ok = internal::JaccardAtLeastSameK(*a[i], *b[i], threshold, &estimate);
    accepted[i] = static_cast<uint8_t>(ok);
    if (ok && !estimates.empty()) estimates[i] = estimate;
    count += static_cast<size_t>(ok);
  }
  return count;
}

Result<double> EstimateJaccard(const KValueSketch& a, const KValueSketch& b) {
  if (a.values.size() != b.values.size()) {
    return InvalidArgumentError("k-value sketches of different sizes (" +
                                std::to_string(a.values.size()) + " and " +
                                std::to_string(b.values.size()) + ")");
  }
  if (a.empty || b.empty || a.values.empty()) return 0.0;
  size_t equal = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    equal += static_cast<size_t>(a.values[i] == b.values[i]);
  }
  return static_cast<double>(equal) / static_cast<double>(a.values.size());
}

size_t IntersectionSize(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  // Chosen once, as the other similarity kernels above: this runs once per
  // verified pair, and choosing reads NEARDUP_CPU_PATH.
  static const internal::IntersectionSizeFn kernel =
      internal::ActiveSketchKernels().intersection_size;
  return kernel(a.data(), a.size(), b.data(), b.size());
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
