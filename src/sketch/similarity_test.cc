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
#include "hash/cpu_features.h"
#include "neardup/minhash.h"
#include "sketch/similarity_kernels.h"
#include "sketch/similarity_test_util.h"
#include "util/mix.h"

namespace neardup {
namespace {

using testing_util::AdversarialValues;
using testing_util::OracleEstimate;
using testing_util::OverlappingValues;
using testing_util::Pair;
using testing_util::RandomPair;
using testing_util::SketchOf;
using testing_util::SketchOfValues;
using testing_util::ThresholdsAround;

TEST(BottomKSimilarityTest, EstimateMatchesDefinition) {
  internal::SplitMix64 rng(1);
  for (int k : {1, 2, 16, 128}) {
    for (int trial = 0; trial < 150; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      EXPECT_DOUBLE_EQ(*EstimateJaccard(a, b), OracleEstimate(a, b));
      EXPECT_EQ(*EstimateJaccard(a, b), *EstimateJaccard(b, a));
    }
  }
}

TEST(BottomKSimilarityTest, NotTheJaccardOfTheSketchSets) {
  // A = {1..4}, B = {3..6}, k = 4: the union's 4 smallest are 1,2,3,4, of
  // which 3 and 4 are in both: 2/4. The sketch sets' Jaccard would be 2/6.
  const BottomKSketch a{4, {1, 2, 3, 4}};
  const BottomKSketch b{4, {3, 4, 5, 6}};
  EXPECT_DOUBLE_EQ(*EstimateJaccard(a, b), 0.5);
  // Smaller than k: the exact Jaccard of the documents.
  const BottomKSketch c{8, {1, 2, 3}};
  const BottomKSketch d{8, {2, 3, 4}};
  EXPECT_DOUBLE_EQ(*EstimateJaccard(c, d), 0.5);
}

TEST(BottomKSimilarityTest, IdenticalDisjointEmpty) {
  internal::SplitMix64 rng(2);
  std::vector<uint64_t> features(1000);
  for (auto& f : features) f = rng.Next();
  const BottomKSketch a = SketchOf(features, 128);
  EXPECT_EQ(*EstimateJaccard(a, a), 1.0);
  std::vector<uint64_t> other(1000);
  for (auto& f : other) f = rng.Next();
  const BottomKSketch b = SketchOf(other, 128);
  EXPECT_EQ(*EstimateJaccard(a, b), 0.0);
  const BottomKSketch empty{128, {}};
  EXPECT_EQ(*EstimateJaccard(a, empty), 0.0);
  EXPECT_EQ(*EstimateJaccard(empty, empty), 0.0);
  double estimate = -1.0;
  EXPECT_FALSE(*JaccardAtLeast(empty, empty, 0.1, &estimate));
  EXPECT_TRUE(*JaccardAtLeast(empty, a, 0.0, &estimate));
  EXPECT_EQ(estimate, 0.0);
  EXPECT_TRUE(*JaccardAtLeast(a, a, 1.0, &estimate));
  EXPECT_EQ(estimate, 1.0);
}

TEST(BottomKSimilarityTest, JaccardAtLeastEqualsThresholdedEstimate) {
  internal::SplitMix64 rng(3);
  for (int k : {1, 2, 16, 128, 256}) {
    for (int trial = 0; trial < 300; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      const double exact = *EstimateJaccard(a, b);
      // Random thresholds, thresholds exactly at attainable values, and
      // values just around them.
      const double m_over_k = std::round(exact * k) / k;
      const std::vector<double> thresholds = ThresholdsAround(
          rng, exact, {m_over_k, 0.0, -0.5, 1.0, 1.5, std::numeric_limits<double>::quiet_NaN()});
      for (double threshold : thresholds) {
        double estimate = -7.0;
        const bool at_least = *JaccardAtLeast(a, b, threshold, &estimate);
        ASSERT_EQ(at_least, exact >= threshold)
            << "k " << k << " trial " << trial << " threshold " << threshold << " exact " << exact;
        EXPECT_EQ(estimate, at_least ? exact : -7.0);
        EXPECT_EQ(*JaccardAtLeast(b, a, threshold, nullptr), at_least);
      }
    }
  }
}

TEST(SimilarityKernelsTest, CountAtMostIsUpperBound) {
  internal::SplitMix64 rng(21);
  for (size_t n : {0, 1, 2, 3, 7, 8, 63, 64, 65, 128, 1000}) {
    const std::vector<uint64_t> values = AdversarialValues(rng, n, static_cast<int>(n % 5));
    std::vector<uint64_t> queries = {0, 1, std::numeric_limits<uint64_t>::max(),
                                     std::numeric_limits<uint64_t>::max() - 1};
    for (uint64_t v : values) {
      queries.push_back(v);
      queries.push_back(v - 1);
      queries.push_back(v + 1);
    }
    for (uint64_t q : queries) {
      const auto expected =
          static_cast<size_t>(std::upper_bound(values.begin(), values.end(), q) - values.begin());
      ASSERT_EQ(internal::CountAtMost(values.data(), n, q), expected) << "n " << n << " q " << q;
    }
  }
}

TEST(SimilarityKernelsTest, PrefixFilterMatchesDefinitionOnEveryPath) {
  internal::SplitMix64 rng(22);
  // The scalar kernel and the fastest this CPU runs (AVX-512 where it has it).
  std::vector<internal::PrefixFilterFn> kernels = {
      &internal::PrefixFilterScalar, internal::PrefixFilterFor(internal::HostCpuFeatures())};
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t prefix = 8 * (1 + rng.Next() % 8);
    auto [probe, build] =
        OverlappingValues(rng, prefix + rng.Next() % 3, prefix + rng.Next() % 3, trial % 5);
    if (probe[prefix - 1] > build[prefix - 1]) std::swap(probe, build);
    const uint64_t cut = probe[prefix - 1];
    std::set<uint64_t> buckets;
    size_t below = 0;
    for (size_t j = 0; j < prefix; ++j) {
      buckets.insert(build[j] & 255);
      below += build[j] <= cut;
    }
    size_t maybe = 0;
    size_t common = 0;
    const std::set<uint64_t> build_prefix(build.begin(), build.begin() + prefix);
    for (size_t i = 0; i < prefix; ++i) {
      maybe += buckets.count(probe[i] & 255);
      common += build_prefix.count(probe[i]);
    }
    for (internal::PrefixFilterFn kernel : kernels) {
      const internal::PrefixCounts counts = kernel(probe.data(), build.data(), prefix);
      ASSERT_EQ(counts.build_below_cut, below) << "trial " << trial;
      ASSERT_EQ(counts.maybe_common, maybe) << "trial " << trial;
      ASSERT_GE(counts.maybe_common, common);  // the bound the rejection rests on
    }
  }
}

TEST(SimilarityKernelsTest, SplitWalkEqualsReferenceWalk) {
  internal::SplitMix64 rng(23);
  const size_t sizes[] = {0, 1, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 300};
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t na = sizes[rng.Next() % std::size(sizes)];
    const size_t nb = sizes[rng.Next() % std::size(sizes)];
    const auto [a, b] = OverlappingValues(rng, na, nb, trial % 5);
    const size_t limits[] = {0, 1, 16, 64, 128, 129, 256, 1000, internal::kMaxSplitLimit};
    const size_t limit = limits[rng.Next() % std::size(limits)];
    const internal::WalkCount expected =
        internal::MergeWalkReference(a.data(), na, b.data(), nb, limit);
    const internal::WalkCount split = internal::MergeWalkSplit(a.data(), na, b.data(), nb, limit);
    ASSERT_EQ(split.steps, expected.steps) << "trial " << trial << " na " << na << " nb " << nb;
    ASSERT_EQ(split.matches, expected.matches)
        << "trial " << trial << " na " << na << " nb " << nb << " limit " << limit;
    // Identical arrays: every walked element is common.
    const internal::WalkCount self = internal::MergeWalkSplit(a.data(), na, a.data(), na, limit);
    ASSERT_EQ(self.steps, std::min(na, limit));
    ASSERT_EQ(self.matches, std::min(na, limit));
  }
}

// Every exact walk this CPU runs (the split walk, the AVX-512 block
// intersection) against the reference walk: sizes around the 8-value blocks
// and around the limits, overlaps from none to all, identical arrays, and
// the extremes 0 and UINT64_MAX in both.
TEST(SimilarityKernelsTest, EveryMergeWalkEqualsReferenceWalk) {
  internal::SplitMix64 rng(25);
  const size_t sizes[] = {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300};
  const std::vector<internal::MergeWalkFn> walks = internal::SupportedMergeWalks();
  for (int trial = 0; trial < 6000; ++trial) {
    const size_t na = sizes[rng.Next() % std::size(sizes)];
    const size_t nb = sizes[rng.Next() % std::size(sizes)];
    auto [a, b] = OverlappingValues(rng, na, nb, trial % 5);
    if (trial % 7 == 6 && na > 1 && nb > 1) {
      a.front() = 0;
      b.front() = 0;
      a.back() = std::numeric_limits<uint64_t>::max();
      b.back() = std::numeric_limits<uint64_t>::max();
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
      std::sort(b.begin(), b.end());
      b.erase(std::unique(b.begin(), b.end()), b.end());
    }
    const size_t limits[] = {
        0, 1, 7, 8, 16, 63, 64, 100, 128, 129, 256, 1000, internal::kMaxSplitLimit};
    const size_t limit = limits[rng.Next() % std::size(limits)];
    const internal::WalkCount expected =
        internal::MergeWalkReference(a.data(), a.size(), b.data(), b.size(), limit);
    for (size_t w = 0; w < walks.size(); ++w) {
      const internal::WalkCount got = walks[w](a.data(), a.size(), b.data(), b.size(), limit);
      ASSERT_EQ(got.steps, expected.steps) << "walk " << w << " trial " << trial << " na "
                                           << a.size() << " nb " << b.size() << " limit " << limit;
      ASSERT_EQ(got.matches, expected.matches)
          << "walk " << w << " trial " << trial << " na " << a.size() << " nb " << b.size()
          << " limit " << limit;
      const internal::WalkCount self = walks[w](a.data(), a.size(), a.data(), a.size(), limit);
      ASSERT_EQ(self.steps, std::min(a.size(), limit));
      ASSERT_EQ(self.matches, std::min(a.size(), limit));
    }
  }
}

// JaccardAtLeast on hand-shaped sketches that reach the rejection bound and
// the split walk from every side: sizes around the prefix (64) and around k,
// identical sketches, disjoint value ranges, 0 and UINT64_MAX.
TEST(BottomKSimilarityTest, JaccardAtLeastEqualsThresholdedEstimateOnAdversarialSketches) {
  internal::SplitMix64 rng(24);
  for (uint32_t k : {16u, 64u, 128u, 130u, 256u}) {
    const size_t sizes[] = {1, 7, 8, 63, 64, 65, k / 2, k - 1, k};
    for (int trial = 0; trial < 400; ++trial) {
      const size_t na = std::min<size_t>(sizes[rng.Next() % std::size(sizes)], k);
      const size_t nb = std::min<size_t>(sizes[rng.Next() % std::size(sizes)], k);
      auto [av, bv] = OverlappingValues(rng, na, nb, trial % 5);
      switch (trial % 4) {
        case 0:
          break;
        case 1:
          bv = av;
          break;  // identical
        case 2:   // disjoint ranges: all of A below all of B
          for (auto& v : av) v >>= 2;
          for (auto& v : bv) v = (v >> 2) | (uint64_t{3} << 62);
          break;
        default:  // the extremes present in both
          av.front() = 0;
          bv.front() = 0;
          av.back() = std::numeric_limits<uint64_t>::max();
          bv.back() = std::numeric_limits<uint64_t>::max();
          break;
      }
      const BottomKSketch a = SketchOfValues(av, k);
      const BottomKSketch b = SketchOfValues(bv, k);
      const double exact = *EstimateJaccard(a, b);
      ASSERT_EQ(exact, OracleEstimate(a, b));
      const std::vector<double> thresholds = ThresholdsAround(rng, exact, {0.5, 1.0});
      for (double threshold : thresholds) {
        double estimate = -7.0;
        const bool at_least = *JaccardAtLeast(a, b, threshold, &estimate);
        ASSERT_EQ(at_least, exact >= threshold)
            << "k " << k << " trial " << trial << " na " << na << " nb " << nb << " threshold "
            << threshold << " exact " << exact;
        ASSERT_EQ(estimate, at_least ? exact : -7.0);
        ASSERT_EQ(*JaccardAtLeast(b, a, threshold, nullptr), at_least);
      }
    }
  }
}

// Both sketches shorter than k (short documents): the size-ratio and prefix
// bounds of the small-pair path must never reject a pair at or above the
// threshold. Sizes are close (where the bounds are tight) and far apart,
// the union below and above k, overlaps from none to all.
TEST(BottomKSimilarityTest, JaccardAtLeastOnShortSketchesEqualsThresholdedEstimate) {
  internal::SplitMix64 rng(31);
  for (uint32_t k : {64u, 128u, 256u}) {
    for (int trial = 0; trial < 600; ++trial) {
      const size_t na = 1 + rng.Next() % (k - 1);
      const size_t spread = trial % 3 == 0 ? k - 1 : 1 + na / 8;
      const size_t nb =
          std::clamp<size_t>(na + rng.Next() % (2 * spread + 1), spread, na + spread) - spread + 1;
      auto [av, bv] = OverlappingValues(rng, na, std::min<size_t>(nb, k - 1), trial % 5);
      const BottomKSketch a{k, av};
      const BottomKSketch b{k, bv};
      ASSERT_LT(a.values.size(), k);
      ASSERT_LT(b.values.size(), k);
      const double exact = *EstimateJaccard(a, b);
      ASSERT_EQ(exact, OracleEstimate(a, b));
      const double m = static_cast<double>(std::min(a.values.size(), b.values.size()));
      const double big = static_cast<double>(std::max(a.values.size(), b.values.size()));
      const std::vector<double> thresholds =
          ThresholdsAround(rng, exact, {m / big, std::nextafter(m / big, 2.0), 0.5, 0.8});
      for (double threshold : thresholds) {
        double estimate = -7.0;
        const bool at_least = *JaccardAtLeast(a, b, threshold, &estimate);
        ASSERT_EQ(at_least, exact >= threshold)
            << "k " << k << " trial " << trial << " na " << a.values.size() << " nb "
            << b.values.size() << " threshold " << threshold << " exact " << exact;
        ASSERT_EQ(estimate, at_least ? exact : -7.0);
        ASSERT_EQ(*JaccardAtLeast(b, a, threshold, nullptr), at_least);
      }
    }
  }
}

// The batch call gives, pair by pair, what the one-pair call gives, and
// leaves the estimates of rejected pairs alone.
TEST(BottomKSimilarityTest, JaccardAtLeastBatchEqualsOnePairCalls) {
  internal::SplitMix64 rng(8);
  for (int k : {16, 128}) {
    std::vector<BottomKSketch> left;
    std::vector<BottomKSketch> right;
    for (int trial = 0; trial < 400; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      left.push_back(SketchOf(pair.a, k));
      right.push_back(SketchOf(pair.b, k));
    }
    std::vector<const BottomKSketch*> pa;
    std::vector<const BottomKSketch*> pb;
    for (size_t i = 0; i < left.size(); ++i) {
      pa.push_back(&left[i]);
      pb.push_back(&right[i]);
    }
    for (double threshold : {0.0, 0.3, 0.5, 0.8, 1.0}) {
      std::vector<uint8_t> accepted(pa.size(), 7);
      std::vector<double> estimates(pa.size(), -7.0);
      const size_t count = JaccardAtLeastBatch(pa, pb, threshold, accepted, estimates);
      size_t expected_count = 0;
      for (size_t i = 0; i < pa.size(); ++i) {
        double estimate = -7.0;
        const bool ok = *JaccardAtLeast(left[i], right[i], threshold, &estimate);
        ASSERT_EQ(accepted[i], ok ? 1 : 0) << "pair " << i << " threshold " << threshold;
        ASSERT_EQ(estimates[i], estimate) << "pair " << i << " threshold " << threshold;
        expected_count += ok ? 1 : 0;
      }
      EXPECT_EQ(count, expected_count);
      EXPECT_GT(count, 0u);
      // Without estimates: the same decisions.
      std::vector<uint8_t> again(pa.size(), 7);
      EXPECT_EQ(JaccardAtLeastBatch(pa, pb, threshold, again, {}), count);
      EXPECT_EQ(again, accepted);
    }
  }
  EXPECT_EQ(JaccardAtLeastBatch({}, {}, 0.5, {}, {}), 0u);
}

TEST(BottomKSimilarityDeathTest, BatchRejectsMismatchedSpans) {
  const BottomKSketch a{4, {1}};
  const BottomKSketch* one[] = {&a};
  const BottomKSketch* two[] = {&a, &a};
  uint8_t accepted[2];
  double estimates[2];
  EXPECT_DEATH(JaccardAtLeastBatch(one, two, 0.5, std::span(accepted, 1), {}), "different sizes");
  EXPECT_DEATH(JaccardAtLeastBatch(two, two, 0.5, accepted, std::span(estimates, 1)),
               "estimates size");
}

TEST(BottomKSimilarityTest, RejectsDifferentK) {
  const BottomKSketch a{4, {1}};
  const BottomKSketch b{8, {1}};
  Result<double> estimate = EstimateJaccard(a, b);
  ASSERT_FALSE(estimate.ok());
  EXPECT_EQ(estimate.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(estimate.status().message(), testing::HasSubstr("different k (4 and 8)"));
  EXPECT_FALSE(JaccardAtLeast(a, b, 0.5, nullptr).ok());
}

TEST(KValueSimilarityTest, FractionOfEqualPositions) {
  const KValueSketch a{{1, 2, 3, 4}, false};
  const KValueSketch b{{1, 9, 3, 9}, false};
  EXPECT_DOUBLE_EQ(*EstimateJaccard(a, b), 0.5);
  EXPECT_DOUBLE_EQ(*EstimateJaccard(a, a), 1.0);
  const KValueSketch empty{{0, 0, 0, 0}, true};
  EXPECT_EQ(*EstimateJaccard(empty, empty), 0.0);
  EXPECT_EQ(*EstimateJaccard(a, empty), 0.0);
  EXPECT_EQ(*EstimateJaccard(KValueSketch{}, KValueSketch{}), 0.0);
}

TEST(KValueSimilarityTest, RejectsDifferentSizes) {
  Result<double> estimate = EstimateJaccard(KValueSketch{{1, 2}, false}, KValueSketch{{1}, false});
  ASSERT_FALSE(estimate.ok());
  EXPECT_THAT(estimate.status().message(), testing::HasSubstr("different sizes"));
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
