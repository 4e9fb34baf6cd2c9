// BottomKSummary and the summary-filtered JaccardAtLeast: the summary against
// its definition, the bound against the true intersection, and every
// decision against EstimateJaccard and the set-based oracle.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "neardup/minhash.h"
#include "neardup/similarity.h"
#include "sketch/similarity_kernels.h"
#include "sketch/similarity_test_util.h"
#include "util/mix.h"

namespace neardup {
namespace {

using testing_util::OracleEstimate;
using testing_util::OverlappingValues;
using testing_util::Pair;
using testing_util::RandomPair;
using testing_util::SketchOf;
using testing_util::SketchOfValues;
using testing_util::ThresholdsAround;

size_t TrueCommon(const BottomKSketch& a, const BottomKSketch& b) {
  std::set<uint64_t> in_a(a.values.begin(), a.values.end());
  size_t common = 0;
  for (uint64_t v : b.values) common += in_a.count(v);
  return common;
}

// The summary by its definition, with sets instead of bit tricks.
size_t DefinitionBound(const BottomKSketch& a, const BottomKSketch& b) {
  auto buckets = [](const BottomKSketch& s) {
    std::set<uint64_t> out;
    for (uint64_t v : s.values) out.insert(((v & 0xFFFFFFFFu) * kBottomKSummaryBuckets) >> 32);
    return out;
  };
  const std::set<uint64_t> ba = buckets(a);
  const std::set<uint64_t> bb = buckets(b);
  size_t shared = 0;
  for (uint64_t x : ba) shared += bb.count(x);
  return shared + std::min(a.values.size() - ba.size(), b.values.size() - bb.size());
}

// Checks JaccardAtLeast with summaries against EstimateJaccard, the oracle
// and the summary-free call, in both argument orders.
void ExpectSameDecisions(const BottomKSketch& a, const BottomKSketch& b,
                         std::span<const double> thresholds) {
  const BottomKSummary sa = SummarizeBottomK(a);
  const BottomKSummary sb = SummarizeBottomK(b);
  const double exact = *EstimateJaccard(a, b);
  ASSERT_EQ(exact, OracleEstimate(a, b));
  for (double threshold : thresholds) {
    double estimate = -7.0;
    const bool at_least = *JaccardAtLeast(a, sa, b, sb, threshold, &estimate);
    ASSERT_EQ(at_least, exact >= threshold)
        << "k " << a.k << " na " << a.values.size() << " nb " << b.values.size() << " threshold "
        << threshold << " exact " << exact;
    ASSERT_EQ(estimate, at_least ? exact : -7.0);
    ASSERT_EQ(*JaccardAtLeast(b, sb, a, sa, threshold, nullptr), at_least);
    ASSERT_EQ(*JaccardAtLeast(a, b, threshold, nullptr), at_least);
  }
}

TEST(BottomKSummaryTest, KnownAnswer) {
  // Buckets: 0 -> 0, 2^31 -> 224, 2^32 - 1 -> 447, 2^40 -> 0 (only the low
  // 32 bits count), so 4 values occupy 3 buckets: excess 1.
  const BottomKSketch sketch{8, {0, uint64_t{1} << 31, 0xFFFFFFFFu, uint64_t{1} << 40}};
  const BottomKSummary summary = SummarizeBottomK(sketch);
  EXPECT_EQ(summary.size, 4u);
  EXPECT_EQ(summary.excess, 1u);
  BottomKSummary expected;
  expected.buckets[0] = 1;
  expected.buckets[3] = uint64_t{1} << (224 - 192);
  expected.buckets[6] = uint64_t{1} << 63;
  expected.size = 4;
  expected.excess = 1;
  EXPECT_EQ(summary, expected);
  EXPECT_EQ(SummarizeBottomK(BottomKSketch{8, {}}), BottomKSummary{});
  // Identical sketches: the bound is the size (3 shared buckets + 1 excess).
  EXPECT_EQ(MaxCommonValues(summary, summary), 4u);
}

TEST(BottomKSummaryTest, MaxCommonValuesBoundsTheIntersection) {
  internal::SplitMix64 rng(41);
  for (int k : {1, 16, 128, 256, 1024}) {
    for (int trial = 0; trial < 200; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      const size_t bound = MaxCommonValues(SummarizeBottomK(a), SummarizeBottomK(b));
      ASSERT_EQ(bound, DefinitionBound(a, b)) << "k " << k << " trial " << trial;
      for (internal::SummaryKernel kernel : internal::SupportedSummaryKernels()) {
        ASSERT_EQ(internal::MaxCommonValuesWith(kernel, SummarizeBottomK(a), SummarizeBottomK(b)),
                  bound)
            << "kernel " << static_cast<int>(kernel);
      }
      ASSERT_GE(bound, TrueCommon(a, b)) << "k " << k << " trial " << trial;
      ASSERT_EQ(MaxCommonValues(SummarizeBottomK(b), SummarizeBottomK(a)), bound);
    }
  }
  // Every value in one bucket (low 32 bits equal): the bound degrades to
  // min(size) but stays an upper bound.
  for (size_t n : {1u, 2u, 64u, 128u}) {
    BottomKSketch a{128, {}};
    BottomKSketch b{128, {}};
    for (size_t i = 0; i < n; ++i) a.values.push_back((i + 1) << 32);
    for (size_t i = 0; i < n; ++i) b.values.push_back((i + 2) << 32);
    const size_t bound = MaxCommonValues(SummarizeBottomK(a), SummarizeBottomK(b));
    EXPECT_EQ(bound, n);
    EXPECT_GE(bound, TrueCommon(a, b));
  }
}

// What the summary is for: unrelated full k = 128 sketches are rejected at
// threshold 0.5 (64 common values needed) from the summaries alone.
TEST(BottomKSummaryTest, RejectsUnrelatedFullSketchesAtHalf) {
  internal::SplitMix64 rng(43);
  int below = 0;
  constexpr int kTrials = 1000;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<uint64_t> fa(1000);
    std::vector<uint64_t> fb(1000);
    for (auto& v : fa) v = rng.Next();
    for (auto& v : fb) v = rng.Next();
    const size_t bound =
        MaxCommonValues(SummarizeBottomK(SketchOf(fa, 128)), SummarizeBottomK(SketchOf(fb, 128)));
    below += bound < 64 ? 1 : 0;
  }
  EXPECT_GE(below, kTrials * 99 / 100);
}

TEST(BottomKSummaryTest, JaccardAtLeastEqualsThresholdedEstimateOnRandomPairs) {
  internal::SplitMix64 rng(44);
  for (int k : {1, 2, 16, 128, 256, 5000}) {
    const int trials = k == 5000 ? 20 : 300;
    for (int trial = 0; trial < trials; ++trial) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      const BottomKSketch a = SketchOf(pair.a, k);
      const BottomKSketch b = SketchOf(pair.b, k);
      const double exact = *EstimateJaccard(a, b);
      const double m_over_k = std::round(exact * k) / k;
      const std::vector<double> thresholds = ThresholdsAround(
          rng, exact,
          {m_over_k, 0.0, -0.5, 0.5, 1.0, 1.5, std::numeric_limits<double>::quiet_NaN()});
      ExpectSameDecisions(a, b, thresholds);
    }
  }
}

// Shapes that stress the bucket bound: dense integers, one bucket, the
// extremes; sizes around the summary's and k's edges; both shorter than k.
TEST(BottomKSummaryTest, JaccardAtLeastEqualsThresholdedEstimateOnAdversarialSketches) {
  internal::SplitMix64 rng(45);
  for (uint32_t k : {16u, 64u, 128u, 130u, 256u, 600u}) {
    const size_t sizes[] = {1, 7, 8, 63, 64, 65, k / 2, k - 1, k};
    for (int trial = 0; trial < 300; ++trial) {
      const size_t na = std::min<size_t>(sizes[rng.Next() % std::size(sizes)], k);
      const size_t nb = std::min<size_t>(sizes[rng.Next() % std::size(sizes)], k);
      auto [av, bv] = OverlappingValues(rng, na, nb, trial % 5);
      if (trial % 7 == 0) bv = av;
      if (trial % 11 == 0) {
        // One bucket on both sides: only the high 32 bits differ.
        for (auto& v : av) v <<= 32;
        for (auto& v : bv) v <<= 32;
      }
      const BottomKSketch a = SketchOfValues(av, k);
      const BottomKSketch b = SketchOfValues(bv, k);
      const double exact = *EstimateJaccard(a, b);
      const double small = static_cast<double>(std::min(a.values.size(), b.values.size()));
      const double big = static_cast<double>(std::max(a.values.size(), b.values.size()));
      const std::vector<double> thresholds =
          ThresholdsAround(rng, exact, {big > 0 ? small / big : 0.0, 0.5, 0.8, 1.0});
      ExpectSameDecisions(a, b, thresholds);
    }
  }
}

// The pairs call gives, pair by pair, the one-pair call's result: blocks
// longer than one internal block, repeated and self pairs, empty sketches.
TEST(BottomKSummaryTest, JaccardAtLeastPairsEqualsOnePairCalls) {
  internal::SplitMix64 rng(46);
  // k = 300: sizes above the pairs call's table take the division.
  for (int k : {16, 128, 300}) {
    std::vector<BottomKSketch> sketches;
    for (int d = 0; d < 300; ++d) {
      const Pair pair = RandomPair(rng, static_cast<size_t>(k));
      sketches.push_back(SketchOf(pair.a, k));
      sketches.push_back(SketchOf(pair.b, k));
    }
    sketches.push_back(BottomKSketch{static_cast<uint32_t>(k), {}});
    std::vector<const BottomKSketch*> pointers;
    std::vector<BottomKSummary> summaries;
    for (const BottomKSketch& s : sketches) {
      pointers.push_back(&s);
      summaries.push_back(SummarizeBottomK(s));
    }
    std::vector<std::pair<uint64_t, uint64_t>> pairs;
    for (size_t i = 0; i + 1 < sketches.size(); i += 2) pairs.emplace_back(i, i + 1);
    for (int p = 0; p < 700; ++p) {
      pairs.emplace_back(rng.Next() % sketches.size(), rng.Next() % sketches.size());
    }
    pairs.emplace_back(sketches.size() - 1, sketches.size() - 1);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double exact = *EstimateJaccard(sketches[0], sketches[1]);
    for (double threshold : {-1.0, 0.0, 0.3, 0.5, 0.8, 1.0, 1.5, nan, exact,
                             std::nextafter(exact, 2.0), std::nextafter(exact, -1.0)}) {
      std::vector<uint8_t> accepted(pairs.size(), 7);
      std::vector<double> estimates(pairs.size(), -7.0);
      const size_t count =
          JaccardAtLeastPairs(pointers, summaries, pairs, threshold, accepted, estimates);
      size_t expected_count = 0;
      for (size_t i = 0; i < pairs.size(); ++i) {
        const BottomKSketch& a = sketches[pairs[i].first];
        const BottomKSketch& b = sketches[pairs[i].second];
        double estimate = -7.0;
        const bool ok = *JaccardAtLeast(a, b, threshold, &estimate);
        ASSERT_EQ(ok, *EstimateJaccard(a, b) >= threshold);
        ASSERT_EQ(accepted[i], ok ? 1 : 0) << "pair " << i << " threshold " << threshold;
        ASSERT_EQ(estimates[i], estimate) << "pair " << i << " threshold " << threshold;
        expected_count += ok ? 1 : 0;
      }
      EXPECT_EQ(count, expected_count);
      if (threshold <= exact) {
        EXPECT_GT(count, 0u);
      }
      std::vector<uint8_t> again(pairs.size(), 7);
      EXPECT_EQ(JaccardAtLeastPairs(pointers, summaries, pairs, threshold, again, {}), count);
      EXPECT_EQ(again, accepted);
      // Every filter kernel this CPU runs gives the same decisions and estimates.
      for (internal::SummaryKernel kernel : internal::SupportedSummaryKernels()) {
        std::vector<uint8_t> by_kernel(pairs.size(), 7);
        std::vector<double> kernel_estimates(pairs.size(), -7.0);
        EXPECT_EQ(internal::JaccardAtLeastPairsWith(kernel, pointers, summaries, pairs, threshold,
                                                    by_kernel, kernel_estimates),
                  count);
        EXPECT_EQ(by_kernel, accepted) << "kernel " << static_cast<int>(kernel);
        EXPECT_EQ(kernel_estimates, estimates) << "kernel " << static_cast<int>(kernel);
      }
    }
  }
  uint8_t none[1];
  EXPECT_EQ(JaccardAtLeastPairs({}, {}, {}, 0.5, std::span(none, 0), {}), 0u);
}

// The pairs call's integer form of the summary test (a table of the fewest
// matches per size, the division above it) against the division, for every
// bound and size up to past the table, at thresholds on, just above and just
// below every ratio of a few sizes, and at the edges (0, -0, 1, above 1,
// negative, NaN, infinities).
TEST(BottomKSummaryTest, IntegerBoundTestEqualsDivision) {
  std::vector<double> thresholds = {0.0,
                                    -0.0,
                                    1.0,
                                    1.5,
                                    -1.0,
                                    std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::denorm_min(),
                                    std::nextafter(1.0, 0.0)};
  for (size_t most : {3u, 7u, 100u, 127u, 128u, 129u, 255u, 256u, 257u, 300u}) {
    for (size_t m = 0; m <= most; ++m) {
      const double ratio = internal::Ratio(m, most);
      thresholds.push_back(ratio);
      thresholds.push_back(std::nextafter(ratio, 2.0));
      thresholds.push_back(std::nextafter(ratio, -1.0));
    }
  }
  for (double threshold : thresholds) {
    for (size_t most = 1; most <= 300; ++most) {
      for (size_t bound = 0; bound <= most; ++bound) {
        ASSERT_EQ(internal::SummaryBoundRejects(bound, most, threshold),
                  !(internal::Ratio(bound, most) >= threshold))
            << "bound " << bound << " most " << most << " threshold " << threshold;
      }
    }
  }
}

TEST(BottomKSummaryDeathTest, PairsRejectsBadArguments) {
  const BottomKSketch a{4, {1, 2}};
  const BottomKSketch b{8, {1, 2}};
  const BottomKSketch* pointers[] = {&a, &b};
  const BottomKSummary summaries[] = {SummarizeBottomK(a), SummarizeBottomK(b)};
  const std::pair<uint64_t, uint64_t> in_range[] = {{0, 0}};
  const std::pair<uint64_t, uint64_t> past_end[] = {{0, 2}};
  const std::pair<uint64_t, uint64_t> different_k[] = {{0, 1}};
  uint8_t accepted[1];
  double estimates[2];
  EXPECT_DEATH(JaccardAtLeastPairs(pointers, std::span(summaries, 1), in_range, 0.5, accepted, {}),
               "summaries for");
  EXPECT_DEATH(JaccardAtLeastPairs(pointers, summaries, past_end, 0.5, accepted, {}),
               "indexes past");
  EXPECT_DEATH(JaccardAtLeastPairs(pointers, summaries, in_range, 0.5, std::span(accepted, 0), {}),
               "accepted size");
  EXPECT_DEATH(JaccardAtLeastPairs(pointers, summaries, in_range, 0.5, accepted, estimates),
               "estimates size");
  EXPECT_DEATH(JaccardAtLeastPairs(pointers, summaries, different_k, 0.5, accepted, {}),
               "different k");
}

TEST(BottomKSummaryTest, OnePairRejectsDifferentK) {
  const BottomKSketch a{4, {1, 2}};
  const BottomKSketch b{8, {1, 2}};
  Result<bool> at_least =
      JaccardAtLeast(a, SummarizeBottomK(a), b, SummarizeBottomK(b), 0.5, nullptr);
  ASSERT_FALSE(at_least.ok());
  EXPECT_EQ(at_least.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neardup
