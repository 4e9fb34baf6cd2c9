// Near-duplicate detection as stages that can run apart and merge: threads,
// MPI ranks and the one-call FindNearDuplicatePairs (neardup/near_duplicates.h)
// compose the same pieces.
//
//   fingerprint a batch         Fingerprinter::ComputeBatch (neardup/fingerprinter.h)
//   choose the scheme once      ChooseNearDuplicateScheme (from the whole corpus' size)
//   candidates of some parts    FindCandidates: a range of the scheme's LSH bands
//                               (MinHash) or permuted tables (SimHash)
//   merge candidate lists       MergeCandidates: sorted union
//   verify a list of candidates VerifyCandidates: any chunk of the merged list
//   merge verified pairs        MergePairs: sorted concatenation
//   cluster                     ClusterDocuments (neardup/clustering.h)
//   SimHash copies (clusters)   FindSimHashCopies, FindFirstCopyCandidates,
//                               then ClusterDocumentGroups (session 19)
//
// Invariant: for any split of [0, scheme.num_parts) into ranges and of the
// merged candidates into chunks, MergePairs(VerifyCandidates(chunk)...) over
// MergeCandidates(FindCandidates(range)...) is exactly
// FindNearDuplicatePairs' output (which is this composition with one range
// and one chunk). It holds because a MinHash pair is a candidate when it
// shares a band key in ANY band (keys of a band depend on that band alone),
// and a SimHash pair within max_distance is found in exactly one table (its
// canonical one), whatever else is in the index.
//
// Document numbers are positions in the `fingerprints` span, 64-bit.
// Cost: FindCandidates builds an index over its parts only (a range of b of
// the scheme's bands holds b / num_bands of the full LSH index's memory; a
// range of b of the t SimHash tables builds and holds those b tables besides
// every entry: HammingIndex::Build with a table range);
// VerifyCandidates summarises every sketch once per call (64 bytes and O(k)
// each) plus one verification per candidate. All stages use every core the
// calling context allows (oneTBB).
// Thread safety: pure functions of their inputs.
#ifndef NEARDUP_NEAR_DUPLICATE_STAGES_H_
#define NEARDUP_NEAR_DUPLICATE_STAGES_H_

#include <compare>
#include <cstdint>
#include <span>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/hamming_index.h"
#include "neardup/lsh_params.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup {

// The candidate scheme of one job: fixed for the whole corpus, so that every
// piece of a split job uses the same bands or tables.
struct NearDuplicateScheme {
  NearDuplicateMethod method = NearDuplicateMethod::kMinHash;
  // MinHash: the LSH bands x rows (from the threshold) and the sketch length.
  LshParamsChoice lsh;
  int num_hashes = 0;
  // SimHash: the permuted tables (num_blocks from the corpus size when the
  // options leave it 0).
  HammingIndexOptions hamming;
  // What FindCandidates' ranges count: LSH bands or permuted tables.
  uint64_t num_parts = 0;
};

// REQUIRES (else InvalidArgument): valid options (threshold in (0, 1],
// max_distance < num_blocks, ...). `num_documents` is the size of the whole
// corpus (it picks num_blocks for SimHash). `recorded`, when not null, is a
// MinHash choice recorded earlier (a corpus' band keys were cut by it): a
// MinHash scheme takes its bands from it, without searching again, when its
// options are those these options give (LshParamsOptionsForNearDuplicates,
// SameLshParamsOptions), and ignores it otherwise (session 17; until then
// near_duplicates.cc built that scheme beside this function).
Result<NearDuplicateScheme> ChooseNearDuplicateScheme(const Recipe& recipe,
                                                      const NearDuplicateOptions& options,
                                                      uint64_t num_documents,
                                                      const ChosenLshParams* recorded = nullptr);

// [begin, end) of the scheme's parts.
struct PartRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// A pair of documents to verify. a < b.
struct CandidatePair {
  uint64_t a = 0;
  uint64_t b = 0;
  friend auto operator<=>(const CandidatePair&, const CandidatePair&) = default;
};

// The candidates found in parts `range` of the scheme, sorted and unique.
// Documents with no features are never candidates. Sets report->candidates,
// index_bytes, lsh / num_blocks when report is given.
// InvalidArgument when range is not within [0, num_parts] or a sketch does
// not have the scheme's length.
Result<std::vector<CandidatePair>> FindCandidates(std::span<const Fingerprint> fingerprints,
                                                  const NearDuplicateScheme& scheme,
                                                  PartRange range,
                                                  NearDuplicateReport* report = nullptr);

// FindCandidates of a MinHash scheme from band keys computed ahead instead of
// the k-value sketches (CollectFingerprints with
// FingerprintPipelineOptions::band_keys keeps only those): band_keys holds
// scheme.num_parts keys per document, row-major, document i's band b at
// i * num_parts + b, each internal::BandKey of its sketch (what
// ComputeBandKeys gives over every band); the fingerprints are read for
// num_tokens and kvalue_minhash.empty only (a document with no features or
// an empty sketch is never a candidate, whatever its keys). The same
// candidates and report as FindCandidates over the sketches the keys came
// from. InvalidArgument for a SimHash scheme, a range not within the bands,
// or band_keys not of fingerprints.size() * num_parts keys.
Result<std::vector<CandidatePair>> FindCandidatesFromBandKeys(
    std::span<const Fingerprint> fingerprints, std::span<const uint64_t> band_keys,
    const NearDuplicateScheme& scheme, PartRange range, NearDuplicateReport* report = nullptr);

// Groups of SimHash copies (session 19): first_copy_of[i] is the first
// (smallest) document with features and document i's 64-bit SimHash; i
// itself for the first of its group and for a document without features
// (never paired). Copies have one distance to every other document, so the
// full graph's pairs are: within a group, every pair (at distance 0); and,
// for each pair (r, s) of first copies, every copy of r's group with every
// copy of s's (at their distance). FindFirstCopyCandidates finds the latter
// without the groups' pairs (g copies cost g^2 / 2 pairs otherwise), and
// ClusterDocumentGroups (neardup/clustering.h) clusters from them.
// Cost: a sort of the documents with features (16 bytes each); O(n) memory.
std::vector<uint64_t> FindSimHashCopies(std::span<const Fingerprint> fingerprints);

// FindCandidates of a SimHash scheme over the first copies only (documents i
// with features and first_copy_of[i] == i; their SimHashes are distinct, so
// every candidate is at distance >= 1): the pairs between groups, each once,
// between the groups' first copies. Sorted and unique. Sets report as
// FindCandidates does (candidates: this list's size).
// InvalidArgument for a MinHash scheme, a range not within the tables, or
// first_copy_of not of fingerprints.size().
Result<std::vector<CandidatePair>> FindFirstCopyCandidates(
    std::span<const Fingerprint> fingerprints, std::span<const uint64_t> first_copy_of,
    const NearDuplicateScheme& scheme, PartRange range, NearDuplicateReport* report = nullptr);

// The sorted union of candidate lists, each sorted and unique.
std::vector<CandidatePair> MergeCandidates(std::span<const std::vector<CandidatePair>> lists);

// The candidates that are near-duplicates under `options` (the verification
// of neardup/near_duplicates.h: SimHash distance <= max_distance; MinHash
// bottom-k estimate, then exact Jaccard of the chunk sets when verify_exact),
// in the candidates' order. Adds to report->exact_checks when given.
// InvalidArgument for a candidate outside the fingerprints or not a < b.
Result<std::vector<SimilarPair>> VerifyCandidates(std::span<const Fingerprint> fingerprints,
                                                  const NearDuplicateScheme& scheme,
                                                  const NearDuplicateOptions& options,
                                                  std::span<const CandidatePair> candidates,
                                                  NearDuplicateReport* report = nullptr);

// Verified pair lists of disjoint candidate chunks, concatenated and sorted
// by (a, b).
std::vector<SimilarPair> MergePairs(std::span<const std::vector<SimilarPair>> lists);

// The band keys of one document in bands `bands` of a MinHash scheme, into
// *keys (keys[i] for band bands.begin + i): the keys FindCandidates groups
// documents by, so two documents are candidates exactly when they have an
// equal key in the same band. This lets a distributed job shuffle keys to
// owner ranks instead of sketches. *keys is left empty for a document that
// is never a candidate (no features, or an empty k-value sketch).
// InvalidArgument for a SimHash scheme, a range not within the bands, or a
// k-value sketch not of the scheme's length.
Status ComputeBandKeys(const Fingerprint& fingerprint, const NearDuplicateScheme& scheme,
                       PartRange bands, std::vector<uint64_t>* keys);

}  // namespace neardup

#endif  // NEARDUP_NEAR_DUPLICATE_STAGES_H_
