#include "neardup/near_duplicates.h"

#include <span>
#include <string>
#include <vector>

#include "neardup/near_duplicate_stages.h"

namespace neardup {

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
  NearDuplicateReport local_report;
  if (report == nullptr) report = &local_report;
  *report = NearDuplicateReport{};
  report->documents = fingerprints.size();
  for (const Fingerprint& fp : fingerprints) report->empty_documents += fp.num_tokens == 0;

  // The stages of neardup/near_duplicate_stages.h, whole: one range of
  // every part, one chunk of every candidate.
  NEARDUP_ASSIGN_OR_RETURN(NearDuplicateScheme scheme,
                           ChooseNearDuplicateScheme(recipe, options, fingerprints.size()));
  NEARDUP_ASSIGN_OR_RETURN(std::vector<CandidatePair> candidates,
                           FindCandidates(fingerprints, scheme, {0, scheme.num_parts}, report));
  Result<std::vector<SimilarPair>> pairs =
      VerifyCandidates(fingerprints, scheme, options, candidates, report);
  if (pairs.ok()) report->pairs = pairs->size();
  return pairs;
}

}  // namespace neardup
