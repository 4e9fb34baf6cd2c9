#include "neardup/near_duplicates.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "index/wide_hamming_join.h"
#include "neardup/hamming_index.h"
#include "neardup/lsh_index.h"
#include "neardup/similarity.h"

namespace neardup {
namespace {

constexpr size_t kMaxDocuments = std::numeric_limits<uint32_t>::max();

void SortPairs(std::vector<SimilarPair>* pairs) {
  tbb::parallel_sort(pairs->begin(), pairs->end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
}

Result<std::vector<SimilarPair>> SimHashPairs(std::span<const Fingerprint> fingerprints,
                                              const NearDuplicateOptions& options,
                                              NearDuplicateReport* report) {
  HammingIndexOptions index_options;
  index_options.num_blocks = options.num_blocks;
  index_options.max_distance = options.max_distance;
  if (options.num_blocks == 0) {
    NEARDUP_ASSIGN_OR_RETURN(HammingRecommendation recommended,
                             RecommendHammingParameters(options.max_distance, fingerprints.size()));
    index_options.num_blocks = recommended.num_blocks;
  }
  report->num_blocks = index_options.num_blocks;
  std::vector<HammingEntry> entries;
  entries.reserve(fingerprints.size());
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    if (fingerprints[i].num_tokens == 0) continue;
    entries.push_back(HammingEntry{fingerprints[i].simhash, i});
  }
  NEARDUP_ASSIGN_OR_RETURN(HammingIndex index, HammingIndex::Build(index_options, entries));
  report->index_bytes = index.MemoryBytes();
  std::vector<HammingPair> joined = index.SelfJoin();
  report->candidates = joined.size();
  std::vector<SimilarPair> pairs;
  pairs.reserve(joined.size());
  for (const HammingPair& pair : joined) {
    uint32_t a = static_cast<uint32_t>(std::min(pair.a.id, pair.b.id));
    uint32_t b = static_cast<uint32_t>(std::max(pair.a.id, pair.b.id));
    pairs.push_back(SimilarPair{a, b, 1.0 - pair.distance / 64.0, pair.distance});
  }
  SortPairs(&pairs);
  return pairs;
}

// The digest route's SimHash (128 to 256 bits): the distance is over all
// bits, the similarity 1 - distance / bits. Documents without a shingle
// (Fingerprint::num_shingles == 0) hold the tie rule's constant and are never
// paired.
Result<std::vector<SimilarPair>> WideSimHashPairs(std::span<const Fingerprint> fingerprints,
                                                  const Recipe& recipe,
                                                  const NearDuplicateOptions& options,
                                                  NearDuplicateReport* report) {
  std::vector<WideSimHash> values;
  std::vector<uint32_t> documents;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    const WideSimHash& value = fingerprints[i].simhash_wide;
    if (fingerprints[i].num_tokens == 0 || fingerprints[i].num_shingles == 0) continue;
    if (value.bits != recipe.simhash.bits) {
      return InvalidArgumentError("document " + std::to_string(i) + " has a " +
                                  std::to_string(value.bits) + "-bit SimHash; the recipe says " +
                                  std::to_string(recipe.simhash.bits));
    }
    values.push_back(value);
    documents.push_back(static_cast<uint32_t>(i));
  }
  internal::WideHammingJoinStats stats;
  NEARDUP_ASSIGN_OR_RETURN(
      std::vector<internal::WideHammingMatch> matches,
      internal::WideHammingSelfJoin(values, options.max_distance, options.num_blocks, &stats));
  report->num_blocks = options.num_blocks == 0 ? options.max_distance + 1 : options.num_blocks;
  report->candidates = stats.candidates;
  report->index_bytes = values.size() * (sizeof(WideSimHash) + 16);
  const double bits = recipe.simhash.bits;
  std::vector<SimilarPair> pairs;
  pairs.reserve(matches.size());
  for (const internal::WideHammingMatch& match : matches) {
    pairs.push_back(SimilarPair{documents[match.a], documents[match.b], 1.0 - match.distance / bits,
                                match.distance});
  }
  // documents[] is increasing, so the matches' (a, b) order carries over.
  return pairs;
}

Result<std::vector<SimilarPair>> MinHashPairs(std::span<const Fingerprint> fingerprints,
                                              const Recipe& recipe,
                                              const NearDuplicateOptions& options,
                                              NearDuplicateReport* report) {
  const int num_hashes = recipe.minhash.num_hashes;
  LshParamsOptions lsh_options;
  lsh_options.threshold = options.threshold;
  lsh_options.num_hashes = num_hashes;
  lsh_options.false_positive_weight = options.false_positive_weight;
  lsh_options.false_negative_weight = options.false_negative_weight;
  NEARDUP_ASSIGN_OR_RETURN(report->lsh, ChooseLshParams(lsh_options));

  NEARDUP_ASSIGN_OR_RETURN(LshIndex index, LshIndex::Create(report->lsh.params, num_hashes));
  // Sized once for every document: no table regrowth (and its transient
  // doubling) while inserting.
  NEARDUP_RETURN_IF_ERROR(index.Reserve(fingerprints.size() - report->empty_documents));
  // Sketches are copied into the row-major layout InsertBulk takes a slice at
  // a time, so the copy stays small (64 Ki documents: 64 MiB at k = 128)
  // instead of doubling the sketches' memory.
  constexpr size_t kSliceDocuments = size_t{1} << 16;
  std::vector<uint64_t> ids;
  std::vector<uint64_t> sketches;
  auto flush = [&]() -> Status {
    Status status = index.InsertBulk(ids, sketches);
    ids.clear();
    sketches.clear();
    return status;
  };
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    const KValueSketch& sketch = fingerprints[i].kvalue_minhash;
    if (fingerprints[i].num_tokens == 0 || sketch.empty) continue;
    if (sketch.values.size() != static_cast<size_t>(num_hashes)) {
      return InvalidArgumentError("document " + std::to_string(i) + " has a k-value sketch of " +
                                  std::to_string(sketch.values.size()) +
                                  " values; the recipe says " + std::to_string(num_hashes));
    }
    ids.push_back(i);
    sketches.insert(sketches.end(), sketch.values.begin(), sketch.values.end());
    if (ids.size() == kSliceDocuments) NEARDUP_RETURN_IF_ERROR(flush());
  }
  NEARDUP_RETURN_IF_ERROR(flush());
  report->index_bytes = index.MemoryBytes();
  std::vector<std::pair<uint64_t, uint64_t>> candidates = index.AllPairCandidates();
  report->candidates = candidates.size();

  // Exact verification looks at candidates down to 3 standard errors below
  // the threshold, so an estimate that fell short by chance is not lost.
  const double threshold = options.threshold;
  const double lower_bound =
      threshold - 3.0 * std::sqrt(threshold * (1.0 - threshold) / num_hashes) - 1.0 / num_hashes;

  // One BottomKSummary per document (64 bytes, O(k) each, computed once):
  // JaccardAtLeastPairs rejects most candidates from the two summaries
  // without reading their values.
  std::vector<const BottomKSketch*> bottom_k(fingerprints.size());
  std::vector<BottomKSummary> summaries(fingerprints.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, fingerprints.size(), 4096),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        bottom_k[i] = &fingerprints[i].minhash;
                        summaries[i] = SummarizeBottomK(fingerprints[i].minhash);
                      }
                    });

  struct Local {
    std::vector<SimilarPair> pairs;
    uint64_t exact_checks = 0;
    std::vector<uint8_t> accepted;
    std::vector<double> estimates;
  };
  tbb::enumerable_thread_specific<Local> locals;
  const double sketch_threshold = options.verify_exact ? lower_bound : threshold;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, candidates.size(), 4096),
                    [&](const tbb::blocked_range<size_t>& range) {
                      Local& local = locals.local();
                      const std::span<const std::pair<uint64_t, uint64_t>> block(
                          candidates.data() + range.begin(), range.size());
                      local.accepted.resize(block.size());
                      local.estimates.resize(block.size());
                      JaccardAtLeastPairs(bottom_k, summaries, block, sketch_threshold,
                                          local.accepted, local.estimates);
                      for (size_t i = 0; i < block.size(); ++i) {
                        if (local.accepted[i] == 0) continue;
                        const auto a = static_cast<uint32_t>(block[i].first);
                        const auto b = static_cast<uint32_t>(block[i].second);
                        if (!options.verify_exact) {
                          local.pairs.push_back(SimilarPair{a, b, local.estimates[i], -1});
                          continue;
                        }
                        ++local.exact_checks;
                        const double exact =
                            ExactJaccard(fingerprints[a].chunks, fingerprints[b].chunks);
                        if (exact >= threshold) local.pairs.push_back(SimilarPair{a, b, exact, -1});
                      }
                    });
  std::vector<SimilarPair> pairs;
  for (Local& local : locals) {
    pairs.insert(pairs.end(), local.pairs.begin(), local.pairs.end());
    report->exact_checks += local.exact_checks;
  }
  SortPairs(&pairs);
  return pairs;
}

Status ValidateOptions(const NearDuplicateOptions& options) {
  if (options.method == NearDuplicateMethod::kSimHash) {
    if (options.num_blocks == 0) {
      return RecommendHammingParameters(options.max_distance, 1).status();
    }
    HammingIndexOptions index_options;
    index_options.num_blocks = options.num_blocks;
    index_options.max_distance = options.max_distance;
    return ValidateHammingIndexOptions(index_options);
  }
  if (!(options.threshold > 0.0 && options.threshold <= 1.0)) {
    return InvalidArgumentError("threshold (" + std::to_string(options.threshold) +
                                ") must be in (0, 1]");
  }
  return Status::Ok();
}

}  // namespace

Result<NearDuplicateMethod> ParseNearDuplicateMethod(std::string_view name) {
  if (name == "simhash") return NearDuplicateMethod::kSimHash;
  if (name == "minhash") return NearDuplicateMethod::kMinHash;
  return InvalidArgumentError("method (\"" + std::string(name) +
                              "\") must be \"minhash\" or \"simhash\"");
}

SketchSelection SketchesForNearDuplicates(const NearDuplicateOptions& options) {
  SketchSelection selection;
  if (options.method == NearDuplicateMethod::kSimHash) {
    selection.simhash = true;
  } else {
    selection.minhash = true;
    selection.kvalue_minhash = true;
    selection.chunks = options.verify_exact;
  }
  return selection;
}

Recipe RecipeForNearDuplicates(Recipe recipe, const NearDuplicateOptions& options) {
  if (options.method == NearDuplicateMethod::kMinHash && options.verify_exact) {
    recipe.chunks.shingle_width = recipe.minhash.shingle_width;
    recipe.chunks.sample_modulus = 1;
  }
  return recipe;
}

Result<std::vector<SimilarPair>> FindNearDuplicatePairs(std::span<const Fingerprint> fingerprints,
                                                        const Recipe& recipe,
                                                        const NearDuplicateOptions& options,
                                                        NearDuplicateReport* report) {
  const bool wide = options.method == NearDuplicateMethod::kSimHash && IsDigestRecipe(recipe);
  // The wide join checks its own bounds (max_distance up to the width).
  if (!wide) NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  if (fingerprints.size() > kMaxDocuments) {
    return ResourceExhaustedError("too many documents (" + std::to_string(fingerprints.size()) +
                                  ") for one run; the limit is " + std::to_string(kMaxDocuments));
  }
  NearDuplicateReport local_report;
  if (report == nullptr) report = &local_report;
  *report = NearDuplicateReport{};
  report->documents = fingerprints.size();
  for (const Fingerprint& fp : fingerprints) report->empty_documents += fp.num_tokens == 0;

  Result<std::vector<SimilarPair>> pairs =
      wide ? WideSimHashPairs(fingerprints, recipe, options, report)
      : options.method == NearDuplicateMethod::kSimHash
          ? SimHashPairs(fingerprints, options, report)
          : MinHashPairs(fingerprints, recipe, options, report);
  if (pairs.ok()) report->pairs = pairs->size();
  return pairs;
}

}  // namespace neardup
