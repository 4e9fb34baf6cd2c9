// FindNearDuplicatePairs: every pair of documents whose fingerprints say they
// are near-duplicates, each pair once, verified.
//
// - SimHash: a permuted-table Hamming index (Manku et al. 2007) self-join;
//   pairs within `max_distance` bits of the 64-bit SimHash (for a 128-bit
//   recipe, its high word, which is the 64-bit SimHash). For a digest recipe
//   (128, 160 or 256 bits, IsDigestRecipe): pairs within max_distance of all
//   the bits, by exact pigeonhole over max_distance + 1 blocks (or
//   num_blocks when given), similarity 1 - distance / bits; documents with
//   no shingle are never paired.
// - MinHash: LSH banding over k-value sketches (bands x rows chosen from the
//   threshold, see neardup/lsh_params.h) gives candidates; each candidate is
//   verified with the bottom-k Jaccard estimator (early abort), or with
//   `verify_exact`, by the exact Jaccard of the two shingle sets for every
//   candidate whose estimate is within 3 standard errors below the threshold.
//   The similarity reported is the one that was verified.
// Documents with no features (num_tokens == 0) are never paired.
// Output: sorted by (a, b); the same for any thread count.
// Cost: SimHash O(n * tables) build + join; MinHash O(n * bands) plus one
// verification per candidate, on all cores. Memory: the index (a few hundred
// bytes per document) plus the pairs.
// Thread safety: pure function of its inputs.
#ifndef NEARDUP_NEAR_DUPLICATES_H_
#define NEARDUP_NEAR_DUPLICATES_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/lsh_params.h"
#include "neardup/stage_time.h"
#include "neardup/status.h"

namespace neardup {

enum class NearDuplicateMethod { kSimHash, kMinHash };

Result<NearDuplicateMethod> ParseNearDuplicateMethod(std::string_view name);

struct NearDuplicateOptions {
  NearDuplicateMethod method = NearDuplicateMethod::kMinHash;

  // SimHash: pairs at Hamming distance <= max_distance (default 3 of 64 bits,
  // Manku et al.'s choice for web pages), found with num_blocks blocks.
  // Default 0: chosen by RecommendHammingParameters for the corpus size (5 at
  // 1M documents: C(5,3) = 10 tables; more blocks mean more tables and memory
  // but fewer candidates per probe, which pays only for much larger corpora).
  int max_distance = 3;
  int num_blocks = 0;

  // MinHash: pairs with Jaccard >= threshold, in (0, 1) (default 0.8). The LSH weights
  // trade missed pairs (false negatives) against candidates to verify.
  // Defaults 0.05 / 0.95 (docs/ACCURACY.md): a false positive costs one
  // verification, a false negative is a lost duplicate; at 0.8 and k = 128
  // this reaches recall 0.993 (0.82 with 0.5 / 0.5) for about 2x candidates.
  double threshold = 0.8;
  double false_positive_weight = 0.05;
  double false_negative_weight = 0.95;
  // Verify with exact Jaccard of shingle sets (needs Fingerprint::chunks of
  // the MinHash shingle width, unsampled: see RecipeForNearDuplicates).
  // Default true: precision 1.000 at no loss of recall; the bottom-k estimate
  // alone (false) keeps less memory (no chunk sets) but misses about half the
  // pairs just above the threshold (recall 0.94 at k = 128).
  bool verify_exact = true;
};

// The sketches FindNearDuplicatePairs reads for `options`.
SketchSelection SketchesForNearDuplicates(const NearDuplicateOptions& options);

// `recipe` adjusted so that the fingerprints carry what `options` verify
// with: exact verification reads chunk sets of the MinHash shingle width,
// unsampled. The sketches the options compare are unchanged, so fingerprints
// from either recipe compare equal.
Recipe RecipeForNearDuplicates(Recipe recipe, const NearDuplicateOptions& options);

struct NearDuplicateReport {
  uint64_t documents = 0;        // fingerprints given
  uint64_t empty_documents = 0;  // never paired
  uint64_t candidates = 0;       // pairs proposed by the index
  uint64_t exact_checks = 0;     // candidates verified exactly
  uint64_t pairs = 0;            // verified pairs returned
  LshParamsChoice lsh;           // MinHash only
  int num_blocks = 0;            // SimHash only: the blocks used
  uint64_t index_bytes = 0;
  // Time in the two stages (neardup/near_duplicate_stages.h): choosing the
  // scheme (LSH bands: a few ms), building the index and listing candidates
  // (for a digest recipe, the whole join); and verifying the candidates.
  StageTime candidates_time;
  StageTime verify_time;
  // FindNearDuplicatePairsDeferred only (neardup/deferred_sketches.h): the
  // candidate documents fingerprinted again for verification.
  StageTime sketch_time;
  uint64_t sketched_documents = 0;
};

// The inputs of ChooseLshParams for a MinHash search of these options with
// this recipe (the threshold, the weights, recipe.minhash.num_hashes): what
// ChooseNearDuplicateScheme chooses its bands from, and what a caller records
// with band keys (FingerprintPipelineOptions::band_key_choice).
LshParamsOptions LshParamsOptionsForNearDuplicates(const Recipe& recipe,
                                                   const NearDuplicateOptions& options);

// REQUIRES: fingerprints computed with SketchesForNearDuplicates(options) and
// a recipe of num_hashes == recipe.minhash.num_hashes.
Result<std::vector<SimilarPair>> FindNearDuplicatePairs(std::span<const Fingerprint> fingerprints,
                                                        const Recipe& recipe,
                                                        const NearDuplicateOptions& options,
                                                        NearDuplicateReport* report = nullptr);

// FindNearDuplicatePairs' pairs in a form that groups copies (session 19):
// `clusters` and `dedup` cluster it, `pairs` expands it (below).
struct NearDuplicateGroups {
  // Per document: the first copy of its group of copies (i itself for a
  // group of one). SimHash (64-bit): FindSimHashCopies' groups (features and
  // one SimHash); MinHash and digest recipes: every group is one document.
  std::vector<uint64_t> first_copy_of;
  // The verified pairs between first copies, sorted by (a, b). Every pair
  // of FindNearDuplicatePairs is a pair of two copies of one group (at
  // distance 0) or of copies of two groups whose first copies are a pair
  // here (at its distance), and each such pair is one of its pairs.
  std::vector<SimilarPair> pairs;
};

// The groups and pairs of FindNearDuplicatePairs(fingerprints, recipe,
// options): ClusterDocumentGroups(first_copy_of, pairs, rule) is
// ClusterDocuments(n, FindNearDuplicatePairs(...), rule). report as
// FindNearDuplicatePairs' (candidates and pairs count the expanded pairs;
// index_bytes is of the index it built, over first copies only).
// Cost (SimHash): FindSimHashCopies, then the search over the first copies:
// a group of g copies costs O(g), not g^2 / 2 pairs.
Result<NearDuplicateGroups> FindNearDuplicateGroups(std::span<const Fingerprint> fingerprints,
                                                    const Recipe& recipe,
                                                    const NearDuplicateOptions& options,
                                                    NearDuplicateReport* report = nullptr);

// FindNearDuplicatePairs' pairs from its groups: `groups`
// (FindNearDuplicateGroups of the same fingerprints) expanded to every pair
// of two copies of one group (distance 0, similarity 1) and of copies of
// two groups whose first copies are a pair (at that pair's distance and
// similarity), sorted by (a, b): the same list as FindNearDuplicatePairs,
// built from the groups instead of a search over every copy (for `pairs`,
// whose output is every pair). Groups of one (MinHash, digest recipes):
// the pairs as they are, moved. A document without features (num_tokens 0)
// is in no pair, whatever its group. Cost: O(documents + output pairs +
// documents x neighbour groups of their group x log), plus a sort of a
// document's pairs where they come from two or more groups, on all cores;
// memory: the output and O(documents + group pairs).
// REQUIRES: the pairs are unique (as FindNearDuplicateGroups gives them).
// InvalidArgument when first_copy_of is not one entry per fingerprint of
// ClusterDocumentGroups' form or a pair does not join two first copies.
Result<std::vector<SimilarPair>> ExpandNearDuplicateGroups(
    std::span<const Fingerprint> fingerprints, NearDuplicateGroups groups);

}  // namespace neardup

#endif  // NEARDUP_NEAR_DUPLICATES_H_
