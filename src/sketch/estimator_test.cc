// Statistical tests: the MinHash estimators are unbiased with standard error
// sqrt(J(1 - J) / k). Seeded, so deterministic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

#include "gtest/gtest.h"
#include "neardup/minhash.h"
#include "neardup/similarity.h"
#include "util/mix.h"

namespace neardup {
namespace {

constexpr size_t kUnionSize = 4000;
constexpr int kPairsPerJaccard = 64;

// Two sets of random 64-bit features with |A ∩ B| / |A ∪ B| == jaccard
// exactly (jaccard * kUnionSize common, the rest split evenly).
struct SetPair {
  std::vector<uint64_t> a;
  std::vector<uint64_t> b;
};
SetPair MakePair(double jaccard, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  const auto common = static_cast<size_t>(std::lround(jaccard * kUnionSize));
  const size_t only = (kUnionSize - common) / 2;
  SetPair pair;
  for (size_t i = 0; i < common; ++i) {
    const uint64_t f = rng.Next();
    pair.a.push_back(f);
    pair.b.push_back(f);
  }
  for (size_t i = 0; i < only; ++i) pair.a.push_back(rng.Next());
  for (size_t i = 0; i < only; ++i) pair.b.push_back(rng.Next());
  return pair;
}

struct Estimates {
  std::vector<double> values;
  double Mean() const {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
};

// Checks the estimates of kPairsPerJaccard independent pairs: each within 5
// standard errors, and their mean within 3 standard errors of the mean (so a
// biased estimator fails even where single estimates look plausible).
void ExpectUnbiased(const Estimates& estimates, double jaccard, int k, const char* name) {
  const double standard_error = std::sqrt(jaccard * (1 - jaccard) / k);
  for (double v : estimates.values) {
    EXPECT_NEAR(v, jaccard, 5 * standard_error) << name << " k " << k;
  }
  EXPECT_NEAR(estimates.Mean(), jaccard, 3 * standard_error / std::sqrt(kPairsPerJaccard))
      << name << " k " << k;
}

class EstimatorTest : public ::testing::TestWithParam<double> {};

TEST_P(EstimatorTest, BottomKAndKValueAreUnbiased) {
  const double jaccard = GetParam();
  for (int k : {128, 256}) {
    Estimates bottom_k;
    Estimates k_value;
    // The Jaccard of the two sketch sets, |A_s ∩ B_s| / |A_s ∪ B_s|: a
    // plausible-looking but biased (low) estimator, to show the test has teeth.
    Estimates sketch_sets;
    for (int p = 0; p < kPairsPerJaccard; ++p) {
      const SetPair pair = MakePair(jaccard, static_cast<uint64_t>(k * 1000 + p) + 17);
      BottomKBuilder bottom_a(k), bottom_b(k);
      KValueBuilder value_a(k, 5), value_b(k, 5);
      for (uint64_t f : pair.a) {
        bottom_a.Add(f);
        value_a.Add(f);
      }
      for (uint64_t f : pair.b) {
        bottom_b.Add(f);
        value_b.Add(f);
      }
      const BottomKSketch sa = bottom_a.Finish();
      const BottomKSketch sb = bottom_b.Finish();
      bottom_k.values.push_back(*EstimateJaccard(sa, sb));
      std::vector<uint64_t> common;
      std::set_intersection(sa.values.begin(), sa.values.end(), sb.values.begin(), sb.values.end(),
                            std::back_inserter(common));
      sketch_sets.values.push_back(static_cast<double>(common.size()) /
                                   static_cast<double>(2 * k - common.size()));
      k_value.values.push_back(*EstimateJaccard(value_a.Finish(), value_b.Finish()));
    }
    ExpectUnbiased(bottom_k, jaccard, k, "bottom-k");
    ExpectUnbiased(k_value, jaccard, k, "k-value");
    if (jaccard == 0.5) {
      const double standard_error = std::sqrt(jaccard * (1 - jaccard) / k);
      EXPECT_LT(sketch_sets.Mean(), jaccard - 3 * standard_error / std::sqrt(kPairsPerJaccard));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Jaccard, EstimatorTest, ::testing::Values(0.1, 0.3, 0.5, 0.7, 0.9));

TEST(EstimatorTest, IdenticalAndDisjointSets) {
  const SetPair same = MakePair(1.0, 3);
  const SetPair disjoint = MakePair(0.0, 4);
  for (int k : {128, 256}) {
    BottomKBuilder a(k), b(k), c(k);
    KValueBuilder va(k, 1), vb(k, 1), vc(k, 1);
    for (uint64_t f : same.a) {
      a.Add(f);
      va.Add(f);
    }
    for (uint64_t f : same.b) {
      b.Add(f);
      vb.Add(f);
    }
    for (uint64_t f : disjoint.b) {
      c.Add(f);
      vc.Add(f);
    }
    EXPECT_EQ(*EstimateJaccard(a.Finish(), b.Finish()), 1.0);
    EXPECT_EQ(*EstimateJaccard(va.Finish(), vb.Finish()), 1.0);
    EXPECT_EQ(*EstimateJaccard(a.Finish(), c.Finish()), 0.0);
    EXPECT_EQ(*EstimateJaccard(va.Finish(), vc.Finish()), 0.0);
  }
}

}  // namespace
}  // namespace neardup
