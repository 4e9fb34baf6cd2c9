// The verified near-duplicate pairs of a corpus spread over MPI ranks, the
// same pairs as FindNearDuplicatePairs over the whole corpus in one process
// (neardup/near_duplicate_stages.h's invariant; see docs/DISTRIBUTED.md).
//
// MinHash: in rounds of LSH bands (as many as --memory-mb allows), every
// rank computes its documents' band keys (ComputeBandKeys) and sends each
// (band, key, document) to the key's owner rank (a hash of band and key);
// the owner groups equal keys into candidate pairs and sends each pair to
// its verifier, the owner of one of its documents (band_groups.h). There the
// candidates are deduplicated, the sketches (and chunk sets, for exact
// verification) of the other documents are fetched from their owners, and
// the pairs verified (VerifyCandidates).
// SimHash: rank r of N holds key-prefix shard r of every permuted table
// (HammingShards, neardup/hamming_shards.h): each document's SimHash and
// number (16 bytes) go once to every rank owning one of its table keys (one
// Exchange), and each rank self-joins its shards; a pair is found on the
// rank holding its key in its canonical table, exactly once.
// Either way the pairs end where PairPlacement says, sorted by (a, b).
// Memory per rank: its share of the sketches; one band round of keys
// (20 bytes per document and band, sent and received); its candidates; the
// sketches it fetched. SimHash (since session 18): the documents received,
// a document going to at most ~k + 1 ranks (one per possible first block of
// a table key), so a rank gets ~15/16 of them at 2 ranks and ~(k + 1) / N at
// N >> k + 1 (bench/simhash_shard_model.py); for each, 16 bytes received,
// 16 sorted and 16 of transient sort scratch, then ~12 bytes a distinct
// SimHash and 8 bytes a value of its table slices (~1/N of each table), and
// its share of the pairs.
#ifndef NEARDUP_APPS_MPI_DISTRIBUTED_PAIRS_H_
#define NEARDUP_APPS_MPI_DISTRIBUTED_PAIRS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mpi_comm.h"
#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/stage_time.h"
#include "neardup/status.h"

namespace neardup::mpi {

// Where the documents are: rank r holds the global documents
// [first[r], first[r] + count[r]), consecutive ranks consecutive ranges.
struct DocumentLayout {
  std::vector<uint64_t> first;
  std::vector<uint64_t> count;
  uint64_t total = 0;

  static DocumentLayout FromCounts(const std::vector<uint64_t>& counts);
  // REQUIRES: doc < total.
  int OwnerOf(uint64_t doc) const;
};

struct DistributedPairsStats {
  uint64_t band_rounds = 0;  // MinHash: rounds of the band key shuffle
  // Bytes this rank sent to other ranks (since session 10 none counts
  // what a rank keeps: before, key and candidate bytes included it).
  uint64_t key_bytes = 0;  // band keys
  // Sketches for verification, and the records (with their ids and
  // numbers) handed to the ranks that asked for them to sketch there.
  uint64_t sketch_bytes = 0;
  uint64_t candidate_bytes = 0;
  uint64_t verified_pairs = 0;  // this rank's verified pairs (before kForests)
  uint64_t pair_bytes = 0;      // bytes of verified pairs this rank sent to be placed
  // MinHash: documents whose deferred sketches it computed (its own and
  // those whose records were handed to it).
  uint64_t sketched_documents = 0;
  // MinHash: records of deferred documents this rank handed to another
  // rank to sketch (of them, those whose sketches come back here), and
  // those handed to it (of them, those whose sketches it sent back). For
  // --profile; not saved by --checkpoint (a resumed job prints 0).
  uint64_t handed_out_records = 0;
  uint64_t handed_out_back = 0;
  uint64_t handed_in_records = 0;
  uint64_t handed_in_back = 0;
  // MinHash: candidates it handed to another rank to verify (the split by
  // cost).
  uint64_t moved_candidates = 0;
  // MinHash: the last band round's merge, the pairs taken in (this rank's
  // own, earlier rounds' and its peers', a pair found by several key
  // owners once each) and the union kept (for --profile; not saved by
  // --checkpoint: 0 after a resume).
  uint64_t band_merge_in = 0;
  uint64_t band_merge_out = 0;
  // This rank's time in each stage, in order (for --profile; not saved by
  // --checkpoint).
  struct Stage {
    const char* name;
    StageTime time;
    StageTime in_mpi_at_end;  // comm.in_mpi() when the stage ended
  };
  std::vector<Stage> stages;
};

// Where FindPairsDistributed leaves the pairs.
enum class PairPlacement {
  // For the components rule, which needs only the connected components:
  // each rank's pairs reduced to a spanning forest (a pair is kept when it
  // joins two components of the rank's earlier pairs: at most one per
  // document), left on that rank. The union of the forests has the
  // components of all pairs, so the distributed union-find
  // (distributed_clusters.h) gives ClusterDocuments(kComponents)'s clusters
  // (a clique of m copies: m - 1 pairs instead of m(m-1)/2). Until session
  // 17 the forests went to rank 0, which clustered them alone.
  kForests,
  // Each pair on the owner of its first document: the ranks' lists,
  // concatenated in rank order, are the sorted list (so each rank can
  // write its part of `pairs`' output). 28 bytes a pair, spread.
  kOwners,
  // The leader rule's placement: each pair on the owner of one of its
  // documents, sorted by (a, b) there. MinHash: it stays on the rank that
  // verified it, the owner of its first or of its second document
  // (VerifierOf, band_groups.cc): the leader rule's scan
  // (distributed_clusters.h) needs no pair moved (until session 11 each
  // went to its second document's owner, 28 bytes a pair, all of them to
  // the later ranks). SimHash: a pair is found on the rank of its shard,
  // which may own neither document: as kOwners, on the owner of its first
  // document.
  kVerifiers,
};

// How a rank computes the verification sketches (bottom-k; chunk sets for
// exact verification) that the first pass left out (deferred: only the
// candidate sketches were computed, as `neardup` does,
// neardup/deferred_sketches.h).
struct DeferredSketches {
  // Sets them in (*local)[doc] for this rank's documents `docs` (indices
  // into *local, ascending).
  std::function<Status(std::span<const uint64_t> docs, std::vector<Fingerprint>* local)> again;
  // This rank's document `doc` (an index): its kept JSONL record (empty
  // where none was kept: such a document is never handed over) and its id.
  std::function<std::string_view(uint64_t doc)> record;
  std::function<std::string_view(uint64_t doc)> id;
  // The same sketches, as `again` sets them on the records' owner, of
  // records read by another rank (ids[i], records[i]): (*out)[i] gets
  // num_tokens, the bottom-k sketch and the chunk set.
  std::function<Status(std::vector<std::string> ids, std::vector<std::string> records,
                       std::vector<Fingerprint>* out)>
      of_records;
};

// Collective. `local` are this rank's documents (moved from: they become
// part of the verification set). MinHash: a document of a candidate pair
// (this rank's, or asked for by its verifier) whose bottom-k sketch is
// empty was deferred, and gets its verification sketches from `deferred`
// (whose members may be empty when no document was deferred): on its owner,
// or, to even out the ranks' sketching (the ranks' record bytes to sketch,
// work_split.h), on the one rank that asked for it, which receives its
// record. The pairs, sorted by (a, b),
// placed as `placement` says. Adds candidates and
// exact_checks of this rank to *report; stats->verified_pairs: this rank's verified pairs.
// `memory_bytes` bounds one band round's keys on a rank.
// *verification_set: MinHash, on success, the documents this rank verified
// with (its own `local` and those it fetched, with their sketches), handed
// back so that the caller chooses when to free it (a free() per document's
// vectors: ~0.1 s a rank on half the 1M corpus); empty otherwise.
Result<std::vector<SimilarPair>> FindPairsDistributed(
    Comm& comm, const DocumentLayout& layout, std::vector<Fingerprint> local,
    const NearDuplicateScheme& scheme, const NearDuplicateOptions& options, uint64_t memory_bytes,
    PairPlacement placement, const DeferredSketches& deferred, NearDuplicateReport* report,
    DistributedPairsStats* stats, std::vector<Fingerprint>* verification_set);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_DISTRIBUTED_PAIRS_H_
