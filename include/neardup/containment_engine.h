// The containment engine: batch jobs over a Collection (neardup/collection.h).
//  - AddDocuments: fingerprint documents with the collection's recipe (all
//    cores) and commit them in batches; each commit is acknowledged only
//    when durable.
//  - ComputeSimilarities: every live document's top-N most similar
//    documents (neardup/containment.h for the scores and the ranking),
//    stored in the collection. After adds, modifications and removals only
//    the documents whose list may have changed are recomputed
//    (AffectedDocuments, recorded by each commit); the table then equals a
//    full recomputation.
//  - QueryDocument: checks a document against the archive without adding it.
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
#include "neardup/status.h"

namespace neardup {

struct AddDocumentsOptions {
  // A commit closes after this many documents or bytes of text. Defaults
  // 20000 and 256 MiB: each commit merges the whole index once, so fewer,
  // larger commits are cheaper; smaller ones acknowledge sooner.
  size_t commit_documents = 20000;
  size_t commit_bytes = size_t{256} << 20;
  // Called after each durable commit with its result. May be empty.
  std::function<void(const CommitResult&)> on_commit;
};

struct AddDocumentsStats {
  uint64_t added = 0;
  uint64_t modified = 0;
  uint64_t unchanged = 0;
  uint64_t commits = 0;
  FingerprintPipelineStats fingerprint;
};

// The fingerprinter the collection's documents are made with (chunks and
// SimHash under its recipe).
Result<std::unique_ptr<Fingerprinter>> CreateCollectionFingerprinter(const Collection& collection);

// Reads every document of `reader` into `collection`. A document's name is
// its id. On error, commits already acknowledged stay.
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
  uint64_t recomputed = 0;  // documents whose list was computed
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

struct QueryMatch {
  uint32_t doc = 0;
  std::string id;  // external id
  uint32_t shared = 0;
  double a_in_b = 0.0;  // how much of the query is found in the match
  double b_in_a = 0.0;  // how much of the match is found in the query
};

struct QueryResult {
  uint32_t num_chunks = 0;          // of the query
  std::vector<QueryMatch> matches;  // best first
  ContainmentSearchStats search;
};

struct QueryOptions {
  size_t top_n = 10;            // Default 10.
  double min_similarity = 0.1;  // Default 0.1.
};

// Checks one text against the archive (the collection's boilerplate cap
// applies). `fingerprinter` must be CreateCollectionFingerprinter's.
Result<QueryResult> QueryDocument(const Collection& collection, const Fingerprinter& fingerprinter,
                                  std::string_view text, const QueryOptions& options);

}  // namespace neardup

#endif  // NEARDUP_CONTAINMENT_ENGINE_H_
