#include "neardup/lsh_params.h"
#include "index/lsh_params_exhaustive.h"
#include "index/lsh_params_validate.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
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

double ThresholdAtHalfOf(const LshParams& params) {
  // 1 - (1 - s^r)^b = 1/2  <=>  s^r = 1 - 2^(-1/b).
  const double band_probability = -std::expm1(-std::log(2.0) / params.num_bands);
  return std::pow(band_probability, 1.0 / params.rows_per_band);
}

// A row's tables: log(1 - s^r) at the Simpson nodes below and above the
// threshold. A band of r rows is missed with probability 1 - s^r, all b bands
// with (1 - s^r)^b = exp(b * log(1 - s^r)).
struct RowTables {
  std::vector<double> log_miss_below;
  std::vector<double> log_miss_above;
};

void FillLogMiss(const Rule& rule, int rows, std::vector<double>* log_miss) {
  log_miss->resize(rule.nodes.size());
  for (size_t i = 0; i < rule.nodes.size(); ++i) {
    (*log_miss)[i] = std::log1p(-std::pow(rule.nodes[i], rows));
  }
}

// ∫_0^t P(s) ds and ∫_t^1 (1 - P(s)) ds for `bands` bands of the row. The
// full and the pruned search both call these, so a shape's areas are the same
// bits in either.
double FalsePositiveArea(const Rule& below, const std::vector<double>& log_miss, int bands) {
  double fp = 0.0;
  for (size_t i = 0; i < log_miss.size(); ++i) {
    fp += below.weights[i] * -std::expm1(bands * log_miss[i]);
  }
  return fp;
}

double FalseNegativeArea(const Rule& above, const std::vector<double>& log_miss, int bands) {
  double fn = 0.0;
  for (size_t i = 0; i < log_miss.size(); ++i) {
    fn += above.weights[i] * std::exp(bands * log_miss[i]);
  }
  return fn;
}

Candidate MakeCandidate(const LshParamsOptions& options, int bands, int rows, double fp,
                        double fn) {
  return Candidate{LshParams{bands, rows}, fp, fn,
                   options.false_positive_weight * fp + options.false_negative_weight * fn};
}

// Both sides' tables of a row (`rows` rows a band).
void FillRow(const Rule& below, const Rule& above, int rows, RowTables* row) {
  FillLogMiss(below, rows, &row->log_miss_below);
  FillLogMiss(above, rows, &row->log_miss_above);
}

// The shape (bands, rows) scored from its row's tables (FillRow): the one
// scoring of the full search and of the pruned search's seed.
Candidate EvaluateShape(const LshParamsOptions& options, const Rule& below, const Rule& above,
                        const RowTables& row, int bands, int rows) {
  return MakeCandidate(options, bands, rows, FalsePositiveArea(below, row.log_miss_below, bands),
                       FalseNegativeArea(above, row.log_miss_above, bands));
}

// Evaluates every (b, r) with b * r <= num_hashes, ordered by r, then b (for
// ExplainLshParams' runners-up and for the tests' check of the pruned search).
// REQUIRES: valid options. About 1.4 million exp/expm1 calls for 128 hashes,
// so the rows values run on all cores; each candidate's sums are the same
// serial loop into its own slot, so the values are the same bits at any
// thread count.
std::vector<Candidate> EvaluateAll(const LshParamsOptions& options) {
  const double t = options.threshold;
  const Rule below = SimpsonRule(0.0, t);
  const Rule above = SimpsonRule(t, 1.0);
  const int num_hashes = options.num_hashes;
  // first[r - 1]: the position of (1, r); r rows allow num_hashes / r bands.
  std::vector<size_t> first(num_hashes + 1, 0);
  for (int rows = 1; rows <= num_hashes; ++rows) {
    first[rows] = first[rows - 1] + static_cast<size_t>(num_hashes / rows);
  }
  std::vector<Candidate> candidates(first[num_hashes]);
  tbb::parallel_for(1, num_hashes + 1, [&](int rows) {
    RowTables row;
    FillRow(below, above, rows, &row);
    Candidate* out = candidates.data() + first[rows - 1];
    for (int bands = 1; bands * rows <= num_hashes; ++bands) {
      *out++ = EvaluateShape(options, below, above, row, bands, rows);
    }
  });
  return candidates;
}

// A shape whose weighted error is at least `bound` cannot win (nor tie, to
// kTieTolerance) against one of weighted error `best`. The margin (far above
// kTieTolerance) also covers rounding in the monotonicity the bounds use.
constexpr double kPruneMargin = 1e-9;

bool CannotWin(double bound, double best) {
  return bound > best + kPruneMargin * std::max(best, 1e-290);
}

// The shapes that can win, each with the same bits as in EvaluateAll; the
// others are skipped by two monotone bounds. Within a row (fixed r), the
// false positive area rises with b and the false negative area falls, so
//   for every b' >= b: error(b', r) >= fp_weight * fp(b, r), and
//   for every b' <= b: error(b', r) >= fn_weight * fn(b, r).
// Against `best` (a weighted error already computed, so >= the minimum), a row
// is skipped whole when fn_weight * fn(num_hashes / r, r) cannot win, a shape
// when its fn_weight * fn cannot, and the rest of a row once a shape's
// fp_weight * fp cannot. The seed `best` is the shape with all the row's
// bands whose S-curve midpoint is nearest the threshold. CPU time: 1.4-2.7 ms
// at 128 hashes (EvaluateAll: 14-15 ms), 7-8 ms at 1024 (150-160 ms), one
// core of the loaded 2-core Xeon (docs/BENCHMARKS.md, Session 15, serve).
std::vector<Candidate> EvaluatePruned(const LshParamsOptions& options) {
  const double t = options.threshold;
  const Rule below = SimpsonRule(0.0, t);
  const Rule above = SimpsonRule(t, 1.0);
  const int num_hashes = options.num_hashes;
  int seed_rows = 1;
  double seed_distance = 2.0;
  for (int rows = 1; rows <= num_hashes; ++rows) {
    const double distance = std::abs(ThresholdAtHalfOf(LshParams{num_hashes / rows, rows}) - t);
    if (distance < seed_distance) {
      seed_distance = distance;
      seed_rows = rows;
    }
  }
  RowTables seed_row;
  FillRow(below, above, seed_rows, &seed_row);
  const double seed_error =
      EvaluateShape(options, below, above, seed_row, num_hashes / seed_rows, seed_rows).error;
  // The rows that can hold a winner are an interval around the seed's: the
  // bound fn_weight * fn(num_hashes / r, r) does not fall as r grows (fewer
  // bands of more rows each), and fp_weight * fp(1, r) does not rise. Each is
  // bisected at the cost of one side's table and sum per probe.
  auto fn_bound = [&](int rows) {
    std::vector<double> log_miss;
    FillLogMiss(above, rows, &log_miss);
    return options.false_negative_weight * FalseNegativeArea(above, log_miss, num_hashes / rows);
  };
  auto fp_bound = [&](int rows) {
    std::vector<double> log_miss;
    FillLogMiss(below, rows, &log_miss);
    return options.false_positive_weight * FalsePositiveArea(below, log_miss, 1);
  };
  int low = seed_rows;
  int high = num_hashes;
  while (low < high) {
    const int middle = low + (high - low + 1) / 2;
    if (CannotWin(fn_bound(middle), seed_error)) {
      high = middle - 1;
    } else {
      low = middle;
    }
  }
  const int last_rows = low;
  low = 1;
  high = seed_rows;
  while (low < high) {
    const int middle = low + (high - low) / 2;
    if (CannotWin(fp_bound(middle), seed_error)) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  const int first_rows = low;
  std::vector<std::vector<Candidate>> rows_kept(num_hashes + 1);
  tbb::parallel_for(first_rows, last_rows + 1, [&](int rows) {
    const int max_bands = num_hashes / rows;
    RowTables row;
    FillLogMiss(above, rows, &row.log_miss_above);
    const double fn_at_max = FalseNegativeArea(above, row.log_miss_above, max_bands);
    double best = seed_error;
    if (CannotWin(options.false_negative_weight * fn_at_max, best)) return;
    FillLogMiss(below, rows, &row.log_miss_below);
    std::vector<Candidate>& kept = rows_kept[rows];
    for (int bands = 1; bands <= max_bands; ++bands) {
      const double fn =
          bands == max_bands ? fn_at_max : FalseNegativeArea(above, row.log_miss_above, bands);
      if (CannotWin(options.false_negative_weight * fn, best)) continue;
      const double fp = FalsePositiveArea(below, row.log_miss_below, bands);
      if (CannotWin(options.false_positive_weight * fp, best)) break;
      kept.push_back(MakeCandidate(options, bands, rows, fp, fn));
      best = std::min(best, kept.back().error);
    }
  });
  std::vector<Candidate> candidates;
  for (const std::vector<Candidate>& kept : rows_kept) {
    candidates.insert(candidates.end(), kept.begin(), kept.end());
  }
  // Never empty (the seed's row keeps a shape at least as good as the seed);
  // should rounding ever say otherwise, the full search decides.
  if (candidates.empty()) return EvaluateAll(options);
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

LshParamsChoice ChoiceOf(std::vector<Candidate> candidates) {
  RankCandidates(candidates);
  const Candidate& best = candidates.front();
  LshParamsChoice choice;
  choice.params = best.params;
  choice.false_positive_area = best.fp_area;
  choice.false_negative_area = best.fn_area;
  choice.weighted_error = best.error;
  choice.threshold_at_half = ThresholdAtHalfOf(best.params);
  return choice;
}

namespace internal {

Status ValidateLshParamsOptions(const LshParamsOptions& options) {
  return ValidateOptions(options);
}

Result<LshParamsChoice> ChooseLshParamsExhaustive(const LshParamsOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  return ChoiceOf(EvaluateAll(options));
}

}  // namespace internal

Result<LshParamsChoice> ChooseLshParams(const LshParamsOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  return ChoiceOf(EvaluatePruned(options));
}

bool SameLshParamsOptions(const LshParamsOptions& a, const LshParamsOptions& b) {
  return a.threshold == b.threshold && a.num_hashes == b.num_hashes &&
         a.false_positive_weight == b.false_positive_weight &&
         a.false_negative_weight == b.false_negative_weight;
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
