#include "neardup/lsh_params.h"
#include "index/lsh_params_uncached.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace neardup {
namespace {

// Simpson intervals on each side of the threshold. The integrands are
// polynomials of degree b * r <= num_hashes whose transition is at least
// about 1/num_hashes wide; 1024 intervals keep the areas accurate to ~1e-9
// for num_hashes = 128, far below the gaps between neighbouring choices.
constexpr int kSimpsonIntervals = 1024;

// Relative tolerance under which two weighted errors count as a tie.
constexpr double kTieTolerance = 1e-12;

struct Candidate {
  LshParams params;
  double fp_area;
  double fn_area;
  double error;
};

// Simpson nodes and weights (including the factor h/3) on [lo, hi].
struct Rule {
  std::vector<double> nodes;
  std::vector<double> weights;
};

Rule SimpsonRule(double lo, double hi) {
  Rule rule;
  const double h = (hi - lo) / kSimpsonIntervals;
  rule.nodes.resize(kSimpsonIntervals + 1);
  rule.weights.resize(kSimpsonIntervals + 1);
  for (int i = 0; i <= kSimpsonIntervals; ++i) {
    rule.nodes[i] = i == kSimpsonIntervals ? hi : lo + h * i;
    const double coefficient = (i == 0 || i == kSimpsonIntervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    rule.weights[i] = coefficient * h / 3.0;
  }
  return rule;
}

Status ValidateOptions(const LshParamsOptions& options) {
  if (!(options.threshold > 0.0 && options.threshold < 1.0)) {
    return InvalidArgumentError("threshold (" + std::to_string(options.threshold) +
                                ") must be strictly between 0 and 1");
  }
  if (options.num_hashes < 1 || options.num_hashes > kMaxLshNumHashes) {
    return InvalidArgumentError("num_hashes (" + std::to_string(options.num_hashes) +
                                ") must be between 1 and " + std::to_string(kMaxLshNumHashes));
  }
  if (!(options.false_positive_weight >= 0.0) || !std::isfinite(options.false_positive_weight)) {
    return InvalidArgumentError("false_positive_weight (" +
                                std::to_string(options.false_positive_weight) +
                                ") must be a finite number >= 0");
  }
  if (!(options.false_negative_weight >= 0.0) || !std::isfinite(options.false_negative_weight)) {
    return InvalidArgumentError("false_negative_weight (" +
                                std::to_string(options.false_negative_weight) +
                                ") must be a finite number >= 0");
  }
  if (options.false_positive_weight == 0.0 && options.false_negative_weight == 0.0) {
    return InvalidArgumentError(
        "false_positive_weight and false_negative_weight are both 0: at least one must be "
        "positive");
  }
  return Status::Ok();
}

// Evaluates every (b, r) with b * r <= num_hashes, ordered by r, then b.
// REQUIRES: valid options. About 1.4 million exp/expm1 calls for 128 hashes
// (a serial 10-20 ms at the start of every corpus-wide command), so the rows
// values run on all cores; each candidate's sums are the same serial loop
// into its own slot, so the values are the same bits at any thread count.
std::vector<Candidate> EvaluateAll(const LshParamsOptions& options) {
  const double t = options.threshold;
  const Rule below = SimpsonRule(0.0, t);
  const Rule above = SimpsonRule(t, 1.0);
  const int n = kSimpsonIntervals + 1;
  const int num_hashes = options.num_hashes;
  // first[r - 1]: the position of (1, r); r rows allow num_hashes / r bands.
  std::vector<size_t> first(num_hashes + 1, 0);
  for (int rows = 1; rows <= num_hashes; ++rows) {
    first[rows] = first[rows - 1] + static_cast<size_t>(num_hashes / rows);
  }
  std::vector<Candidate> candidates(first[num_hashes]);
  tbb::parallel_for(1, num_hashes + 1, [&](int rows) {
    // log(1 - s^r): a band of r rows is missed with probability 1 - s^r, all
    // b bands with (1 - s^r)^b = exp(b * log(1 - s^r)).
    std::vector<double> log_miss_below(n), log_miss_above(n);
    for (int i = 0; i < n; ++i) {
      log_miss_below[i] = std::log1p(-std::pow(below.nodes[i], rows));
      log_miss_above[i] = std::log1p(-std::pow(above.nodes[i], rows));
    }
    Candidate* out = candidates.data() + first[rows - 1];
    for (int bands = 1; bands * rows <= num_hashes; ++bands) {
      double fp = 0.0;
      double fn = 0.0;
      for (int i = 0; i < n; ++i) {
        fp += below.weights[i] * -std::expm1(bands * log_miss_below[i]);
        fn += above.weights[i] * std::exp(bands * log_miss_above[i]);
      }
      *out++ = Candidate{LshParams{bands, rows}, fp, fn,
                         options.false_positive_weight * fp + options.false_negative_weight * fn};
    }
  });
  return candidates;
}

// Orders by weighted error, ties (within kTieTolerance of each other's
// minimum) broken by smaller b * r, then fewer bands.
void RankCandidates(std::vector<Candidate>& candidates) {
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.error != b.error) return a.error < b.error;
    const int64_t a_used = int64_t{a.params.num_bands} * a.params.rows_per_band;
    const int64_t b_used = int64_t{b.params.num_bands} * b.params.rows_per_band;
    if (a_used != b_used) return a_used < b_used;
    return a.params.num_bands < b.params.num_bands;
  });
  // Among those tied with the minimum, move the deterministic winner first.
  const double min_error = candidates.front().error;
  const double limit = min_error + kTieTolerance * std::max(min_error, 1e-300);
  auto winner = candidates.begin();
  for (auto it = candidates.begin(); it != candidates.end() && it->error <= limit; ++it) {
    const int64_t it_used = int64_t{it->params.num_bands} * it->params.rows_per_band;
    const int64_t w_used = int64_t{winner->params.num_bands} * winner->params.rows_per_band;
    if (it_used < w_used ||
        (it_used == w_used && it->params.num_bands < winner->params.num_bands)) {
      winner = it;
    }
  }
  std::rotate(candidates.begin(), winner, winner + 1);
}

double ThresholdAtHalf(const LshParams& params) {
  // 1 - (1 - s^r)^b = 1/2  <=>  s^r = 1 - 2^(-1/b).
  const double band_probability = -std::expm1(-std::log(2.0) / params.num_bands);
  return std::pow(band_probability, 1.0 / params.rows_per_band);
}

template <typename... Args>
std::string Format(const char* format, Args... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

}  // namespace

double LshCandidateProbability(const LshParams& params, double similarity) {
  NEARDUP_CHECK(params.num_bands > 0 && params.rows_per_band > 0);
  NEARDUP_CHECK(similarity >= 0.0 && similarity <= 1.0) << "similarity " << similarity;
  const double band_probability = std::pow(similarity, params.rows_per_band);
  return -std::expm1(params.num_bands * std::log1p(-band_probability));
}

namespace internal {

Result<LshParamsChoice> ChooseLshParamsUncached(const LshParamsOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  std::vector<Candidate> candidates = EvaluateAll(options);
  RankCandidates(candidates);
  const Candidate& best = candidates.front();
  LshParamsChoice choice;
  choice.params = best.params;
  choice.false_positive_area = best.fp_area;
  choice.false_negative_area = best.fn_area;
  choice.weighted_error = best.error;
  choice.threshold_at_half = ThresholdAtHalf(best.params);
  return choice;
}

}  // namespace internal

Result<LshParamsChoice> ChooseLshParams(const LshParamsOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  // The last choice is kept: a command asks for the same options more than
  // once (`dedup` before fingerprinting, for the band keys, and again in the
  // search), and the search is ~13 ms of CPU time. The key is every input of
  // the choice (LshParamsTest's memo test changes each in turn).
  static std::mutex last_mutex;
  static std::optional<std::pair<LshParamsOptions, LshParamsChoice>> last;
  auto same = [&](const LshParamsOptions& o) {
    return o.threshold == options.threshold && o.num_hashes == options.num_hashes &&
           o.false_positive_weight == options.false_positive_weight &&
           o.false_negative_weight == options.false_negative_weight;
  };
  {
    std::lock_guard<std::mutex> lock(last_mutex);
    if (last && same(last->first)) return last->second;
  }
  NEARDUP_ASSIGN_OR_RETURN(LshParamsChoice choice, internal::ChooseLshParamsUncached(options));
  std::lock_guard<std::mutex> lock(last_mutex);
  last.emplace(options, choice);
  return choice;
}

std::string ExplainLshParams(const LshParamsChoice& choice, const LshParamsOptions& options) {
  const LshParams& p = choice.params;
  std::string out;
  out += Format("LSH banding for Jaccard threshold %.3g with %d hash values per sketch:\n",
                options.threshold, options.num_hashes);
  out += Format("  num_bands = %d, rows_per_band = %d (uses %d values)\n", p.num_bands,
                p.rows_per_band, p.num_bands * p.rows_per_band);
  out += Format(
      "  A pair with Jaccard similarity s shares a band with probability "
      "P(s) = 1 - (1 - s^%d)^%d.\n",
      p.rows_per_band, p.num_bands);
  out += Format("  P(s) = 0.5 at s = %.4f (the S-curve's midpoint; the threshold is %.4f).\n",
                choice.threshold_at_half, options.threshold);
  if (p.num_bands > 0 && p.rows_per_band > 0) {
    out += "      s    P(s)\n";
    std::vector<double> points = {0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    if (options.threshold > 0.0 && options.threshold < 1.0 &&
        std::find(points.begin(), points.end(), options.threshold) == points.end()) {
      points.push_back(options.threshold);
      std::sort(points.begin(), points.end());
    }
    for (double s : points) {
      out += Format("   %.3f  %.6f", s, LshCandidateProbability(p, s));
      out += s == options.threshold ? "  <- threshold\n" : "\n";
    }
  }
  out += Format("  False positive area (integral of P(s) over [0, t]):     %.6g  x weight %.3g\n",
                choice.false_positive_area, options.false_positive_weight);
  out += Format("  False negative area (integral of 1 - P(s) over [t, 1]): %.6g  x weight %.3g\n",
                choice.false_negative_area, options.false_negative_weight);
  out += Format("  Weighted error: %.6g\n", choice.weighted_error);
  if (!ValidateOptions(options).ok()) return out;
  std::vector<Candidate> candidates = EvaluateAll(options);
  RankCandidates(candidates);
  out += Format(
      "  Why: the smallest weighted error among all %zu choices with num_bands * "
      "rows_per_band <= %d.\n",
      candidates.size(), options.num_hashes);
  out += "  Runner-up choices:\n";
  int shown = 0;
  for (const Candidate& c : candidates) {
    if (c.params.num_bands == p.num_bands && c.params.rows_per_band == p.rows_per_band) continue;
    out += Format("    num_bands = %3d, rows_per_band = %3d: weighted error %.6g",
                  c.params.num_bands, c.params.rows_per_band, c.error);
    out += Format(" (fp %.6g, fn %.6g)\n", c.fp_area, c.fn_area);
    if (++shown == 3) break;
  }
  return out;
}

}  // namespace neardup
