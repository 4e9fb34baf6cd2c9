// Sketch and feature generators and the definition-based oracle shared by
// the sketch tests (similarity, similarity summary, SimHash, k-value MinHash).
#ifndef NEARDUP_SKETCH_SIMILARITY_TEST_UTIL_H_
#define NEARDUP_SKETCH_SIMILARITY_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "neardup/minhash.h"
#include "util/mix.h"

namespace neardup::testing_util {

// `n` random 64-bit features, a SplitMix64 stream from `seed`.
inline std::vector<uint64_t> RandomFeatures(uint64_t seed, size_t n) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> features(n);
  for (auto& f : features) f = rng.Next();
  return features;
}

// A sketch holding exactly `values` (sorted and de-duplicated here): for
// sketches shaped by hand, not through a builder.
inline BottomKSketch SketchOfValues(std::vector<uint64_t> values, uint32_t k) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return BottomKSketch{k, std::move(values)};
}

// Thresholds that probe a decision whose estimate is `exact`: exact itself,
// the doubles next to it on both sides, one random value in [0, 1], then
// `extra` (the test's own boundary values).
inline std::vector<double> ThresholdsAround(internal::SplitMix64& rng, double exact,
                                            std::initializer_list<double> extra) {
  std::vector<double> thresholds = {exact, std::nextafter(exact, 2.0), std::nextafter(exact, -1.0),
                                    static_cast<double>(rng.Next() % 1001) / 1000.0};
  thresholds.insert(thresholds.end(), extra.begin(), extra.end());
  return thresholds;
}

inline BottomKSketch SketchOf(const std::vector<uint64_t>& features, int k) {
  BottomKBuilder builder(k);
  for (uint64_t f : features) builder.Add(f);
  return builder.Finish();
}

// The bottom-k estimator by its definition: the k' smallest of the union of
// the sketches, and how many of those are in both.
inline double OracleEstimate(const BottomKSketch& a, const BottomKSketch& b) {
  if (a.values.empty() || b.values.empty()) return 0.0;
  std::set<uint64_t> in_a(a.values.begin(), a.values.end());
  std::set<uint64_t> in_b(b.values.begin(), b.values.end());
  std::set<uint64_t> all = in_a;
  all.insert(in_b.begin(), in_b.end());
  const size_t k_prime = std::min<size_t>(a.k, all.size());
  size_t both = 0;
  auto it = all.begin();
  for (size_t n = 0; n < k_prime; ++n, ++it) both += in_a.count(*it) && in_b.count(*it);
  return static_cast<double>(both) / static_cast<double>(k_prime);
}

// A pair of documents with a random overlap, drawn so that values repeat
// between them and sizes straddle k.
struct Pair {
  std::vector<uint64_t> a;
  std::vector<uint64_t> b;
};
inline Pair RandomPair(internal::SplitMix64& rng, size_t k) {
  const size_t sizes[] = {0, 1, k / 2, k - 1, k, k + 1, 2 * k, 10 * k};
  const size_t na = sizes[rng.Next() % 8];
  const size_t nb = sizes[rng.Next() % 8];
  const double share = static_cast<double>(rng.Next() % 101) / 100.0;
  Pair pair;
  for (size_t i = 0; i < na; ++i) pair.a.push_back(rng.Next());
  for (size_t i = 0; i < nb; ++i) {
    const bool shared = na > 0 && static_cast<double>(rng.Next() % 1000) / 1000.0 < share;
    pair.b.push_back(shared ? pair.a[rng.Next() % na] : rng.Next());
  }
  return pair;
}

// Strictly ascending values of one of several shapes, chosen to reach the
// kernels' edge cases: the extremes 0 and UINT64_MAX, dense runs (many equal
// buckets), values that share their low 8 bits, and uniform hashes.
inline std::vector<uint64_t> AdversarialValues(internal::SplitMix64& rng, size_t n, int shape) {
  std::set<uint64_t> values;
  while (values.size() < n) {
    uint64_t v = rng.Next();
    switch (shape) {
      case 0:
        break;  // uniform hashes
      case 1:
        v %= 4 * n + 1;
        break;  // dense small integers
      case 2:
        v = (v % (2 * n + 1)) << 8;
        break;  // one bucket only
      case 3:
        v = std::numeric_limits<uint64_t>::max() - v % (3 * n + 1);
        break;  // top
      default:
        v = (v & 1) ? v % (n + 1) : std::numeric_limits<uint64_t>::max() - v % (n + 1);
        break;
    }
    values.insert(v);
  }
  return std::vector<uint64_t>(values.begin(), values.end());
}

// `a`, and a copy of it where a share of the values is replaced by others of
// the same shape (so the two overlap by any amount, including fully).
inline std::pair<std::vector<uint64_t>, std::vector<uint64_t>> OverlappingValues(
    internal::SplitMix64& rng, size_t na, size_t nb, int shape) {
  std::vector<uint64_t> a = AdversarialValues(rng, na, shape);
  std::vector<uint64_t> fresh = AdversarialValues(rng, nb, shape);
  const uint64_t keep_percent = rng.Next() % 101;
  std::set<uint64_t> b;
  for (size_t i = 0; i < nb; ++i) {
    const bool keep = i < na && rng.Next() % 100 < keep_percent;
    b.insert(keep ? a[i] : fresh[i]);
  }
  // A kept value may equal a fresh one: top up to exactly nb values.
  for (uint64_t v : AdversarialValues(rng, 2 * nb, shape)) {
    if (b.size() == nb) break;
    b.insert(v);
  }
  return {a, std::vector<uint64_t>(b.begin(), b.end())};
}

}  // namespace neardup::testing_util

#endif  // NEARDUP_SKETCH_SIMILARITY_TEST_UTIL_H_
