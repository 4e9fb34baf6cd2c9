// Verification sketches for the candidate documents only (issue 13).
//
// MinHash near-duplicate search reads, for every document, the k-value
// sketch (LSH candidates), and, for the documents of a candidate pair only,
// the bottom-k sketch and (exact verification) the shingle set. On a corpus
// with few duplicates almost no document is in a candidate pair, yet
// computing those two for every document was about half of `dedup`'s time
// and most of its memory. So when every record lies in a file the first pass
// can find again (FingerprintPipelineOptions::record_locations), the first
// pass computes only CandidateSketches, and the candidate documents' records
// are parsed and fingerprinted a second time, with every sketch, straight
// from their files, on all cores. The pairs (and the report's counts) are
// those of FindNearDuplicatePairs over fingerprints with every sketch: the
// sketches of a text do not depend on which others are computed with them.
// Thread safety: pure functions of their inputs (they read the files again).
#ifndef NEARDUP_DEFERRED_SKETCHES_H_
#define NEARDUP_DEFERRED_SKETCHES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "neardup/document_reader.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/status.h"

namespace neardup {

// The sketches the candidate stage reads for `options`: for MinHash the
// k-value sketch only; for SimHash the SimHash (which also verifies).
SketchSelection CandidateSketches(const NearDuplicateOptions& options);

// The sketches verification reads besides those: for MinHash the bottom-k
// sketch, and the shingle set for exact verification; for SimHash the
// SimHash. CandidateSketches and VerificationSketches together make
// SketchesForNearDuplicates.
SketchSelection VerificationSketches(const NearDuplicateOptions& options);

// True when the verification sketches can wait for the candidates: MinHash,
// and every input, or every file the reader reads in an input directory, is
// an uncompressed JSONL file (by its name or the input format) that the
// pipeline maps (InputOptions::map_files), so that
// CollectFingerprints with record_locations locates every record. A
// prediction from the inputs' names, types and first bytes: when it turns
// out wrong (a file changed), the corpus has no locations and the caller
// must fingerprint again with every sketch.
bool CanDeferVerificationSketches(std::span<const std::string> inputs, const InputOptions& input,
                                  const NearDuplicateOptions& options);

// Fingerprints again, with `fingerprinter`, the record of each document in
// `documents` (ascending, each < the corpus' documents) from its file
// (corpus.record_locations) or, without locations, from its kept JSONL line
// (corpus.raw_records: `dedup` from stdin keeps them), parsed as the first
// pass did (`input`'s text and id fields), and sets
// in (*fingerprints)[document] the sketches fingerprinter.selection() names,
// num_tokens and invalid_utf8_sequences (its other sketches stay). Records are read in ranges of
// about `batch_bytes`, parsed and fingerprinted on all cores; the pages read
// are given back as ranges finish. DataLoss when a file changed since the
// first pass (size, modification time, a record no longer a whole line, its
// id different, or no longer valid). FailedPrecondition when the corpus has
// neither locations nor raw records. REQUIRES: fingerprints->size() == corpus.ids.size().
Status FingerprintLocatedRecords(const FingerprintedCorpus& corpus,
                                 std::span<const uint64_t> documents,
                                 const Fingerprinter& fingerprinter, const InputOptions& input,
                                 std::vector<Fingerprint>* fingerprints,
                                 size_t batch_bytes = size_t{1} << 20);

// FindNearDuplicatePairs for a corpus fingerprinted with CandidateSketches
// and located (record_locations) or holding its JSONL lines (raw_records,
// every document from JSONL): candidates from its sketches, then the
// documents in a candidate pair fingerprinted again with `verifier`
// (VerificationSketches, the recipe of RecipeForNearDuplicates; a verifier
// with every sketch works too, at more cost), then verification. Returns the pairs, and fills
// *report, as FindNearDuplicatePairs over fingerprints with every sketch;
// report->sketch_time is the second fingerprinting.
Result<std::vector<SimilarPair>> FindNearDuplicatePairsDeferred(
    FingerprintedCorpus* corpus, const Fingerprinter& verifier, const InputOptions& input,
    const Recipe& recipe, const NearDuplicateOptions& options,
    NearDuplicateReport* report = nullptr);

}  // namespace neardup

#endif  // NEARDUP_DEFERRED_SKETCHES_H_
