#include "neardup/near_duplicate_stages.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "engine/verify_in_order.h"
#include "index/lsh_band_key.h"
#include "index/lsh_params_validate.h"
#include "neardup/lsh_index.h"
#include "neardup/near_duplicates.h"
#include "neardup/simhash.h"
#include "neardup/similarity.h"
#include "util/fresh_pages.h"
#include "util/sorted_concatenation.h"

namespace neardup {
namespace {

// A list with room for `most` elements where the address space can be had
// (pages are faulted in only as elements are appended), else an empty one
// that grows as it is filled. RSS follows what is appended, but the whole
// reservation is commit: it counts against `ulimit -v` and under
// vm.overcommit_memory=2, and the list keeps that capacity after it is
// returned (docs/DISTRIBUTED.md, "Fresh memory").
template <typename T>
std::vector<T> ReserveUpTo(size_t most) {
  std::vector<T> list;
  try {
    list.reserve(most);
  } catch (const std::bad_alloc&) {
    // Too much address space at once: the list grows as it is filled.
  }
  return list;
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
  // Open at 1 as well: LSH bands cannot be chosen for a threshold of 1
  // (lsh_params.h), and saying so here gives one range in every message.
  if (!(options.threshold > 0.0 && options.threshold < 1.0)) {
    return InvalidArgumentError("threshold (" + std::to_string(options.threshold) +
                                ") must be in (0, 1)");
  }
  return Status::Ok();
}

// first_copy_of, when not empty, keeps only the first copies
// (FindFirstCopyCandidates).
Result<std::vector<CandidatePair>> SimHashCandidates(std::span<const Fingerprint> fingerprints,
                                                     std::span<const uint64_t> first_copy_of,
                                                     const NearDuplicateScheme& scheme,
                                                     PartRange range, NearDuplicateReport* report) {
  if (range.begin == range.end) {
    report->index_bytes = 0;
    return std::vector<CandidatePair>{};
  }
  std::vector<HammingEntry> entries;
  entries.reserve(fingerprints.size());
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    if (fingerprints[i].num_tokens == 0) continue;
    if (!first_copy_of.empty() && first_copy_of[i] != i) continue;
    entries.push_back(HammingEntry{fingerprints[i].simhash, i});
  }
  // Only the range's tables are built (a rank of a distributed job holds
  // its share, not every table); the whole range is the whole index.
  NEARDUP_ASSIGN_OR_RETURN(HammingIndex index,
                           HammingIndex::Build(scheme.hamming, entries, range.begin, range.end));
  report->index_bytes = index.MemoryBytes();
  std::vector<HammingPair> joined = index.SelfJoin();
  // SelfJoin orders pairs by (a.id, b.id) with a.id < b.id: ids are
  // unique here, so the candidates come out sorted and unique.
  std::vector<CandidatePair> candidates;
  candidates.reserve(joined.size());
  for (const HammingPair& pair : joined) candidates.push_back({pair.a.id, pair.b.id});
  return candidates;
}

// Every pair an LSH index holds as candidates, as CandidatePairs (on all
// cores; the index's order is kept).
std::vector<CandidatePair> AllCandidatesOf(const LshIndex& index) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs = index.AllPairCandidates();
  // Faulted in on all cores (util/fresh_pages.h): 16 bytes a candidate.
  std::vector<CandidatePair> candidates;
  internal::GrowFaultingInParallel(&candidates, pairs.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, pairs.size(), 1 << 14),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        candidates[i] = CandidatePair{pairs[i].first, pairs[i].second};
                      }
                    });
  return candidates;
}

Result<std::vector<CandidatePair>> MinHashCandidates(std::span<const Fingerprint> fingerprints,
                                                     const NearDuplicateScheme& scheme,
                                                     PartRange range) {
  if (range.begin == range.end) return std::vector<CandidatePair>{};
  const int num_hashes = scheme.num_hashes;
  NEARDUP_ASSIGN_OR_RETURN(
      LshIndex index,
      LshIndex::CreateForBands(scheme.lsh.params, num_hashes, static_cast<int>(range.begin),
                               static_cast<int>(range.end - range.begin)));
  // The documents with a sketch, in order (one light pass: the checks).
  std::vector<uint64_t> ids;
  std::vector<std::span<const uint64_t>> sketches;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    const KValueSketch& sketch = fingerprints[i].kvalue_minhash;
    if (fingerprints[i].num_tokens == 0 || sketch.empty) continue;
    if (sketch.values.size() != static_cast<size_t>(num_hashes)) {
      return InvalidArgumentError("document " + std::to_string(i) + " has a k-value sketch of " +
                                  std::to_string(sketch.values.size()) +
                                  " values; the recipe says " + std::to_string(num_hashes));
    }
    ids.push_back(i);
    sketches.emplace_back(sketch.values);
  }
  // Sized once for every document: no table regrowth (and its transient
  // doubling) while inserting. The sketches are read where they lie (each
  // band reads its rows of each), not copied into one array first: that copy
  // was a fresh 1 KB per document (k = 128) whose page faults did not scale
  // with threads.
  NEARDUP_RETURN_IF_ERROR(index.Reserve(ids.size()));
  NEARDUP_RETURN_IF_ERROR(index.InsertBulkSpans(ids, sketches));
  return AllCandidatesOf(index);
}

// MinHashCandidates from keys computed ahead: band_keys holds
// scheme.num_parts keys per document (row-major); only the range's are read.
Result<std::vector<CandidatePair>> MinHashCandidatesFromKeys(
    std::span<const Fingerprint> fingerprints, std::span<const uint64_t> band_keys,
    const NearDuplicateScheme& scheme, PartRange range) {
  const size_t num_bands = scheme.num_parts;
  if (band_keys.size() != fingerprints.size() * num_bands) {
    return InvalidArgumentError("band keys (" + std::to_string(band_keys.size()) + ") must be " +
                                std::to_string(num_bands) + " per document of " +
                                std::to_string(fingerprints.size()));
  }
  if (range.begin == range.end) return std::vector<CandidatePair>{};
  NEARDUP_ASSIGN_OR_RETURN(
      LshIndex index,
      LshIndex::CreateForBands(scheme.lsh.params, scheme.num_hashes, static_cast<int>(range.begin),
                               static_cast<int>(range.end - range.begin)));
  std::vector<uint64_t> ids;
  std::vector<std::span<const uint64_t>> keys;
  ids.reserve(fingerprints.size());
  keys.reserve(fingerprints.size());
  const size_t held = range.end - range.begin;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    if (fingerprints[i].num_tokens == 0 || fingerprints[i].kvalue_minhash.empty) continue;
    ids.push_back(i);
    keys.push_back(band_keys.subspan(i * num_bands + range.begin, held));
  }
  NEARDUP_RETURN_IF_ERROR(index.Reserve(ids.size()));
  NEARDUP_RETURN_IF_ERROR(index.InsertBulkBandKeys(ids, keys));
  return AllCandidatesOf(index);
}

// Candidates are verified in blocks of this many on all cores; the blocks'
// pairs are concatenated in block order, so the output keeps the candidates'
// order whatever the thread count.
constexpr size_t kVerifyBlock = 4096;

Result<std::vector<SimilarPair>> VerifySimHash(std::span<const Fingerprint> fingerprints,
                                               const NearDuplicateScheme& scheme,
                                               std::span<const CandidatePair> candidates) {
  const int bits = 64;
  const size_t num_blocks = (candidates.size() + kVerifyBlock - 1) / kVerifyBlock;
  std::vector<std::vector<SimilarPair>> block_pairs(num_blocks);
  tbb::parallel_for(size_t{0}, num_blocks, [&](size_t block_index) {
    const size_t begin = block_index * kVerifyBlock;
    const size_t end = std::min(candidates.size(), begin + kVerifyBlock);
    std::vector<SimilarPair>& out = block_pairs[block_index];
    for (size_t i = begin; i < end; ++i) {
      const CandidatePair& candidate = candidates[i];
      if (fingerprints[candidate.a].num_tokens == 0 || fingerprints[candidate.b].num_tokens == 0) {
        continue;  // no features: never paired
      }
      const int distance =
          HammingDistance(fingerprints[candidate.a].simhash, fingerprints[candidate.b].simhash);
      if (distance > scheme.hamming.max_distance) continue;
      out.push_back(SimilarPair{candidate.a, candidate.b,
                                1.0 - static_cast<double>(distance) / bits, distance});
    }
  });
  return internal::ConcatenateInParallel(std::span<const std::vector<SimilarPair>>(block_pairs));
}

Result<std::vector<SimilarPair>> VerifyMinHash(std::span<const Fingerprint> fingerprints,
                                               const NearDuplicateScheme& scheme,
                                               const NearDuplicateOptions& options,
                                               std::span<const CandidatePair> candidates,
                                               NearDuplicateReport* report) {
  const int num_hashes = scheme.num_hashes;
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
    uint64_t exact_checks = 0;
    std::vector<uint8_t> accepted;
    std::vector<double> estimates;
    std::vector<std::pair<uint64_t, uint64_t>> block;
  };
  tbb::enumerable_thread_specific<Local> locals;
  const size_t num_blocks = (candidates.size() + kVerifyBlock - 1) / kVerifyBlock;
  const double sketch_threshold = options.verify_exact ? lower_bound : threshold;
  std::vector<SimilarPair> verified = ReserveUpTo<SimilarPair>(candidates.size());
  internal::VerifyInOrder(
      num_blocks, &verified, [&](size_t block_index, std::vector<SimilarPair>& out) {
        Local& local = locals.local();
        const size_t begin = block_index * kVerifyBlock;
        const size_t end = std::min(candidates.size(), begin + kVerifyBlock);
        local.block.clear();
        for (size_t i = begin; i < end; ++i) {
          const CandidatePair& candidate = candidates[i];
          // Documents with no features are never paired (their empty sketches
          // would compare equal).
          if (fingerprints[candidate.a].num_tokens == 0 ||
              fingerprints[candidate.b].num_tokens == 0) {
            continue;
          }
          local.block.emplace_back(candidate.a, candidate.b);
        }
        local.accepted.resize(local.block.size());
        local.estimates.resize(local.block.size());
        JaccardAtLeastPairs(bottom_k, summaries, local.block, sketch_threshold, local.accepted,
                            local.estimates);
        for (size_t i = 0; i < local.block.size(); ++i) {
          if (local.accepted[i] == 0) continue;
          const uint64_t a = local.block[i].first;
          const uint64_t b = local.block[i].second;
          if (!options.verify_exact) {
            out.push_back(SimilarPair{a, b, local.estimates[i], -1});
            continue;
          }
          ++local.exact_checks;
          const double exact = ExactJaccard(fingerprints[a].chunks, fingerprints[b].chunks);
          if (exact >= threshold) out.push_back(SimilarPair{a, b, exact, -1});
        }
      });
  for (const Local& local : locals) report->exact_checks += local.exact_checks;
  return verified;
}

}  // namespace

Result<NearDuplicateScheme> ChooseNearDuplicateScheme(const Recipe& recipe,
                                                      const NearDuplicateOptions& options,
                                                      uint64_t num_documents,
                                                      const ChosenLshParams* recorded) {
  if (options.method == NearDuplicateMethod::kSimHash && IsDigestRecipe(recipe)) {
    return InvalidArgumentError("recipe " + RecipeId(recipe) + " has a " +
                                std::to_string(recipe.simhash.bits) +
                                "-bit digest SimHash: its pairs come from FindNearDuplicatePairs "
                                "in one piece, not from the stages");
  }
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  NearDuplicateScheme scheme;
  scheme.method = options.method;
  if (options.method == NearDuplicateMethod::kSimHash) {
    scheme.hamming.max_distance = options.max_distance;
    scheme.hamming.num_blocks = options.num_blocks;
    if (options.num_blocks == 0) {
      NEARDUP_ASSIGN_OR_RETURN(HammingRecommendation recommended,
                               RecommendHammingParameters(options.max_distance, num_documents));
      scheme.hamming.num_blocks = recommended.num_blocks;
    }
    scheme.num_parts = HammingNumTables(scheme.hamming.num_blocks, scheme.hamming.max_distance);
    return scheme;
  }
  scheme.num_hashes = recipe.minhash.num_hashes;
  const LshParamsOptions lsh_options = LshParamsOptionsForNearDuplicates(recipe, options);
  if (recorded != nullptr && SameLshParamsOptions(recorded->options, lsh_options)) {
    // The record's options are public fields: checked as ChooseLshParams
    // would check them.
    NEARDUP_RETURN_IF_ERROR(internal::ValidateLshParamsOptions(lsh_options));
    scheme.lsh = recorded->choice;
  } else {
    NEARDUP_ASSIGN_OR_RETURN(scheme.lsh, ChooseLshParams(lsh_options));
  }
  scheme.num_parts = static_cast<uint64_t>(scheme.lsh.params.num_bands);
  return scheme;
}

namespace {

// The parts a candidate stage is asked for: a range within the scheme's.
Status CheckPartRange(const NearDuplicateScheme& scheme, PartRange range) {
  if (range.begin > range.end || range.end > scheme.num_parts) {
    return InvalidArgumentError("parts [" + std::to_string(range.begin) + ", " +
                                std::to_string(range.end) + ") must be a range within the " +
                                std::to_string(scheme.num_parts) + " parts of the scheme");
  }
  return Status::Ok();
}

// What both candidate stages report of a successful search (nothing when
// the caller passed no report).
void ReportCandidates(const NearDuplicateScheme& scheme, size_t num_candidates,
                      NearDuplicateReport* report) {
  if (report == nullptr) return;
  report->candidates = num_candidates;
  report->lsh = scheme.lsh;
  report->num_blocks =
      scheme.method == NearDuplicateMethod::kSimHash ? scheme.hamming.num_blocks : 0;
}

// FindCandidates (first_copy_of empty: every document) and
// FindFirstCopyCandidates (SimHash, the first copies only): the range's
// check, the search and its report.
Result<std::vector<CandidatePair>> CheckedCandidates(std::span<const Fingerprint> fingerprints,
                                                     std::span<const uint64_t> first_copy_of,
                                                     const NearDuplicateScheme& scheme,
                                                     PartRange range, NearDuplicateReport* report) {
  NEARDUP_RETURN_IF_ERROR(CheckPartRange(scheme, range));
  NearDuplicateReport local_report;
  if (report == nullptr) report = &local_report;
  Result<std::vector<CandidatePair>> candidates =
      scheme.method == NearDuplicateMethod::kSimHash
          ? SimHashCandidates(fingerprints, first_copy_of, scheme, range, report)
          : MinHashCandidates(fingerprints, scheme, range);
  if (candidates.ok()) ReportCandidates(scheme, candidates->size(), report);
  return candidates;
}

}  // namespace

Result<std::vector<CandidatePair>> FindCandidates(std::span<const Fingerprint> fingerprints,
                                                  const NearDuplicateScheme& scheme,
                                                  PartRange range, NearDuplicateReport* report) {
  return CheckedCandidates(fingerprints, {}, scheme, range, report);
}

Result<std::vector<CandidatePair>> FindCandidatesFromBandKeys(
    std::span<const Fingerprint> fingerprints, std::span<const uint64_t> band_keys,
    const NearDuplicateScheme& scheme, PartRange range, NearDuplicateReport* report) {
  if (scheme.method != NearDuplicateMethod::kMinHash) {
    return InvalidArgumentError("band keys belong to a MinHash scheme");
  }
  NEARDUP_RETURN_IF_ERROR(CheckPartRange(scheme, range));
  Result<std::vector<CandidatePair>> candidates =
      MinHashCandidatesFromKeys(fingerprints, band_keys, scheme, range);
  if (candidates.ok()) ReportCandidates(scheme, candidates->size(), report);
  return candidates;
}

std::vector<uint64_t> FindSimHashCopies(std::span<const Fingerprint> fingerprints) {
  const size_t n = fingerprints.size();
  std::vector<uint64_t> first_copy_of(n);
  std::vector<HammingEntry> entries;  // (SimHash, document) of those with features
  entries.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    first_copy_of[i] = i;
    if (fingerprints[i].num_tokens != 0) entries.push_back({fingerprints[i].simhash, i});
  }
  // (SimHash, document) are distinct: one order at any thread count, and
  // each run of one SimHash starts with its smallest document.
  tbb::parallel_sort(entries.begin(), entries.end());
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, entries.size(), 1 << 14),
      [&](const tbb::blocked_range<size_t>& range) {
        size_t i = range.begin();
        // The run of entries[i] may start before the range: its first
        // entry, by binary search (a walk back would cost each chunk of a
        // long run the run's length).
        size_t first = static_cast<size_t>(
            std::lower_bound(entries.begin(), entries.begin() + static_cast<ptrdiff_t>(i),
                             entries[i].fingerprint,
                             [](const HammingEntry& entry, uint64_t fingerprint) {
                               return entry.fingerprint < fingerprint;
                             }) -
            entries.begin());
        for (; i != range.end(); ++i) {
          if (entries[i].fingerprint != entries[first].fingerprint) first = i;
          first_copy_of[entries[i].id] = entries[first].id;
        }
      });
  return first_copy_of;
}

Result<std::vector<CandidatePair>> FindFirstCopyCandidates(
    std::span<const Fingerprint> fingerprints, std::span<const uint64_t> first_copy_of,
    const NearDuplicateScheme& scheme, PartRange range, NearDuplicateReport* report) {
  if (scheme.method != NearDuplicateMethod::kSimHash) {
    return InvalidArgumentError("scheme method (minhash) must be simhash for copy groups");
  }
  if (first_copy_of.size() != fingerprints.size()) {
    return InvalidArgumentError("first_copy_of (" + std::to_string(first_copy_of.size()) +
                                ") must have one entry per document (" +
                                std::to_string(fingerprints.size()) + ")");
  }
  return CheckedCandidates(fingerprints, first_copy_of, scheme, range, report);
}

std::vector<CandidatePair> MergeCandidates(std::span<const std::vector<CandidatePair>> lists) {
  std::vector<CandidatePair> merged =
      internal::SortedConcatenation(lists, [](const CandidatePair& pair) { return pair.a; });
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  return merged;
}

Result<std::vector<SimilarPair>> VerifyCandidates(std::span<const Fingerprint> fingerprints,
                                                  const NearDuplicateScheme& scheme,
                                                  const NearDuplicateOptions& options,
                                                  std::span<const CandidatePair> candidates,
                                                  NearDuplicateReport* report) {
  // The first malformed candidate, found on all cores.
  const size_t bad = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, candidates.size(), 1 << 14), candidates.size(),
      [&](const tbb::blocked_range<size_t>& range, size_t found) {
        for (size_t i = range.begin(); i != range.end() && i < found; ++i) {
          if (!(candidates[i].a < candidates[i].b && candidates[i].b < fingerprints.size())) {
            return i;
          }
        }
        return found;
      },
      [](size_t x, size_t y) { return std::min(x, y); });
  if (bad != candidates.size()) {
    return InvalidArgumentError("candidate (" + std::to_string(candidates[bad].a) + ", " +
                                std::to_string(candidates[bad].b) + ") must have a < b < the " +
                                std::to_string(fingerprints.size()) + " documents");
  }
  NearDuplicateReport local_report;
  if (report == nullptr) report = &local_report;
  if (scheme.method == NearDuplicateMethod::kSimHash) {
    return VerifySimHash(fingerprints, scheme, candidates);
  }
  return VerifyMinHash(fingerprints, scheme, options, candidates, report);
}

std::vector<SimilarPair> MergePairs(std::span<const std::vector<SimilarPair>> lists) {
  return internal::SortedConcatenation(
      lists, [](const SimilarPair& pair) { return pair.a; },
      [](const SimilarPair& x, const SimilarPair& y) {
        return x.a != y.a ? x.a < y.a : x.b < y.b;
      });
}

Status ComputeBandKeys(const Fingerprint& fingerprint, const NearDuplicateScheme& scheme,
                       PartRange bands, std::vector<uint64_t>* keys) {
  keys->clear();
  if (scheme.method != NearDuplicateMethod::kMinHash) {
    return InvalidArgumentError("band keys belong to a MinHash scheme");
  }
  if (bands.begin > bands.end || bands.end > scheme.num_parts) {
    return InvalidArgumentError("bands [" + std::to_string(bands.begin) + ", " +
                                std::to_string(bands.end) + ") must be a range within the " +
                                std::to_string(scheme.num_parts) + " bands of the scheme");
  }
  const KValueSketch& sketch = fingerprint.kvalue_minhash;
  if (fingerprint.num_tokens == 0 || sketch.empty) return Status::Ok();
  if (sketch.values.size() != static_cast<size_t>(scheme.num_hashes)) {
    return InvalidArgumentError("a k-value sketch of " + std::to_string(sketch.values.size()) +
                                " values; the recipe says " + std::to_string(scheme.num_hashes));
  }
  LshParams held = scheme.lsh.params;
  held.num_bands = static_cast<int>(bands.end - bands.begin);
  keys->resize(held.num_bands);
  internal::ComputeBandKeys(held, sketch.values.data(), keys->data(),
                            static_cast<int>(bands.begin));
  return Status::Ok();
}

}  // namespace neardup
