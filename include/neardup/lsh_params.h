// LSH banding parameters: how a k-value MinHash sketch is cut into num_bands
// bands of rows_per_band values, and how to choose them for a Jaccard
// threshold.
//
// Two documents with Jaccard similarity s agree on one MinHash value with
// probability s, on a whole band with probability s^r, and so share at least
// one of b bands (become candidates) with probability
//     P(s) = 1 - (1 - s^r)^b,
// the S-curve of Leskovec, Rajaraman, Ullman, "Mining of Massive Datasets",
// ch. 3.4 (after Indyk and Motwani 1998). ChooseLshParams picks b and r with
// b * r <= num_hashes that minimise
//     false_positive_weight * ∫_0^t P(s) ds + false_negative_weight * ∫_t^1 (1 - P(s)) ds
// for the threshold t: the area of pairs below the threshold that become
// candidates, and of pairs above it that are missed.
//
// Cost: ChooseLshParams integrates (b, r) shapes with b * r <= num_hashes
// with a 1024-interval Simpson rule on each side of t, skipping those that
// monotone bounds say cannot win (the false positive area rises with b, the
// false negative area falls): about 1.4-2.7 ms of CPU for num_hashes = 128
// and 7-8 ms for 1024 (every shape: 14-15 ms and 150-160 ms; one core of the
// loaded 2-core Xeon, docs/BENCHMARKS.md "Session 15, serve"). It keeps
// nothing between calls: a caller that asks often keeps the choice (a corpus
// of band keys records it, ChosenLshParams).
// Thread safety: safe from any thread; pure.
#ifndef NEARDUP_LSH_PARAMS_H_
#define NEARDUP_LSH_PARAMS_H_

#include <string>

#include "neardup/status.h"

namespace neardup {

struct LshParams {
  int num_bands = 0;      // b: a pair is a candidate if it agrees on any band
  int rows_per_band = 0;  // r: values per band, all of which must agree
};

struct LshParamsOptions {
  // The Jaccard similarity that separates duplicates from non-duplicates.
  // REQUIRES: 0 < threshold < 1.
  double threshold = 0.8;
  // The number of values in each sketch; b * r may use fewer of them.
  // REQUIRES: 1 <= num_hashes <= kMaxLshNumHashes.
  int num_hashes = 128;
  // Relative cost of a false positive (a candidate below the threshold: costs
  // a verification) and of a false negative (a missed pair above it: costs
  // recall). Raising false_negative_weight moves the S-curve left (more
  // candidates, fewer misses). REQUIRES: both >= 0, not both 0.
  double false_positive_weight = 0.5;
  double false_negative_weight = 0.5;
};

// The largest num_hashes ChooseLshParams accepts: the search is
// O(num_hashes * log(num_hashes)) integrations.
inline constexpr int kMaxLshNumHashes = 8192;

struct LshParamsChoice {
  LshParams params;
  double false_positive_area = 0;  // ∫_0^t P(s) ds
  double false_negative_area = 0;  // ∫_t^1 (1 - P(s)) ds
  double weighted_error = 0;       // fp_weight * fp_area + fn_weight * fn_area
  // The similarity s where P(s) = 1/2: (1 - 2^(-1/b))^(1/r), close to
  // (1/b)^(1/r). Pairs above it are more likely found than missed.
  double threshold_at_half = 0;
};

// The probability that two sketches with Jaccard similarity `similarity`
// share at least one band: 1 - (1 - s^r)^b. Computed without cancellation
// for small s^r.
// REQUIRES: params positive, 0 <= similarity <= 1.
double LshCandidateProbability(const LshParams& params, double similarity);

// Chooses (b, r) by the weighted fp/fn area above. Ties (weighted errors
// equal to 1e-12 relative) go to the smaller b * r, then to fewer bands, so
// the choice is deterministic. InvalidArgument for options outside their
// REQUIRES.
Result<LshParamsChoice> ChooseLshParams(const LshParamsOptions& options);

// A choice with the options it was made for (ChooseLshParams(options) gave
// choice): what a corpus of band keys records (FingerprintedCorpus), so that
// a search of the same options takes its bands from it.
// REQUIRES: choice == *ChooseLshParams(options), field for field. Nothing
// checks it (that would choose again): a search of `options` takes `choice`
// as given, uses its bands even where ChooseLshParams would pick others, and
// reports its areas and error.
struct ChosenLshParams {
  LshParamsOptions options;
  LshParamsChoice choice;
};

// Whether a and b are the same inputs of ChooseLshParams, field for field.
bool SameLshParamsOptions(const LshParamsOptions& a, const LshParamsOptions& b);

// A multi-line human-readable explanation of `choice` (for a CLI --explain):
// the chosen b and r, the S-curve at similarities 0.5, 0.6, ..., 1.0 and at
// the threshold, the fp/fn areas, and the runner-up choices.
// REQUIRES: `choice` came from ChooseLshParams(options) (otherwise the
// runner-up lines are omitted when options are invalid).
std::string ExplainLshParams(const LshParamsChoice& choice, const LshParamsOptions& options);

}  // namespace neardup

#endif  // NEARDUP_LSH_PARAMS_H_
