// ComputeSimilarities: top-N per document over the collection's chunk
// index, full or incremental, and QueryDocument.
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "engine/containment_passages.h"
#include "neardup/containment_engine.h"

namespace neardup {
namespace {

ContainmentOptions SearchOptions(const Collection& collection, size_t top_n, double min) {
  ContainmentOptions options;
  options.max_document_frequency = collection.max_document_frequency();
  options.top_n = top_n;
  options.min_similarity = min;
  return options;
}

// The rows of `docs` (ascending), in that order.
Result<std::vector<SimilarityRow>> RowsFor(const Collection& collection,
                                           std::span<const uint32_t> docs,
                                           const SimilarOptions& options, SimilarStats* stats) {
  const ContainmentOptions search =
      SearchOptions(collection, options.top_n, options.min_similarity);
  std::vector<std::vector<ContainmentMatch>> results(docs.size());
  tbb::enumerable_thread_specific<ContainmentSearcher> searchers(
      [&] { return ContainmentSearcher(collection.index()); });
  tbb::enumerable_thread_specific<ContainmentSearchStats> search_stats;
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex error_mutex;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, docs.size(), 64),
                    [&](const tbb::blocked_range<size_t>& range) {
                      ContainmentSearcher& searcher = searchers.local();
                      ContainmentSearchStats& local = search_stats.local();
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        Result<std::span<const uint32_t>> chunks = collection.Chunks(docs[i]);
                        if (!chunks.ok()) {
                          std::lock_guard<std::mutex> lock(error_mutex);
                          if (!failed.exchange(true)) first_error = chunks.status();
                          return;
                        }
                        results[i] = searcher.Search(*chunks, search, docs[i], &local);
                      }
                    });
  if (failed) return first_error;
  std::vector<SimilarityRow> rows;
  for (size_t i = 0; i < docs.size(); ++i) {
    for (const ContainmentMatch& m : results[i])
      rows.push_back({docs[i], m.doc, m.a_in_b, m.b_in_a});
  }
  if (stats != nullptr) {
    for (const ContainmentSearchStats& s : search_stats) {
      stats->search.postings_visited += s.postings_visited;
      stats->search.boilerplate_chunks += s.boilerplate_chunks;
      stats->search.candidates += s.candidates;
    }
    stats->recomputed += docs.size();
    stats->rows += rows.size();
  }
  return rows;
}

Status CheckOptions(const SimilarOptions& options) {
  if (options.top_n == 0) return InvalidArgumentError("top_n (0) must be at least 1");
  if (!(options.min_similarity >= 0.0 && options.min_similarity <= 1.0)) {
    return InvalidArgumentError("min_similarity (" + std::to_string(options.min_similarity) +
                                ") must be in [0, 1]");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<SimilarityRow>> ComputeAllSimilarities(const Collection& collection,
                                                          const SimilarOptions& options,
                                                          SimilarStats* stats) {
  NEARDUP_RETURN_IF_ERROR(CheckOptions(options));
  const std::vector<uint32_t> live = collection.LiveDocuments();
  if (stats != nullptr) stats->full = true;
  return RowsFor(collection, live, options, stats);
}

Status ComputeSimilarities(Collection& collection, const SimilarOptions& options,
                           SimilarStats* stats) {
  NEARDUP_RETURN_IF_ERROR(CheckOptions(options));
  SimilarStats local;
  const SimilarityParams params{options.top_n, options.min_similarity};
  NEARDUP_ASSIGN_OR_RETURN(std::optional<SimilarityParams> stored,
                           collection.StoredSimilarityParams());
  const bool full = options.force_full || !stored.has_value() || *stored != params;
  std::vector<uint32_t> docs;
  if (full) {
    docs = collection.LiveDocuments();
  } else {
    NEARDUP_ASSIGN_OR_RETURN(docs, collection.DirtyDocuments());
  }
  // Dirty documents removed since are dropped (their rows already are).
  std::vector<uint32_t> live_docs;
  for (uint32_t doc : docs) {
    if (collection.Chunks(doc).ok()) live_docs.push_back(doc);
  }
  local.full = full;
  NEARDUP_ASSIGN_OR_RETURN(std::vector<SimilarityRow> rows,
                           RowsFor(collection, live_docs, options, &local));
  NEARDUP_RETURN_IF_ERROR(collection.StoreSimilarities(params, full, live_docs, rows));
  if (stats != nullptr) *stats = local;
  return Status::Ok();
}

Result<QueryResult> QueryDocument(const Collection& collection, const Fingerprinter& fingerprinter,
                                  std::string_view text, const QueryOptions& options) {
  NEARDUP_RETURN_IF_ERROR(collection.CheckRecipe(fingerprinter.recipe()));
  if (options.passages_top > 0 && !collection.stores_texts()) {
    return FailedPreconditionError("collection " + collection.dir() +
                                   " does not store texts (created with --no-texts): matching "
                                   "passages are unavailable");
  }
  if (!fingerprinter.selection().chunks) {
    return InvalidArgumentError("the query fingerprinter does not compute chunks");
  }
  Fingerprint fingerprint;
  NEARDUP_RETURN_IF_ERROR(fingerprinter.Compute(text, &fingerprint));
  QueryResult result;
  result.num_chunks = static_cast<uint32_t>(fingerprint.chunks.size());
  ContainmentSearcher searcher(collection.index());
  std::vector<ContainmentMatch> matches = searcher.Search(
      fingerprint.chunks, SearchOptions(collection, options.top_n, options.min_similarity),
      kNoDocument, &result.search);
  std::vector<uint32_t> docs;
  for (const ContainmentMatch& m : matches) docs.push_back(m.doc);
  NEARDUP_ASSIGN_OR_RETURN(auto ids, collection.ExternalIds(docs));
  for (const ContainmentMatch& m : matches) {
    result.matches.push_back({m.doc, ids[m.doc], m.shared, m.a_in_b, m.b_in_a, {}});
  }
  NEARDUP_RETURN_IF_ERROR(
      internal::AddPassages(collection, text, options.passages_top, &result.matches));
  return result;
}

}  // namespace neardup
