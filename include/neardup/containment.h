// Asymmetric containment search over a ChunkIndex: which indexed documents
// share the most chunks with a query document, in both directions.
//
//   shared(A, B) = |{c in A ∩ B : df(c) <= max_document_frequency}|
//   a_in_b       = shared(A, B) / |A|   (how much of A is found in B)
//   b_in_a       = shared(A, B) / |B|   (how much of B is found in A)
// where df(c) is the number of indexed documents containing chunk c and |A|,
// |B| are the full chunk counts (boilerplate chunks stay in the denominators:
// a document made only of boilerplate is similar to nothing). Capping df
// (Broder 1997; the "stop-chunk" rule of plagiarism detectors) keeps licence
// texts, headers and templates from making every document similar to every
// other; it also bounds the work per query chunk.
//
// Ranking (frozen, so results are deterministic and a partial recomputation
// equals a full one): score = max(a_in_b, b_in_a), descending; ties by the
// smaller document number. A match needs shared > 0 and score >= min_similarity.
//
// Cost of Search: one lookup per index tier per query chunk and one postings
// walk, O(sum of the capped postings lengths of the query's chunks) counter
// increments, then O(candidates) to rank.
// Memory: 4 bytes per document slot of the index (a counter array reused
// across searches) plus the candidate list.
// Thread safety: a ContainmentSearcher holds scratch space; use one per
// thread. Many searchers may share one index.
#ifndef NEARDUP_CONTAINMENT_H_
#define NEARDUP_CONTAINMENT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "neardup/chunk_index.h"
#include "neardup/tiered_chunk_index.h"

namespace neardup {

inline constexpr uint32_t kNoDocument = std::numeric_limits<uint32_t>::max();

struct ContainmentOptions {
  // Chunks found in more than this many indexed documents are ignored for
  // scoring. Default 0: no cap (exact containment; slow on archives with
  // heavy boilerplate). Collections store their own cap.
  uint32_t max_document_frequency = 0;
  // Matches returned per query. Default 100.
  size_t top_n = 100;
  // Least max(a_in_b, b_in_a) reported. Default 0.0: every document sharing
  // at least one counted chunk.
  double min_similarity = 0.0;
};

struct ContainmentMatch {
  uint32_t doc = 0;     // the indexed document (B)
  uint32_t shared = 0;  // shared counted chunks
  double a_in_b = 0.0;  // shared / |query|
  double b_in_a = 0.0;  // shared / |B|

  double score() const { return a_in_b > b_in_a ? a_in_b : b_in_a; }
  friend bool operator==(const ContainmentMatch&, const ContainmentMatch&) = default;
};

// The ranking order above: true when `a` comes before `b`.
bool RanksBefore(const ContainmentMatch& a, const ContainmentMatch& b);

// The counted chunks a query shares with one indexed document: the partial
// score of a piece of the work when it is split by chunk-ID range
// (neardup-mpi); the pieces' counts of a document sum to its `shared`.
struct SharedChunks {
  uint32_t doc = 0;
  uint32_t shared = 0;
  friend bool operator==(const SharedChunks&, const SharedChunks&) = default;
};

struct ContainmentSearchStats {
  uint64_t postings_visited = 0;    // counter increments
  uint64_t boilerplate_chunks = 0;  // query chunks skipped by the cap
  uint64_t candidates = 0;          // documents sharing >= 1 counted chunk
};

class ContainmentSearcher {
 public:
  // Searches `index` (a ChunkIndex converts to a one-tier index); the
  // searcher holds a copy that shares its arrays. Over several tiers the
  // answers are exactly those of the one merged index.
  explicit ContainmentSearcher(const TieredChunkIndex& index);

  // The top matches of a query whose chunk set is `query` (strictly
  // ascending), best first (every match when options.top_n is SIZE_MAX). `exclude_doc` is never
  // returned (pass the query's own number when it is indexed). `stats` (may be null) is added to.
  std::vector<ContainmentMatch> Search(std::span<const uint32_t> query,
                                       const ContainmentOptions& options,
                                       uint32_t exclude_doc = kNoDocument,
                                       ContainmentSearchStats* stats = nullptr);

  // The counting half of Search, for work split by chunk-ID range: the
  // counted chunks of `query_piece` shared with each live indexed document
  // other than `exclude_doc`, one entry per document with a count > 0, in no
  // particular order. `query_piece` is any strictly ascending part of a
  // query (QueryChunksInRange); df and the cap are the whole index's, so the
  // counts of a query's disjoint pieces, summed per document and ranked by
  // RankSharedChunks, give exactly Search's matches. `stats` (may be null)
  // is added to (candidates: the entries returned).
  std::vector<SharedChunks> CountShared(std::span<const uint32_t> query_piece,
                                        uint32_t max_document_frequency,
                                        uint32_t exclude_doc = kNoDocument,
                                        ContainmentSearchStats* stats = nullptr);

 private:
  // Counts `query`'s counted chunks into counts_ and touched_.
  void Count(std::span<const uint32_t> query, uint32_t max_document_frequency,
             ContainmentSearchStats* stats);

  TieredChunkIndex index_;
  std::vector<std::span<const uint32_t>> postings_;  // per tier, for one chunk
  std::vector<uint32_t> counts_;                     // Invariant: all zero between searches
  std::vector<uint32_t> touched_;                    // documents with counts_ > 0
};

// The ranking half of Search: the matches, best first, of a query of
// `query_size` chunks (its whole chunk set) given the summed shared counts of
// every document it shares a counted chunk with (`counts`: each document at
// most once, in any order, the query's own number left out), with the
// document sizes of `index`. The same arithmetic and order as Search, which
// runs it over its own counts.
std::vector<ContainmentMatch> RankSharedChunks(std::span<const SharedChunks> counts,
                                               size_t query_size, const TieredChunkIndex& index,
                                               const ContainmentOptions& options);

// The part of `chunks` (strictly ascending) in the chunk-ID range
// [begin, end) (end up to 2^32): a subspan, found by binary search.
std::span<const uint32_t> QueryChunksInRange(std::span<const uint32_t> chunks, uint64_t begin,
                                             uint64_t end);

// The documents of `after` whose scores with UNCHANGED documents may differ
// from `before`, when `after` is `before` with documents of chunk sets
// `changed` added or removed (both versions of a modified document belong in
// `changed`). df changes only for the changed documents' chunks, so a score
// between two unchanged documents changes only when they share such a chunk
// whose counted status (df <= max_document_frequency) differs before and
// after; the answer is every document of `after` in the postings of such a
// chunk. Every other unchanged document keeps exactly its scores with every
// other unchanged document: its top-N list changes only by the new
// documents' scores (merged in) and by losing a retired document it listed
// (which forces a recomputation). That is what lets an incremental top-N
// update equal a full recomputation. Returns ascending document numbers.
// Cost: one postings walk per changed chunk in both indexes.
std::vector<uint32_t> CapCrossingDocuments(const TieredChunkIndex& before,
                                           const TieredChunkIndex& after,
                                           std::span<const std::span<const uint32_t>> changed,
                                           uint32_t max_document_frequency);

}  // namespace neardup

#endif  // NEARDUP_CONTAINMENT_H_
