#include "distributed_similar.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <string>
#include <utility>

namespace neardup::mpi {
namespace {

// Runs `one(i, searcher, stats)` for i in [0, n) on all cores, one searcher
// per thread; the first error wins.
template <typename One>
Status ParallelOverDocuments(size_t n,
                             tbb::enumerable_thread_specific<ContainmentSearcher>& searchers,
                             tbb::enumerable_thread_specific<ContainmentSearchStats>& stats,
                             One one) {
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex error_mutex;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16),
                    [&](const tbb::blocked_range<size_t>& range) {
                      ContainmentSearcher& searcher = searchers.local();
                      ContainmentSearchStats& local = stats.local();
                      for (size_t i = range.begin(); i != range.end() && !failed; ++i) {
                        Status status = one(i, searcher, local);
                        if (!status.ok()) {
                          std::lock_guard<std::mutex> lock(error_mutex);
                          if (!failed.exchange(true)) first_error = std::move(status);
                          return;
                        }
                      }
                    });
  return failed ? first_error : Status::Ok();
}

// Sums the counts of each document (sorted by document first).
void SumPerDocument(std::vector<SharedChunks>* counts) {
  std::sort(counts->begin(), counts->end(),
            [](const SharedChunks& x, const SharedChunks& y) { return x.doc < y.doc; });
  size_t out = 0;
  for (size_t i = 0; i < counts->size(); ++i) {
    if (out > 0 && (*counts)[out - 1].doc == (*counts)[i].doc) {
      (*counts)[out - 1].shared += (*counts)[i].shared;
    } else {
      (*counts)[out++] = (*counts)[i];
    }
  }
  counts->resize(out);
}

}  // namespace

Result<std::vector<SimilarityRow>> SimilarRowsOnRanks(Comm& comm, const Collection& collection,
                                                      const SimilarOptions& options,
                                                      uint64_t docs_per_round,
                                                      DistributedSimilarStats* stats) {
  const std::vector<uint32_t> live = collection.LiveDocuments();
  const TieredChunkIndex index = collection.index();
  const uint64_t ranks = static_cast<uint64_t>(comm.size());
  const uint64_t rank = static_cast<uint64_t>(comm.rank());
  // This rank's chunk IDs, and each rank's share of the live documents.
  const uint64_t chunk_begin = (rank << 32) / ranks;
  const uint64_t chunk_end = ((rank + 1) << 32) / ranks;
  const auto share_begin = [&](uint64_t owner) { return live.size() * owner / ranks; };
  uint64_t largest_share = 0;
  for (uint64_t owner = 0; owner < ranks; ++owner) {
    largest_share = std::max<uint64_t>(largest_share, share_begin(owner + 1) - share_begin(owner));
  }
  docs_per_round = std::max<uint64_t>(docs_per_round, 1);
  const uint64_t rounds = (largest_share + docs_per_round - 1) / docs_per_round;
  stats->documents = live.size();
  stats->rounds = rounds;

  const ContainmentOptions search{collection.max_document_frequency(), options.top_n,
                                  options.min_similarity};
  tbb::enumerable_thread_specific<ContainmentSearcher> searchers(
      [&] { return ContainmentSearcher(index); });
  tbb::enumerable_thread_specific<ContainmentSearchStats> search_stats;
  std::vector<SimilarityRow> rows;
  for (uint64_t round = 0; round < rounds; ++round) {
    // The round's query documents: a slice of each owner's share, owner by
    // owner (so each owner's slice is contiguous).
    std::vector<uint32_t> docs;
    std::vector<size_t> slice(ranks + 1);
    for (uint64_t owner = 0; owner < ranks; ++owner) {
      slice[owner] = docs.size();
      const uint64_t end = share_begin(owner + 1);
      const uint64_t begin = std::min(end, share_begin(owner) + round * docs_per_round);
      docs.insert(docs.end(), live.begin() + static_cast<ptrdiff_t>(begin),
                  live.begin() + static_cast<ptrdiff_t>(std::min(end, begin + docs_per_round)));
    }
    slice[ranks] = docs.size();

    std::vector<std::vector<SharedChunks>> counts(docs.size());
    Status status = ParallelOverDocuments(
        docs.size(), searchers, search_stats,
        [&](size_t i, ContainmentSearcher& searcher, ContainmentSearchStats& local) -> Status {
          NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, collection.Chunks(docs[i]));
          counts[i] = searcher.CountShared(QueryChunksInRange(chunks, chunk_begin, chunk_end),
                                           search.max_document_frequency, docs[i], &local);
          return Status::Ok();
        });
    NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
    std::vector<std::string> send(ranks);
    for (uint64_t owner = 0; owner < ranks; ++owner) {
      ByteWriter writer(&send[owner]);
      for (size_t i = slice[owner]; i < slice[owner + 1]; ++i) {
        writer.PutVector(counts[i]);
        counts[i] = {};
      }
      stats->count_bytes += send[owner].size();
    }
    std::vector<Message> received;
    NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));

    // This rank's slice: every rank's counts of each document, summed.
    const std::span<const uint32_t> mine(docs.data() + slice[rank], slice[rank + 1] - slice[rank]);
    std::vector<std::vector<SharedChunks>> summed(mine.size());
    for (size_t r = 0; r < received.size() && status.ok(); ++r) {
      ByteReader reader(received[r]);
      std::vector<SharedChunks> part;
      for (size_t k = 0; k < mine.size() && status.ok(); ++k) {
        status = reader.GetVector(&part);
        summed[k].insert(summed[k].end(), part.begin(), part.end());
      }
      if (status.ok() && !reader.done()) {
        status = DataLossError("rank " + std::to_string(r) + " sent more partial counts than " +
                               std::to_string(mine.size()) + " documents");
      }
    }
    received.clear();
    std::vector<std::vector<ContainmentMatch>> matches(mine.size());
    if (status.ok()) {
      status = ParallelOverDocuments(
          mine.size(), searchers, search_stats,
          [&](size_t k, ContainmentSearcher&, ContainmentSearchStats&) -> Status {
            NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, collection.Chunks(mine[k]));
            SumPerDocument(&summed[k]);
            matches[k] = RankSharedChunks(summed[k], chunks.size(), index, search);
            summed[k] = {};
            return Status::Ok();
          });
    }
    NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
    for (size_t k = 0; k < mine.size(); ++k) {
      for (const ContainmentMatch& m : matches[k]) {
        rows.push_back({mine[k], m.doc, m.a_in_b, m.b_in_a});
      }
    }
  }
  for (const ContainmentSearchStats& s : search_stats) {
    stats->search.postings_visited += s.postings_visited;
    stats->search.boilerplate_chunks += s.boilerplate_chunks;
    stats->search.candidates += s.candidates;
  }
  return rows;
}

}  // namespace neardup::mpi
