#include "neardup/lsh_params.h"
#include "index/lsh_params_exhaustive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace neardup {
namespace {

using ::testing::HasSubstr;

// Known answers: the exact (rational-arithmetic) argmin and areas, computed by
// expanding (1 - s^r)^b binomially and integrating term by term with Python's
// fractions.Fraction over every (b, r) with b * r <= num_hashes.
struct KnownChoice {
  double threshold;
  int num_hashes;
  double fp_weight;
  double fn_weight;
  int num_bands;
  int rows_per_band;
  double fp_area;
  double fn_area;
};

TEST(ChooseLshParamsTest, MatchesExactKnownAnswers) {
  const KnownChoice known[] = {
      {0.8, 128, 0.5, 0.5, 9, 13, 0.02531186320336636, 0.033282136012204123},
      {0.5, 128, 0.5, 0.5, 25, 5, 0.05372159119723905, 0.033752509448832534},
      {0.9, 64, 0.5, 0.5, 3, 21, 0.012695353702857686, 0.030474159199686438},
      {0.7, 128, 0.1, 0.9, 20, 6, 0.14237664015428253, 0.0027666763349735485},
      {0.3, 32, 0.5, 0.5, 12, 2, 0.08183179878720705, 0.030001149963692433},
      {0.8, 256, 0.5, 0.5, 17, 15, 0.0260325260425259, 0.0238395645552025},
  };
  for (const KnownChoice& k : known) {
    SCOPED_TRACE(::testing::Message()
                 << "threshold " << k.threshold << " num_hashes " << k.num_hashes << " weights "
                 << k.fp_weight << "/" << k.fn_weight);
    LshParamsOptions options;
    options.threshold = k.threshold;
    options.num_hashes = k.num_hashes;
    options.false_positive_weight = k.fp_weight;
    options.false_negative_weight = k.fn_weight;
    Result<LshParamsChoice> choice = ChooseLshParams(options);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->params.num_bands, k.num_bands);
    EXPECT_EQ(choice->params.rows_per_band, k.rows_per_band);
    EXPECT_NEAR(choice->false_positive_area, k.fp_area, 1e-9);
    EXPECT_NEAR(choice->false_negative_area, k.fn_area, 1e-9);
    EXPECT_NEAR(choice->weighted_error, k.fp_weight * k.fp_area + k.fn_weight * k.fn_area, 1e-9);
  }
}

// Brute force with a much finer midpoint rule over every (b, r).
struct BruteForce {
  LshParams best;
  double best_error;
  double second_error;
};

BruteForce BruteForceChoose(const LshParamsOptions& o) {
  constexpr int kSteps = 10000;
  BruteForce out{
      {0, 0}, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const double t = o.threshold;
  for (int r = 1; r <= o.num_hashes; ++r) {
    const int max_b = o.num_hashes / r;
    // fp[b], fn[b]: midpoint sums, (1 - s^r)^b built up by repeated products.
    std::vector<double> fp(max_b + 1, 0.0), fn(max_b + 1, 0.0);
    for (int i = 0; i < kSteps; ++i) {
      const double miss_lo = 1 - std::pow(t * (i + 0.5) / kSteps, r);
      const double miss_hi = 1 - std::pow(t + (1 - t) * (i + 0.5) / kSteps, r);
      double all_lo = 1, all_hi = 1;
      for (int b = 1; b <= max_b; ++b) {
        all_lo *= miss_lo;
        all_hi *= miss_hi;
        fp[b] += (1 - all_lo) * t / kSteps;
        fn[b] += all_hi * (1 - t) / kSteps;
      }
    }
    for (int b = 1; b <= max_b; ++b) {
      const double error = o.false_positive_weight * fp[b] + o.false_negative_weight * fn[b];
      if (error < out.best_error) {
        out.second_error = out.best_error;
        out.best_error = error;
        out.best = {b, r};
      } else if (error < out.second_error) {
        out.second_error = error;
      }
    }
  }
  return out;
}

TEST(ChooseLshParamsTest, AgreesWithFineBruteForce) {
  for (double threshold : {0.2, 0.45, 0.6, 0.75, 0.85, 0.95}) {
    for (double fn_weight : {0.3, 0.7}) {
      LshParamsOptions options;
      options.threshold = threshold;
      options.num_hashes = 64;
      options.false_negative_weight = fn_weight;
      options.false_positive_weight = 1 - fn_weight;
      SCOPED_TRACE(::testing::Message() << "threshold " << threshold << " fn " << fn_weight);
      Result<LshParamsChoice> choice = ChooseLshParams(options);
      ASSERT_TRUE(choice.ok()) << choice.status();
      const BruteForce brute = BruteForceChoose(options);
      EXPECT_NEAR(choice->weighted_error, brute.best_error, 1e-7);
      if (brute.second_error - brute.best_error > 2e-7) {
        EXPECT_EQ(choice->params.num_bands, brute.best.num_bands);
        EXPECT_EQ(choice->params.rows_per_band, brute.best.rows_per_band);
      }
    }
  }
}

TEST(ChooseLshParamsTest, ThresholdAtHalfIsTheCurveMidpoint) {
  for (double threshold : {0.3, 0.5, 0.8, 0.9}) {
    LshParamsOptions options;
    options.threshold = threshold;
    Result<LshParamsChoice> choice = ChooseLshParams(options);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_LE(choice->params.num_bands * choice->params.rows_per_band, options.num_hashes);
    EXPECT_NEAR(LshCandidateProbability(choice->params, choice->threshold_at_half), 0.5, 1e-12);
    // The approximation of Mining of Massive Datasets, (1/b)^(1/r), is close.
    EXPECT_NEAR(choice->threshold_at_half,
                std::pow(1.0 / choice->params.num_bands, 1.0 / choice->params.rows_per_band), 0.05);
  }
}

TEST(ChooseLshParamsTest, MoreFalseNegativeWeightMovesTheCurveLeft) {
  // For an exact argmin over a fixed finite set, raising the weight of the
  // false-negative area can never raise the chosen fn area nor lower the fp
  // area (add the two optimality inequalities).
  for (double threshold : {0.5, 0.8}) {
    double previous_fn = std::numeric_limits<double>::infinity();
    double previous_fp = -1;
    double first_half = 0, last_half = 0;
    for (int step = 1; step <= 9; ++step) {
      LshParamsOptions options;
      options.threshold = threshold;
      options.false_negative_weight = step / 10.0;
      options.false_positive_weight = 1 - step / 10.0;
      Result<LshParamsChoice> choice = ChooseLshParams(options);
      ASSERT_TRUE(choice.ok()) << choice.status();
      EXPECT_LE(choice->false_negative_area, previous_fn + 1e-15) << "step " << step;
      EXPECT_GE(choice->false_positive_area, previous_fp - 1e-15) << "step " << step;
      EXPECT_GE(LshCandidateProbability(choice->params, threshold), 0.0);
      previous_fn = choice->false_negative_area;
      previous_fp = choice->false_positive_area;
      if (step == 1) first_half = choice->threshold_at_half;
      last_half = choice->threshold_at_half;
    }
    EXPECT_LT(last_half, first_half) << "threshold " << threshold;
  }
}

TEST(ChooseLshParamsTest, ZeroWeightsPickTheExtremes) {
  LshParamsOptions options;
  options.num_hashes = 64;
  options.false_positive_weight = 0;
  options.false_negative_weight = 1;
  Result<LshParamsChoice> only_fn = ChooseLshParams(options);
  ASSERT_TRUE(only_fn.ok());
  // Least misses: every value its own band.
  EXPECT_EQ(only_fn->params.num_bands, 64);
  EXPECT_EQ(only_fn->params.rows_per_band, 1);
  options.false_positive_weight = 1;
  options.false_negative_weight = 0;
  Result<LshParamsChoice> only_fp = ChooseLshParams(options);
  ASSERT_TRUE(only_fp.ok());
  EXPECT_EQ(only_fp->params.num_bands, 1);
  EXPECT_EQ(only_fp->params.rows_per_band, 64);
}

TEST(ChooseLshParamsTest, SingleHash) {
  LshParamsOptions options;
  options.num_hashes = 1;
  Result<LshParamsChoice> choice = ChooseLshParams(options);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->params.num_bands, 1);
  EXPECT_EQ(choice->params.rows_per_band, 1);
  // P(s) = s: fp = t^2/2, fn = (1-t)^2/2.
  EXPECT_NEAR(choice->false_positive_area, 0.32, 1e-12);
  EXPECT_NEAR(choice->false_negative_area, 0.02, 1e-12);
}

TEST(ChooseLshParamsTest, RejectsBadOptions) {
  const auto expect_invalid = [](LshParamsOptions options, const char* words) {
    Result<LshParamsChoice> choice = ChooseLshParams(options);
    ASSERT_FALSE(choice.ok());
    EXPECT_EQ(choice.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(choice.status().message(), HasSubstr(words));
  };
  for (double t : {0.0, 1.0, -0.5, 1.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    LshParamsOptions options;
    options.threshold = t;
    expect_invalid(options, "threshold");
  }
  for (int k : {0, -3, kMaxLshNumHashes + 1}) {
    LshParamsOptions options;
    options.num_hashes = k;
    expect_invalid(options, "num_hashes");
  }
  LshParamsOptions options;
  options.false_positive_weight = -0.1;
  expect_invalid(options, "false_positive_weight (-0.1");
  options = {};
  options.false_negative_weight = std::nan("");
  expect_invalid(options, "false_negative_weight");
  options = {};
  options.false_positive_weight = 0;
  options.false_negative_weight = 0;
  expect_invalid(options, "both 0");
}

// The choices are evaluated on all cores: the areas (and the explanation,
// which lists the runners-up) must be the same bits at any thread count.
TEST(ChooseLshParamsTest, SameBitsAtEveryThreadCount) {
  for (double threshold : {0.3, 0.5, 0.8, 0.95}) {
    LshParamsOptions options;
    options.threshold = threshold;
    options.num_hashes = 100;
    std::vector<double> areas;
    std::string first_text;
    for (int threads : {1, 2, 3}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      Result<LshParamsChoice> choice = ChooseLshParams(options);
      ASSERT_TRUE(choice.ok());
      const std::string text = ExplainLshParams(*choice, options);
      if (threads == 1) {
        areas = {choice->false_positive_area, choice->false_negative_area, choice->weighted_error};
        first_text = text;
        continue;
      }
      EXPECT_EQ(areas, (std::vector<double>{choice->false_positive_area,
                                            choice->false_negative_area, choice->weighted_error}));
      EXPECT_EQ(text, first_text) << threads << " threads";
    }
  }
}

// Chooses for these options with the pruned and the full search, expects the
// same bits from both, and returns the pruned choice (nullopt if either
// failed).
std::optional<LshParamsChoice> ExpectPrunedEqualsFull(int num_hashes, double threshold,
                                                      double fp_weight, double fn_weight) {
  LshParamsOptions options;
  options.threshold = threshold;
  options.num_hashes = num_hashes;
  options.false_positive_weight = fp_weight;
  options.false_negative_weight = fn_weight;
  Result<LshParamsChoice> pruned = ChooseLshParams(options);
  Result<LshParamsChoice> full = internal::ChooseLshParamsExhaustive(options);
  EXPECT_TRUE(pruned.ok() && full.ok());
  if (!pruned.ok() || !full.ok()) return std::nullopt;
  SCOPED_TRACE(std::to_string(num_hashes) + " hashes, threshold " + std::to_string(threshold) +
               ", weights " + std::to_string(fp_weight) + "/" + std::to_string(fn_weight));
  EXPECT_EQ(pruned->params.num_bands, full->params.num_bands);
  EXPECT_EQ(pruned->params.rows_per_band, full->params.rows_per_band);
  EXPECT_EQ(pruned->false_positive_area, full->false_positive_area);
  EXPECT_EQ(pruned->false_negative_area, full->false_negative_area);
  EXPECT_EQ(pruned->weighted_error, full->weighted_error);
  EXPECT_EQ(pruned->threshold_at_half, full->threshold_at_half);
  return *pruned;
}

// ChooseLshParams skips the shapes its bounds say cannot win: over a grid of
// thresholds, sketch sizes and weights it chooses the same bits as the search
// of every shape.
TEST(ChooseLshParamsTest, ThePrunedSearchChoosesAsTheFullSearch) {
  const std::vector<std::pair<double, double>> weights = {
      {0.5, 0.5}, {1.0, 0.0}, {0.0, 1.0}, {0.9, 0.1}, {0.05, 1.0}};
  int checked = 0;
  for (int num_hashes : {1, 2, 3, 7, 16, 64, 128, 130}) {
    for (double threshold = 0.05; threshold < 0.99; threshold += 0.1) {
      for (const auto& [fp_weight, fn_weight] : weights) {
        ExpectPrunedEqualsFull(num_hashes, threshold, fp_weight, fn_weight);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8 * 10 * 5);
}

// ... and for the options in use: the engine's weights (0.05 / 0.95, dedup's
// default 128 hashes at 0.8 is 16 x 8) and even ones, at 0.5, 0.8 and 0.9,
// for 128 and 1024 hashes, and one point at kMaxLshNumHashes (the full search
// there takes seconds).
TEST(ChooseLshParamsTest, ThePrunedSearchChoosesAsTheFullSearchForTheOptionsInUse) {
  struct Case {
    int num_hashes;
    double threshold;
    double fp_weight;
    double fn_weight;
  };
  std::vector<Case> cases;
  for (int num_hashes : {128, 1024}) {
    for (double threshold : {0.5, 0.8, 0.9}) {
      cases.push_back({num_hashes, threshold, 0.05, 0.95});
      cases.push_back({num_hashes, threshold, 0.5, 0.5});
    }
  }
  cases.push_back({kMaxLshNumHashes, 0.8, 0.05, 0.95});
  for (const Case& c : cases) {
    std::optional<LshParamsChoice> pruned =
        ExpectPrunedEqualsFull(c.num_hashes, c.threshold, c.fp_weight, c.fn_weight);
    ASSERT_TRUE(pruned.has_value());
    if (c.num_hashes == 128 && c.threshold == 0.8 && c.fp_weight == 0.05) {
      EXPECT_EQ(pruned->params.num_bands, 16);
      EXPECT_EQ(pruned->params.rows_per_band, 8);
    }
  }
}

// ChooseLshParams keeps nothing between calls: asked A, A' (one input
// changed), A again, it gives A's choice each time.
TEST(ChooseLshParamsTest, KeepsNoChoiceBetweenCalls) {
  LshParamsOptions a;
  a.threshold = 0.7;
  a.num_hashes = 96;
  std::vector<LshParamsOptions> changed(4, a);
  changed[0].threshold = 0.9;
  changed[1].num_hashes = 40;
  changed[2].false_positive_weight = 5.0;
  changed[3].false_negative_weight = 5.0;
  Result<LshParamsChoice> a_choice = ChooseLshParams(a);
  ASSERT_TRUE(a_choice.ok());
  for (const LshParamsOptions& other : changed) {
    Result<LshParamsChoice> other_choice = ChooseLshParams(other);
    ASSERT_TRUE(other_choice.ok());
    EXPECT_NE(a_choice->weighted_error, other_choice->weighted_error);
    Result<LshParamsChoice> again = ChooseLshParams(a);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->weighted_error, a_choice->weighted_error);
    EXPECT_EQ(again->params.num_bands, a_choice->params.num_bands);
  }
}

TEST(ExplainLshParamsTest, DescribesTheChoice) {
  LshParamsOptions options;  // threshold 0.8, 128 hashes: b = 9, r = 13
  Result<LshParamsChoice> choice = ChooseLshParams(options);
  ASSERT_TRUE(choice.ok());
  const std::string text = ExplainLshParams(*choice, options);
  EXPECT_THAT(text, HasSubstr("num_bands = 9, rows_per_band = 13 (uses 117 values)"));
  EXPECT_THAT(text, HasSubstr("1 - (1 - s^13)^9"));
  for (const char* s : {"0.500", "0.600", "0.700", "0.900", "1.000"}) {
    EXPECT_THAT(text, HasSubstr(s));
  }
  EXPECT_THAT(text, HasSubstr("0.800  0.398844"));  // P(0.8) = 1 - (1 - 0.8^13)^9
  EXPECT_THAT(text, HasSubstr("<- threshold"));
  EXPECT_THAT(text, HasSubstr("False positive area"));
  EXPECT_THAT(text, HasSubstr("False negative area"));
  EXPECT_THAT(text, HasSubstr("Runner-up"));
  EXPECT_THAT(text, HasSubstr("num_bands =   9, rows_per_band =  14"));  // the exact runner-up
}

}  // namespace
}  // namespace neardup
