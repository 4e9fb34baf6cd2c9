// The near-duplicate search of FindNearDuplicatePairs with a step between
// the candidates and their verification: FindNearDuplicatePairsDeferred
// (deferred_sketches.cc) computes there the verification sketches of the
// candidate documents.
#ifndef NEARDUP_ENGINE_NEAR_DUPLICATE_SEARCH_H_
#define NEARDUP_ENGINE_NEAR_DUPLICATE_SEARCH_H_

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "neardup/near_duplicate_stages.h"
#include "neardup/near_duplicates.h"

namespace neardup::internal {

// Runs after the candidates are found and before they are verified; may
// change the fingerprints' contents (not their number). Its time is
// report->sketch_time.
using BeforeVerify =
    std::function<Status(std::span<const CandidatePair> candidates, NearDuplicateReport* report)>;

// FindNearDuplicatePairs, with `before_verify` (when given) between the
// stages. With band_keys (MinHash only), the candidates come from them
// (FindCandidatesFromBandKeys) instead of the k-value sketches;
// FailedPrecondition unless band_key_params are the bands and rows the
// options choose; InvalidArgument unless band_key_num_hashes is the
// recipe's num_hashes. With band_key_choice of the options' LSH inputs
// (LshParamsOptionsForNearDuplicates), MinHash takes its bands from it
// instead of choosing them again.
Result<std::vector<SimilarPair>> SearchNearDuplicates(
    std::span<const Fingerprint> fingerprints, const Recipe& recipe,
    const NearDuplicateOptions& options, NearDuplicateReport* report,
    const BeforeVerify& before_verify, std::span<const uint64_t> band_keys = {},
    LshParams band_key_params = {}, int band_key_num_hashes = 0,
    const std::optional<ChosenLshParams>& band_key_choice = std::nullopt);

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_NEAR_DUPLICATE_SEARCH_H_
