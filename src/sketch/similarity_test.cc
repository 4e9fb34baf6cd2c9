#include "neardup/similarity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "neardup/minhash.h"
#include "util/mix.h"

namespace neardup {
namespace {

BottomKSketch SketchOf(const std::vector<uint64_t>& features, int k) {
  BottomKBuilder builder(k);
  for (uint64_t f : features) builder.Add(f);
  return builder.Finish();
}

// The bottom-k estimator by its definition: the k' smallest of the union of
// the sketches, and how many of those are in both.
double OracleEstimate(const BottomKSketch& a, const BottomKSketch& b) {
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
Pair RandomPair(internal::SplitMix64& rng, size_t k) {
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

TEST(BottomKSimilarityTest, EstimateMatchesDefinition) {
  internal::SplitMix64 rng(1);
  for (int k : {1, 2, 16, 128}) {
    for (int trial = 0; trial < 150; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      EXPECT_DOUBLE_EQ(EstimateJaccard(a, b), OracleEstimate(a, b));
      EXPECT_EQ(EstimateJaccard(a, b), EstimateJaccard(b, a));
    }
  }
}

TEST(BottomKSimilarityTest, NotTheJaccardOfTheSketchSets) {
  // A = {1..4}, B = {3..6}, k = 4: the union's 4 smallest are 1,2,3,4, of
  // which 3 and 4 are in both: 2/4. The sketch sets' Jaccard would be 2/6.
  const BottomKSketch a{4, {1, 2, 3, 4}};
  const BottomKSketch b{4, {3, 4, 5, 6}};
  EXPECT_DOUBLE_EQ(EstimateJaccard(a, b), 0.5);
  // Smaller than k: the exact Jaccard of the documents.
  const BottomKSketch c{8, {1, 2, 3}};
  const BottomKSketch d{8, {2, 3, 4}};
  EXPECT_DOUBLE_EQ(EstimateJaccard(c, d), 0.5);
}

TEST(BottomKSimilarityTest, IdenticalDisjointEmpty) {
  internal::SplitMix64 rng(2);
  std::vector<uint64_t> features(1000);
  for (auto& f : features) f = rng.Next();
  const BottomKSketch a = SketchOf(features, 128);
  EXPECT_EQ(EstimateJaccard(a, a), 1.0);
  std::vector<uint64_t> other(1000);
  for (auto& f : other) f = rng.Next();
  const BottomKSketch b = SketchOf(other, 128);
  EXPECT_EQ(EstimateJaccard(a, b), 0.0);
  const BottomKSketch empty{128, {}};
  EXPECT_EQ(EstimateJaccard(a, empty), 0.0);
  EXPECT_EQ(EstimateJaccard(empty, empty), 0.0);
  double estimate = -1.0;
  EXPECT_FALSE(JaccardAtLeast(empty, empty, 0.1, &estimate));
  EXPECT_TRUE(JaccardAtLeast(empty, a, 0.0, &estimate));
  EXPECT_EQ(estimate, 0.0);
  EXPECT_TRUE(JaccardAtLeast(a, a, 1.0, &estimate));
  EXPECT_EQ(estimate, 1.0);
}

TEST(BottomKSimilarityTest, JaccardAtLeastEqualsThresholdedEstimate) {
  internal::SplitMix64 rng(3);
  for (int k : {1, 2, 16, 128, 256}) {
    for (int trial = 0; trial < 300; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      const double exact = EstimateJaccard(a, b);
      // Random thresholds, thresholds exactly at attainable values, and
      // values just around them.
      const double m_over_k = std::round(exact * k) / k;
      const double thresholds[] = {static_cast<double>(rng.Next() % 1001) / 1000.0,
                                   exact,
                                   std::nextafter(exact, 2.0),
                                   std::nextafter(exact, -1.0),
                                   m_over_k,
                                   0.0,
                                   -0.5,
                                   1.0,
                                   1.5,
                                   std::numeric_limits<double>::quiet_NaN()};
      for (double threshold : thresholds) {
        double estimate = -7.0;
        const bool at_least = JaccardAtLeast(a, b, threshold, &estimate);
        ASSERT_EQ(at_least, exact >= threshold)
            << "k " << k << " trial " << trial << " threshold " << threshold << " exact " << exact;
        EXPECT_EQ(estimate, at_least ? exact : -7.0);
        EXPECT_EQ(JaccardAtLeast(b, a, threshold, nullptr), at_least);
      }
    }
  }
}

TEST(BottomKSimilarityDeathTest, RejectsDifferentK) {
  const BottomKSketch a{4, {1}};
  const BottomKSketch b{8, {1}};
  EXPECT_DEATH(EstimateJaccard(a, b), "different k");
  EXPECT_DEATH(JaccardAtLeast(a, b, 0.5, nullptr), "different k");
}

TEST(KValueSimilarityTest, FractionOfEqualPositions) {
  const KValueSketch a{{1, 2, 3, 4}, false};
  const KValueSketch b{{1, 9, 3, 9}, false};
  EXPECT_DOUBLE_EQ(EstimateJaccard(a, b), 0.5);
  EXPECT_DOUBLE_EQ(EstimateJaccard(a, a), 1.0);
  const KValueSketch empty{{0, 0, 0, 0}, true};
  EXPECT_EQ(EstimateJaccard(empty, empty), 0.0);
  EXPECT_EQ(EstimateJaccard(a, empty), 0.0);
  EXPECT_EQ(EstimateJaccard(KValueSketch{}, KValueSketch{}), 0.0);
}

TEST(KValueSimilarityDeathTest, RejectsDifferentSizes) {
  EXPECT_DEATH(EstimateJaccard(KValueSketch{{1, 2}, false}, KValueSketch{{1}, false}),
               "different sizes");
}

std::vector<uint32_t> RandomSet(internal::SplitMix64& rng, size_t n, uint32_t universe) {
  std::set<uint32_t> set;
  while (set.size() < n) set.insert(static_cast<uint32_t>(rng.Next() % universe));
  return std::vector<uint32_t>(set.begin(), set.end());
}

TEST(SetSimilarityTest, MatchesSetIntersection) {
  internal::SplitMix64 rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t na = rng.Next() % 300;
    const size_t nb = rng.Next() % 300;
    const uint32_t universe = 1 + static_cast<uint32_t>(rng.Next() % 1000) + 300;
    const std::vector<uint32_t> a = RandomSet(rng, na, universe);
    const std::vector<uint32_t> b = RandomSet(rng, nb, universe);
    std::vector<uint32_t> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    EXPECT_EQ(IntersectionSize(a, b), common.size());
    if (a.empty() || b.empty()) {
      EXPECT_EQ(ExactJaccard(a, b), 0.0);
      EXPECT_EQ(Containment(a, b), 0.0);
      continue;
    }
    std::vector<uint32_t> all;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
    EXPECT_DOUBLE_EQ(ExactJaccard(a, b),
                     static_cast<double>(common.size()) / static_cast<double>(all.size()));
    EXPECT_DOUBLE_EQ(Containment(a, b),
                     static_cast<double>(common.size()) / static_cast<double>(a.size()));
  }
}

TEST(SetSimilarityTest, ContainmentIsAsymmetric) {
  // A passage of 4 chunks wholly inside a document of 10.
  const std::vector<uint32_t> passage = {3, 5, 7, 9};
  const std::vector<uint32_t> document = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(Containment(passage, document), 1.0);
  EXPECT_DOUBLE_EQ(Containment(document, passage), 0.4);
  EXPECT_DOUBLE_EQ(ExactJaccard(passage, document), 0.4);
  EXPECT_DOUBLE_EQ(ExactJaccard(document, document), 1.0);
  const std::vector<uint32_t> empty;
  EXPECT_EQ(ExactJaccard(empty, empty), 0.0);
  EXPECT_EQ(Containment(empty, document), 0.0);
  EXPECT_EQ(IntersectionSize(empty, document), 0u);
}

}  // namespace
}  // namespace neardup
