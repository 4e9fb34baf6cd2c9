// The containment engine: batch jobs over a Collection (neardup/collection.h).
//  - AddDocuments: fingerprint documents with the collection's recipe (all
//    cores) and commit them in batches; each commit is acknowledged only
//    when durable.
//  - ComputeSimilarities: every live document's top-N most similar
//    documents (neardup/containment.h for the scores and the ranking),
//    stored in the collection. After adds, modifications and removals only
//    what changed is computed: the new documents' lists (one search each,
//    whose scores are also merged into the lists they enter), and the lists
//    that lost a retired document or share a chunk that crossed the
//    boilerplate cap (CapCrossingDocuments); the table then equals a full
//    recomputation.
//  - QueryDocument: checks a document against the archive without adding it,
//    optionally with the matching passages of its top matches.
//  - MatchingPassages: where two texts share counted chunks, as runs of byte
//    ranges in both (see below).
//
// Cost: AddDocuments is the fingerprinting cost plus one index merge per
// commit (make commits large). A full ComputeSimilarities is one
// ContainmentSearcher::Search per document, in parallel (oneTBB), memory one
// counter array per thread (4 bytes per document number) plus the rows.
// Thread safety: each job needs exclusive use of a collection opened
// kReadWrite, except QueryDocument (const; concurrent queries each need
// their own searcher, which it creates).
#ifndef NEARDUP_CONTAINMENT_ENGINE_H_
#define NEARDUP_CONTAINMENT_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment.h"
#include "neardup/document.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/fingerprinter.h"
#include "neardup/passages.h"
#include "neardup/status.h"

namespace neardup {

struct AddDocumentsOptions {
  // A commit closes after this many documents or bytes of text. Defaults
  // 20000 and 256 MiB: each commit merges the whole index once, so fewer,
  // larger commits are cheaper; smaller ones acknowledge sooner.
  size_t commit_documents = 20000;
  size_t commit_bytes = size_t{256} << 20;
  // Both limits grow with the collection: they are multiplied by
  // max(1, commit_growth x indexed documents / commit_documents) (bytes up to
  // max_commit_bytes). Each commit rewrites the whole index, so fixed-size
  // commits make a bulk load of n documents cost O(n^2) index writes (a
  // 1M-document load in commits of 20000: 50 rewrites, ~25x the final index
  // written); growing commits make it O(n) (~1 + 1/commit_growth times the
  // final index). Default 0.25. 0: fixed-size commits.
  double commit_growth = 0.25;
  size_t max_commit_bytes = size_t{1} << 30;
  // Called after each durable commit with its result. May be empty.
  std::function<void(const CommitResult&)> on_commit;
  // Called for each document whose id an earlier document of the same call
  // already had. The first document of an id is the one added (as `neardup
  // dedup --keep first`); later ones are not added, only counted
  // (AddDocumentsStats::duplicate_ids) and reported here, so that the
  // documents read add up: added + modified + unchanged + duplicate_ids.
  // Ids are compared as strings (a JSONL id 1 is "1"). May be empty.
  std::function<void(const Document&)> on_duplicate_id;
};

struct AddDocumentsStats {
  uint64_t added = 0;
  uint64_t modified = 0;
  uint64_t unchanged = 0;
  uint64_t commits = 0;
  uint64_t duplicate_ids = 0;  // documents not added: their id came earlier
  FingerprintPipelineStats fingerprint;
};

// The fingerprinter the collection's documents are made with (chunks and
// SimHash under its recipe).
Result<std::unique_ptr<Fingerprinter>> CreateCollectionFingerprinter(const Collection& collection);

// Reads every document of `reader` into `collection`. A document's name is
// its id. On error, commits already acknowledged stay. Memory: besides the
// commit being filled, the ids read so far (for on_duplicate_id), about
// their length plus 50 bytes each.
Status AddDocuments(DocumentReader& reader, Collection& collection,
                    const AddDocumentsOptions& options, AddDocumentsStats* stats = nullptr);

struct SimilarOptions {
  // Similar documents kept per document. Default 100.
  size_t top_n = 100;
  // Least max(a_in_b, b_in_a) kept. Default 0.1.
  double min_similarity = 0.1;
  // Recompute everything even when an incremental update is possible.
  bool force_full = false;
};

struct SimilarStats {
  bool full = false;        // a full recomputation (else incremental)
  uint64_t recomputed = 0;  // documents whose list was computed from scratch
  uint64_t merged = 0;      // lists updated by merging in new documents' scores
  uint64_t rows = 0;        // rows written
  ContainmentSearchStats search;
};

// Every live document's top-N, by ascending document number, each list best
// first; the collection's boilerplate cap applies. Nothing is stored.
Result<std::vector<SimilarityRow>> ComputeAllSimilarities(const Collection& collection,
                                                          const SimilarOptions& options,
                                                          SimilarStats* stats = nullptr);

// Brings the collection's similarity table up to date: incremental when a
// table with the same top_n and min_similarity exists, else full.
Status ComputeSimilarities(Collection& collection, const SimilarOptions& options,
                           SimilarStats* stats = nullptr);

// true when the stored table already is what ComputeSimilarities(options)
// would store (same parameters, nothing dirty or added since): a reader can
// then print it from a read-only collection, without the writer lock.
Result<bool> SimilaritiesAreCurrent(const Collection& collection, const SimilarOptions& options);

struct QueryMatch {
  uint32_t doc = 0;
  std::string id;  // external id
  uint32_t shared = 0;
  double a_in_b = 0.0;            // how much of the query is found in the match
  double b_in_a = 0.0;            // how much of the match is found in the query
  std::vector<Passage> passages;  // for the first QueryOptions::passages_top matches
  // The match's original file and format, as in DocumentInfo.
  std::string name = {};
  std::string format = {};
};

struct QueryResult {
  uint32_t num_chunks = 0;          // of the query
  std::vector<QueryMatch> matches;  // best first
  ContainmentSearchStats search;
};

struct QueryOptions {
  size_t top_n = 10;            // Default 10.
  double min_similarity = 0.1;  // Default 0.1.
  // The best this many matches get their passages. Default 0: none (each
  // costs a decompression and a position-aware chunking of the match's text,
  // a few times the fingerprinting cost). FailedPrecondition when > 0 and the
  // collection does not store texts.
  size_t passages_top = 0;
};

// Checks one text against the archive (the collection's boilerplate cap
// applies). `fingerprinter` must be CreateCollectionFingerprinter's.
Result<QueryResult> QueryDocument(const Collection& collection, const Fingerprinter& fingerprinter,
                                  std::string_view text, const QueryOptions& options);

// The passages of `query_text` found in the stored text of live document
// `match_doc`, under the collection's recipe, as neardup/passages.h finds
// them for two texts, except that a chunk counts only when its document
// frequency is within the collection's cap (as in the score).
// Passages come sorted by query_begin, then match_begin.
// NotFound when the document is not live; FailedPrecondition when texts are
// not stored; the errors of chunking (texts >= 4 GiB).
Result<std::vector<Passage>> MatchingPassages(const Collection& collection,
                                              std::string_view query_text, uint32_t match_doc);

}  // namespace neardup

#endif  // NEARDUP_CONTAINMENT_ENGINE_H_
