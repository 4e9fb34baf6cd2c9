#include "neardup/near_duplicates.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/first_copies_check.h"
#include "engine/near_duplicate_search.h"
#include "index/wide_hamming_join.h"
#include "neardup/check.h"
#include "neardup/near_duplicate_stages.h"

namespace neardup {
namespace {

// The digest route's SimHash (128 to 256 bits): the distance is over all
// bits, the similarity 1 - distance / bits. Documents without a shingle
// (Fingerprint::num_shingles == 0) hold the tie rule's constant and are never
// paired.
Result<std::vector<SimilarPair>> WideSimHashPairs(std::span<const Fingerprint> fingerprints,
                                                  const Recipe& recipe,
                                                  const NearDuplicateOptions& options,
                                                  NearDuplicateReport* report) {
  std::vector<WideSimHash> values;
  std::vector<uint64_t> documents;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    const WideSimHash& value = fingerprints[i].simhash_wide;
    if (fingerprints[i].num_tokens == 0 || fingerprints[i].num_shingles == 0) continue;
    if (value.bits != recipe.simhash.bits) {
      return InvalidArgumentError("document " + std::to_string(i) + " has a " +
                                  std::to_string(value.bits) + "-bit SimHash; the recipe says " +
                                  std::to_string(recipe.simhash.bits));
    }
    values.push_back(value);
    documents.push_back(i);
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

// The start of every search (SearchNearDuplicates, FindNearDuplicateGroups):
// *report, or *local when report is null, reset and holding the documents'
// and the empty documents' counts. Returns the report written.
NearDuplicateReport* StartReport(std::span<const Fingerprint> fingerprints,
                                 NearDuplicateReport* report, NearDuplicateReport* local) {
  if (report == nullptr) report = local;
  *report = NearDuplicateReport{};
  report->documents = fingerprints.size();
  for (const Fingerprint& fp : fingerprints) report->empty_documents += fp.num_tokens == 0;
  return report;
}

// The end of every search: the candidates verified, the verify time (the
// timer's total) and the pairs' count recorded.
Result<std::vector<SimilarPair>> FinishSearch(std::span<const Fingerprint> fingerprints,
                                              const NearDuplicateScheme& scheme,
                                              const NearDuplicateOptions& options,
                                              const std::vector<CandidatePair>& candidates,
                                              const StageTimer& timer,
                                              NearDuplicateReport* report) {
  Result<std::vector<SimilarPair>> pairs =
      VerifyCandidates(fingerprints, scheme, options, candidates, report);
  report->verify_time = timer.Elapsed();
  if (pairs.ok()) report->pairs = pairs->size();
  return pairs;
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

LshParamsOptions LshParamsOptionsForNearDuplicates(const Recipe& recipe,
                                                   const NearDuplicateOptions& options) {
  // ChooseNearDuplicateScheme (near_duplicate_stages.cc) chooses from these.
  LshParamsOptions lsh_options;
  lsh_options.threshold = options.threshold;
  lsh_options.num_hashes = recipe.minhash.num_hashes;
  lsh_options.false_positive_weight = options.false_positive_weight;
  lsh_options.false_negative_weight = options.false_negative_weight;
  return lsh_options;
}

namespace internal {

Result<std::vector<SimilarPair>> SearchNearDuplicates(
    std::span<const Fingerprint> fingerprints, const Recipe& recipe,
    const NearDuplicateOptions& options, NearDuplicateReport* report,
    const BeforeVerify& before_verify, std::span<const uint64_t> band_keys,
    LshParams band_key_params, int band_key_num_hashes,
    const std::optional<ChosenLshParams>& band_key_choice) {
  StageTimer timer;
  NearDuplicateReport local_report;
  report = StartReport(fingerprints, report, &local_report);

  if (options.method == NearDuplicateMethod::kSimHash && IsDigestRecipe(recipe)) {
    // The digest route's wide SimHash runs as one piece (the stages split
    // the 64-bit permuted tables only).
    Result<std::vector<SimilarPair>> pairs =
        WideSimHashPairs(fingerprints, recipe, options, report);
    report->candidates_time = timer.Elapsed();
    if (pairs.ok()) report->pairs = pairs->size();
    return pairs;
  }
  // The stages of neardup/near_duplicate_stages.h, whole: one range of
  // every part, one chunk of every candidate.
  // Band keys recorded with the choice of these options: their bands are the
  // scheme's (ChooseNearDuplicateScheme takes the recorded choice when its
  // options are these options').
  NEARDUP_ASSIGN_OR_RETURN(
      const NearDuplicateScheme scheme,
      ChooseNearDuplicateScheme(
          recipe, options, fingerprints.size(),
          band_keys.empty() || !band_key_choice ? nullptr : &*band_key_choice));
  if (!band_keys.empty() && band_key_num_hashes != recipe.minhash.num_hashes) {
    return InvalidArgumentError("band keys cut from " + std::to_string(band_key_num_hashes) +
                                " hash values; the recipe says " +
                                std::to_string(recipe.minhash.num_hashes));
  }
  if (!band_keys.empty() && (band_key_params.num_bands != scheme.lsh.params.num_bands ||
                             band_key_params.rows_per_band != scheme.lsh.params.rows_per_band)) {
    return FailedPreconditionError(
        "the band keys are of " + std::to_string(band_key_params.num_bands) + " bands x " +
        std::to_string(band_key_params.rows_per_band) + " rows; the options choose " +
        std::to_string(scheme.lsh.params.num_bands) + " x " +
        std::to_string(scheme.lsh.params.rows_per_band));
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<CandidatePair> candidates,
                           band_keys.empty()
                               ? FindCandidates(fingerprints, scheme, {0, scheme.num_parts}, report)
                               : FindCandidatesFromBandKeys(fingerprints, band_keys, scheme,
                                                            {0, scheme.num_parts}, report));
  report->candidates_time = timer.Lap();
  if (before_verify) {
    NEARDUP_RETURN_IF_ERROR(before_verify(candidates, report));
    report->sketch_time = timer.Lap();
  }
  return FinishSearch(fingerprints, scheme, options, candidates, timer, report);
}

}  // namespace internal

Result<std::vector<SimilarPair>> FindNearDuplicatePairs(std::span<const Fingerprint> fingerprints,
                                                        const Recipe& recipe,
                                                        const NearDuplicateOptions& options,
                                                        NearDuplicateReport* report) {
  return internal::SearchNearDuplicates(fingerprints, recipe, options, report, {});
}

Result<NearDuplicateGroups> FindNearDuplicateGroups(std::span<const Fingerprint> fingerprints,
                                                    const Recipe& recipe,
                                                    const NearDuplicateOptions& options,
                                                    NearDuplicateReport* report) {
  NearDuplicateGroups groups;
  if (options.method != NearDuplicateMethod::kSimHash || IsDigestRecipe(recipe)) {
    // Groups of one: every pair.
    NEARDUP_ASSIGN_OR_RETURN(groups.pairs,
                             FindNearDuplicatePairs(fingerprints, recipe, options, report));
    groups.first_copy_of.resize(fingerprints.size());
    std::iota(groups.first_copy_of.begin(), groups.first_copy_of.end(), uint64_t{0});
    return groups;
  }
  StageTimer timer;
  NearDuplicateReport local_report;
  report = StartReport(fingerprints, report, &local_report);
  // The scheme of the whole corpus (num_blocks from its size, as
  // FindNearDuplicatePairs chooses it).
  NEARDUP_ASSIGN_OR_RETURN(const NearDuplicateScheme scheme,
                           ChooseNearDuplicateScheme(recipe, options, fingerprints.size()));
  groups.first_copy_of = FindSimHashCopies(fingerprints);
  NEARDUP_ASSIGN_OR_RETURN(std::vector<CandidatePair> candidates,
                           FindFirstCopyCandidates(fingerprints, groups.first_copy_of, scheme,
                                                   {0, scheme.num_parts}, report));
  report->candidates_time = timer.Lap();
  NEARDUP_ASSIGN_OR_RETURN(groups.pairs,
                           FinishSearch(fingerprints, scheme, options, candidates, timer, report));
  // The counts of the expanded pairs (FindNearDuplicatePairs' report): a
  // group of g holds g (g - 1) / 2 pairs, and a pair of first copies
  // stands for the product of their groups' sizes.
  std::vector<uint64_t> group_size(fingerprints.size(), 0);
  uint64_t within = 0;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    if (fingerprints[i].num_tokens == 0) continue;
    within += group_size[groups.first_copy_of[i]]++;
  }
  uint64_t between_candidates = 0;
  for (const CandidatePair& candidate : candidates) {
    between_candidates += group_size[candidate.a] * group_size[candidate.b];
  }
  uint64_t between_pairs = 0;
  for (const SimilarPair& pair : groups.pairs) {
    between_pairs += group_size[pair.a] * group_size[pair.b];
  }
  report->candidates = within + between_candidates;
  report->pairs = within + between_pairs;
  return groups;
}

Result<std::vector<SimilarPair>> ExpandNearDuplicateGroups(
    std::span<const Fingerprint> fingerprints, NearDuplicateGroups groups) {
  const uint64_t n = fingerprints.size();
  const std::vector<uint64_t>& first_copy_of = groups.first_copy_of;
  if (first_copy_of.size() != n) {
    return InvalidArgumentError("first_copy_of (" + std::to_string(first_copy_of.size()) +
                                ") must have one entry per document (" + std::to_string(n) + ")");
  }
  NEARDUP_ASSIGN_OR_RETURN(const bool copies, internal::CheckFirstCopies(first_copy_of));
  for (const SimilarPair& pair : groups.pairs) {
    if (!(pair.a < pair.b && pair.b < n) || first_copy_of[pair.a] != pair.a ||
        first_copy_of[pair.b] != pair.b) {
      return InvalidArgumentError("pair (" + std::to_string(pair.a) + ", " +
                                  std::to_string(pair.b) +
                                  ") must join the first members of two groups, a < b");
    }
  }
  if (!copies) return std::move(groups.pairs);
  // The members of each group (with features: a featureless document is
  // in no pair), ascending: members[member_start[f] ..
  // member_start[f + 1]) for the group whose first copy is f.
  std::vector<uint64_t> member_start(n + 1, 0);
  for (uint64_t doc = 0; doc < n; ++doc) {
    if (fingerprints[doc].num_tokens != 0) ++member_start[first_copy_of[doc] + 1];
  }
  for (uint64_t f = 0; f < n; ++f) member_start[f + 1] += member_start[f];
  std::vector<uint64_t> members(member_start[n]);
  {
    std::vector<uint64_t> next(member_start.begin(), member_start.end() - 1);
    for (uint64_t doc = 0; doc < n; ++doc) {
      if (fingerprints[doc].num_tokens != 0) members[next[first_copy_of[doc]]++] = doc;
    }
  }
  // The group pairs of each first copy (both ends): indexes into
  // groups.pairs, neighbour[neighbour_start[f] .. neighbour_start[f + 1]).
  const std::vector<SimilarPair>& group_pairs = groups.pairs;
  std::vector<uint64_t> neighbour_start(n + 1, 0);
  for (const SimilarPair& pair : group_pairs) {
    ++neighbour_start[pair.a + 1];
    ++neighbour_start[pair.b + 1];
  }
  for (uint64_t f = 0; f < n; ++f) neighbour_start[f + 1] += neighbour_start[f];
  std::vector<uint64_t> neighbour(neighbour_start[n]);
  {
    std::vector<uint64_t> next(neighbour_start.begin(), neighbour_start.end() - 1);
    for (uint64_t k = 0; k < group_pairs.size(); ++k) {
      neighbour[next[group_pairs[k].a]++] = k;
      neighbour[next[group_pairs[k].b]++] = k;
    }
  }
  // The members of group f after doc: [begin, end) of `members`.
  const auto after = [&](uint64_t f, uint64_t doc) {
    const auto end = members.begin() + static_cast<ptrdiff_t>(member_start[f + 1]);
    return std::pair{
        std::upper_bound(members.begin() + static_cast<ptrdiff_t>(member_start[f]), end, doc), end};
  };
  const auto other_end = [&](uint64_t k, uint64_t f) {
    return group_pairs[k].a == f ? group_pairs[k].b : group_pairs[k].a;
  };
  // Each document's pairs with later documents, as runs of members
  // [begin, end) with one similarity and distance each: its own group's
  // later members, then each neighbouring group's. The count and the fill
  // walk the same runs (one visitor), so the slices they size and fill
  // agree by construction.
  const auto visit_runs = [&](uint64_t doc, const auto& run) {
    const uint64_t f = first_copy_of[doc];
    auto [begin, end] = after(f, doc);
    run(begin, end, 1.0, 0);
    for (uint64_t j = neighbour_start[f]; j < neighbour_start[f + 1]; ++j) {
      const SimilarPair& group_pair = group_pairs[neighbour[j]];
      std::tie(begin, end) = after(other_end(neighbour[j], f), doc);
      run(begin, end, group_pair.similarity, group_pair.distance);
    }
  };
  std::vector<uint64_t> start(n + 1, 0);
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 1 << 10),
                    [&](const tbb::blocked_range<uint64_t>& range) {
                      for (uint64_t doc = range.begin(); doc != range.end(); ++doc) {
                        if (fingerprints[doc].num_tokens == 0) continue;
                        uint64_t count = 0;
                        visit_runs(doc, [&](auto begin, auto end, double, int) {
                          count += static_cast<uint64_t>(end - begin);
                        });
                        start[doc + 1] = count;
                      }
                    });
  for (uint64_t doc = 0; doc < n; ++doc) start[doc + 1] += start[doc];
  std::vector<SimilarPair> pairs(start[n]);
  tbb::parallel_for(
      tbb::blocked_range<uint64_t>(0, n, 1 << 10), [&](const tbb::blocked_range<uint64_t>& range) {
        for (uint64_t doc = range.begin(); doc != range.end(); ++doc) {
          if (start[doc] == start[doc + 1]) continue;
          SimilarPair* out = pairs.data() + start[doc];
          uint64_t lists = 0;
          visit_runs(doc, [&](auto begin, auto end, double similarity, int distance) {
            for (auto b = begin; b != end; ++b) *out++ = SimilarPair{doc, *b, similarity, distance};
            lists += begin != end;
          });
          NEARDUP_DCHECK(out == pairs.data() + start[doc + 1]);
          // Each list is ascending and the groups are disjoint: one list
          // is in order already.
          if (lists > 1) {
            std::sort(pairs.data() + start[doc], out,
                      [](const SimilarPair& x, const SimilarPair& y) { return x.b < y.b; });
          }
        }
      });
  return pairs;
}

}  // namespace neardup
