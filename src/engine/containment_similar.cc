// ComputeSimilarities: top-N per document over the collection's chunk
// index, full or incremental, and QueryDocument.
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <limits>
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

// Runs `search(i, searcher, stats)` for i in [0, n) in parallel, one
// searcher per thread; the first error wins.
template <typename SearchOne>
Status ForEachSearch(const Collection& collection, size_t n, SimilarStats* stats,
                     SearchOne search_one) {
  // A searcher keeps a pointer to its index: one copy for the whole run.
  const TieredChunkIndex index = collection.index();
  tbb::enumerable_thread_specific<ContainmentSearcher> searchers(
      [&] { return ContainmentSearcher(index); });
  tbb::enumerable_thread_specific<ContainmentSearchStats> search_stats;
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex error_mutex;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 64),
                    [&](const tbb::blocked_range<size_t>& range) {
                      ContainmentSearcher& searcher = searchers.local();
                      ContainmentSearchStats& local = search_stats.local();
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        Status status = search_one(i, searcher, local);
                        if (!status.ok()) {
                          std::lock_guard<std::mutex> lock(error_mutex);
                          if (!failed.exchange(true)) first_error = std::move(status);
                          return;
                        }
                      }
                    });
  if (failed) return first_error;
  if (stats != nullptr) {
    for (const ContainmentSearchStats& s : search_stats) {
      stats->search.postings_visited += s.postings_visited;
      stats->search.boilerplate_chunks += s.boilerplate_chunks;
      stats->search.candidates += s.candidates;
    }
  }
  return Status::Ok();
}

// Every match of each of `docs` (top_n = `top_n`), by position in `docs`.
Result<std::vector<std::vector<ContainmentMatch>>> SearchAll(const Collection& collection,
                                                             std::span<const uint32_t> docs,
                                                             size_t top_n, double min,
                                                             SimilarStats* stats) {
  const ContainmentOptions search = SearchOptions(collection, top_n, min);
  std::vector<std::vector<ContainmentMatch>> results(docs.size());
  NEARDUP_RETURN_IF_ERROR(ForEachSearch(
      collection, docs.size(), stats,
      [&](size_t i, ContainmentSearcher& searcher, ContainmentSearchStats& local) -> Status {
        NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, collection.Chunks(docs[i]));
        results[i] = searcher.Search(chunks, search, docs[i], &local);
        return Status::Ok();
      }));
  return results;
}

void AppendRows(uint32_t a, std::span<const ContainmentMatch> matches, size_t top_n,
                std::vector<SimilarityRow>* rows) {
  const size_t n = std::min(top_n, matches.size());
  for (size_t i = 0; i < n; ++i)
    rows->push_back({a, matches[i].doc, matches[i].a_in_b, matches[i].b_in_a});
}

// The rows of `docs` (ascending), in that order.
Result<std::vector<SimilarityRow>> RowsFor(const Collection& collection,
                                           std::span<const uint32_t> docs,
                                           const SimilarOptions& options, SimilarStats* stats) {
  NEARDUP_ASSIGN_OR_RETURN(
      auto results, SearchAll(collection, docs, options.top_n, options.min_similarity, stats));
  std::vector<SimilarityRow> rows;
  for (size_t i = 0; i < docs.size(); ++i) AppendRows(docs[i], results[i], options.top_n, &rows);
  if (stats != nullptr) {
    stats->recomputed += docs.size();
    stats->rows += rows.size();
  }
  return rows;
}

// A score of `a` with a document added since the table: what a search from
// `a` would compute (shared / |a| and shared / |b| are the same divisions).
struct MergeCandidate {
  uint32_t a = 0;
  ContainmentMatch match;
};

// The incremental update. Lists of `recompute` and `added` documents are
// computed; every other list that an added document scores with gets that
// score merged in (neardup/containment.h, CapCrossingDocuments, says why this
// equals a full recomputation). Returns the documents whose rows change and
// their new rows.
Status IncrementalRows(const Collection& collection, std::span<const uint32_t> recompute,
                       std::span<const uint32_t> added, const SimilarOptions& options,
                       std::vector<uint32_t>* replaced, std::vector<SimilarityRow>* rows,
                       SimilarStats* stats) {
  std::vector<uint32_t> own;  // documents whose lists are computed from scratch
  std::set_union(recompute.begin(), recompute.end(), added.begin(), added.end(),
                 std::back_inserter(own));
  std::vector<uint32_t> searched;  // recomputed and not added
  std::set_difference(recompute.begin(), recompute.end(), added.begin(), added.end(),
                      std::back_inserter(searched));
  NEARDUP_ASSIGN_OR_RETURN(auto searched_matches, SearchAll(collection, searched, options.top_n,
                                                            options.min_similarity, stats));

  // Every score of an added document, not only its top-N: each may enter
  // another document's list. Searched a block at a time, keeping only each
  // other document's best top_n new scores, so memory stays bounded by the
  // lists, not by the pairs (without a cap one document can score with
  // most of the archive).
  constexpr size_t kBlock = 512;
  const auto by_list_then_rank = [](const MergeCandidate& x, const MergeCandidate& y) {
    if (x.a != y.a) return x.a < y.a;
    return RanksBefore(x.match, y.match);
  };
  std::vector<std::vector<ContainmentMatch>> added_lists(added.size());
  std::vector<MergeCandidate> candidates;
  for (size_t begin = 0; begin < added.size(); begin += kBlock) {
    const std::span<const uint32_t> block =
        added.subspan(begin, std::min(kBlock, added.size() - begin));
    NEARDUP_ASSIGN_OR_RETURN(auto matches,
                             SearchAll(collection, block, std::numeric_limits<size_t>::max(),
                                       options.min_similarity, stats));
    for (size_t i = 0; i < block.size(); ++i) {
      for (const ContainmentMatch& m : matches[i]) {
        if (std::binary_search(own.begin(), own.end(), m.doc)) continue;
        candidates.push_back({m.doc, {block[i], m.shared, m.b_in_a, m.a_in_b}});
      }
      matches[i].resize(std::min(matches[i].size(), options.top_n));  // best first
      added_lists[begin + i] = std::move(matches[i]);
    }
    std::sort(candidates.begin(), candidates.end(), by_list_then_rank);
    size_t kept = 0;
    for (size_t i = 0, run = 0; i < candidates.size(); ++i) {
      run = (i > 0 && candidates[i].a == candidates[i - 1].a) ? run + 1 : 0;
      if (run < options.top_n) candidates[kept++] = candidates[i];
    }
    candidates.resize(kept);
  }
  std::vector<uint32_t> merge_docs;
  for (const MergeCandidate& c : candidates) {
    if (merge_docs.empty() || merge_docs.back() != c.a) merge_docs.push_back(c.a);
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<SimilarityRow> stored,
                           collection.ReadSimilarities(merge_docs));

  // Both document lists are ascending, and so are the rows written.
  size_t next_added = 0, next_searched = 0, next_candidate = 0, next_stored = 0;
  std::vector<ContainmentMatch> list;
  size_t own_i = 0, merge_i = 0;
  while (own_i < own.size() || merge_i < merge_docs.size()) {
    const bool take_own =
        merge_i == merge_docs.size() || (own_i < own.size() && own[own_i] < merge_docs[merge_i]);
    if (take_own) {
      const uint32_t doc = own[own_i++];
      replaced->push_back(doc);
      if (next_added < added.size() && added[next_added] == doc) {
        AppendRows(doc, added_lists[next_added++], options.top_n, rows);
      } else {
        AppendRows(doc, searched_matches[next_searched++], options.top_n, rows);
      }
      continue;
    }
    const uint32_t doc = merge_docs[merge_i++];
    list.clear();
    const size_t old_begin = next_stored;  // doc's stored list, best first
    while (next_stored < stored.size() && stored[next_stored].a == doc) {
      const SimilarityRow& r = stored[next_stored++];
      list.push_back({r.b, 0, r.a_in_b, r.b_in_a});
    }
    const size_t old_size = next_stored - old_begin;
    while (next_candidate < candidates.size() && candidates[next_candidate].a == doc) {
      list.push_back(candidates[next_candidate++].match);
    }
    std::sort(list.begin(), list.end(), RanksBefore);
    if (list.size() > options.top_n) list.resize(options.top_n);
    bool same = list.size() == old_size;
    for (size_t i = 0; same && i < list.size(); ++i) same = list[i].doc == stored[old_begin + i].b;
    if (same) continue;  // every new score ranked below the list's last entry
    replaced->push_back(doc);
    AppendRows(doc, list, options.top_n, rows);
    if (stats != nullptr) ++stats->merged;
  }
  if (stats != nullptr) {
    stats->recomputed += own.size();
    stats->rows += rows->size();
  }
  return Status::Ok();
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

Result<bool> SimilaritiesAreCurrent(const Collection& collection, const SimilarOptions& options) {
  NEARDUP_RETURN_IF_ERROR(CheckOptions(options));
  if (options.force_full) return false;
  NEARDUP_ASSIGN_OR_RETURN(std::optional<SimilarityParams> stored,
                           collection.StoredSimilarityParams());
  if (!stored.has_value() || *stored != SimilarityParams{options.top_n, options.min_similarity}) {
    return false;
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<uint32_t> dirty, collection.DirtyDocuments());
  NEARDUP_ASSIGN_OR_RETURN(std::vector<uint32_t> added, collection.AddedSinceSimilarities());
  return dirty.empty() && added.empty();
}

Status ComputeSimilarities(Collection& collection, const SimilarOptions& options,
                           SimilarStats* stats) {
  NEARDUP_RETURN_IF_ERROR(CheckOptions(options));
  SimilarStats local;
  const SimilarityParams params{options.top_n, options.min_similarity};
  NEARDUP_ASSIGN_OR_RETURN(std::optional<SimilarityParams> stored,
                           collection.StoredSimilarityParams());
  const bool full = options.force_full || !stored.has_value() || *stored != params;
  const auto live = [&](std::vector<uint32_t> docs) {
    // Dirty or added documents retired since are dropped (their rows are);
    // a damaged segment is not a retirement: RowsFor reports it.
    std::erase_if(docs, [&](uint32_t doc) {
      Result<std::span<const uint32_t>> chunks = collection.Chunks(doc);
      return !chunks.ok() && chunks.status().code() == StatusCode::kNotFound;
    });
    return docs;
  };
  local.full = full;
  std::vector<uint32_t> replaced;
  std::vector<SimilarityRow> rows;
  if (full) {
    replaced = collection.LiveDocuments();
    NEARDUP_ASSIGN_OR_RETURN(rows, RowsFor(collection, replaced, options, &local));
  } else {
    NEARDUP_ASSIGN_OR_RETURN(std::vector<uint32_t> dirty, collection.DirtyDocuments());
    NEARDUP_ASSIGN_OR_RETURN(std::vector<uint32_t> added, collection.AddedSinceSimilarities());
    NEARDUP_RETURN_IF_ERROR(IncrementalRows(collection, live(std::move(dirty)),
                                            live(std::move(added)), options, &replaced, &rows,
                                            &local));
  }
  NEARDUP_RETURN_IF_ERROR(collection.StoreSimilarities(params, full, replaced, rows));
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
  const TieredChunkIndex index = collection.index();  // the searcher points at it
  ContainmentSearcher searcher(index);
  std::vector<ContainmentMatch> matches = searcher.Search(
      fingerprint.chunks, SearchOptions(collection, options.top_n, options.min_similarity),
      kNoDocument, &result.search);
  std::vector<uint32_t> docs;
  for (const ContainmentMatch& m : matches) docs.push_back(m.doc);
  NEARDUP_ASSIGN_OR_RETURN(auto infos, collection.FindDocuments(docs));
  for (const ContainmentMatch& m : matches) {
    const DocumentInfo& info = infos[m.doc];
    result.matches.push_back(
        {m.doc, info.id, m.shared, m.a_in_b, m.b_in_a, {}, info.name, info.format});
  }
  NEARDUP_RETURN_IF_ERROR(
      internal::AddPassages(collection, text, options.passages_top, &result.matches));
  return result;
}

}  // namespace neardup
