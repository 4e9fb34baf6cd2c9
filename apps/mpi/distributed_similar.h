// Containment top-N over MPI ranks (`neardup-mpi similar COLLECTION`):
// every live document's top-N most similar documents of a collection,
// exactly the rows `neardup similar` prints (neardup/containment.h for the
// scores and the ranking), computed by all ranks together.
//
// The split (docs/DISTRIBUTED.md, "Containment"): rank r owns the chunk-ID
// range [r * 2^32 / N, (r + 1) * 2^32 / N) and a contiguous share of the
// live documents (by number). Every rank opens the same commit of the
// collection (shared file system; read-only, no writer lock) and, for every
// live document, counts the chunks of that document in its range shared
// with every other document (ContainmentSearcher::CountShared: the lookups
// and postings walks of its range only, with the whole index's df and
// boilerplate cap). The partial counts go to the owner of the query
// document, which sums them and ranks them (RankSharedChunks: Search's
// arithmetic), so every score is the double one process computes.
//
// Cost: the postings walks of one full computation, divided among the ranks
// by chunk range; each rank also reads every document's chunk set (memory-
// mapped segments) to cut out its range. Shuffled: 8 bytes per (document,
// other document, rank) with a shared chunk in that rank's range, plus 8
// bytes per document and rank. In rounds of `docs_per_round` documents of
// each owner's share, so a round holds docs_per_round x N lists of partial
// counts. Memory: the mapped collection, a counter array per thread (4 bytes
// per document number), one round's counts and this rank's rows.
#ifndef NEARDUP_APPS_MPI_DISTRIBUTED_SIMILAR_H_
#define NEARDUP_APPS_MPI_DISTRIBUTED_SIMILAR_H_

#include <cstdint>
#include <vector>

#include "mpi_comm.h"
#include "neardup/collection.h"
#include "neardup/containment.h"
#include "neardup/containment_engine.h"

namespace neardup::mpi {

struct DistributedSimilarStats {
  uint64_t documents = 0;         // live documents of the collection
  uint64_t rounds = 0;            // rounds of partial counts
  uint64_t count_bytes = 0;       // partial counts this rank sent (to others and itself)
  ContainmentSearchStats search;  // this rank's lookups
};

// Collective. This rank's rows (the lists of its share of the live
// documents, by ascending document number, each best first); the ranks'
// rows concatenated in rank order are ComputeAllSimilarities' rows.
// REQUIRES: every rank's `collection` is a view of the same commit.
Result<std::vector<SimilarityRow>> SimilarRowsOnRanks(Comm& comm, const Collection& collection,
                                                      const SimilarOptions& options,
                                                      uint64_t docs_per_round,
                                                      DistributedSimilarStats* stats);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_DISTRIBUTED_SIMILAR_H_
