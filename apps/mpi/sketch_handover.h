// The deferred sketches' handover of neardup-mpi's MinHash verification
// (distributed_pairs.cc, docs/DISTRIBUTED.md "Who sketches"): before the
// ranks compute the verification sketches of their documents of candidate
// pairs, a heavy rank hands records to a light one, which sketches them.
// Here since session 15 (it was in distributed_pairs.cc).
#ifndef NEARDUP_APPS_MPI_SKETCH_HANDOVER_H_
#define NEARDUP_APPS_MPI_SKETCH_HANDOVER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "distributed_pairs.h"
#include "document_set.h"
#include "mpi_comm.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/status.h"

namespace neardup::mpi {

// Who sketches what (HandOverSketching's result).
struct SketchWork {
  // This rank's documents (local indices, ascending) it sketches itself.
  std::vector<uint64_t> deferred;
  // Per local document: 1 when its record went to `receiver`, which
  // sketches it; no sketch of it is sent from here.
  std::vector<uint8_t> handed_out;
  size_t receiver = 0;  // the rank's count when it gave nothing
  // Of those, the ones this rank needs itself (local indices, ascending):
  // their sketches come back at the end of the receiver's reply.
  std::vector<uint64_t> coming_back;
  // The records handed here, sketched here, in global document order:
  // their numbers, senders, sketches, and whether the sender needs the
  // sketches back (at the end of this rank's reply to it).
  std::vector<uint64_t> in_docs;
  std::vector<size_t> in_from;
  std::vector<Fingerprint> in_sketches;
  std::vector<uint8_t> in_back;
};

// The deferred sketches evened out between ranks: the ranks' costs (the
// record bytes of their deferred documents) gathered, and each heavy rank
// hands its receiver (work_split.h's HandoverOf) the records of documents
// no third rank asked for (RecordsToHand), which the receiver sketches, so
// that no rank waits for the heaviest one's sketches (on the 1M corpus
// rank 0 of two sketched 117,051 documents, rank 1 64,647). A record is
// sent with its number, its id and whether the giver needs its sketches
// back (its own candidates name it). `fetched`: the documents this rank
// asked for; `local`: this rank's documents (their bottom-k sketch empty
// where deferred). Collective (one AllGather; one Exchange when some rank gives).
Status HandOverSketching(Comm& comm, const DocumentLayout& layout, const DeferredSketches& sketches,
                         const std::vector<CandidatePair>& mine,
                         const std::vector<std::vector<uint64_t>>& asked_docs,
                         const DocumentSet& fetched, const std::vector<Fingerprint>& local,
                         SketchWork* work, DistributedPairsStats* stats);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_SKETCH_HANDOVER_H_
