// The verifier's side of neardup-mpi's MinHash verification
// (distributed_pairs.cc): its local document numbering, and the split of
// the verification by cost between ranks (BalanceVerification).
#ifndef NEARDUP_APPS_MPI_VERIFICATION_SPLIT_H_
#define NEARDUP_APPS_MPI_VERIFICATION_SPLIT_H_

#include <algorithm>
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

// A verifier's local document numbers: the fetched documents before its
// own (`num_before` of the sorted global numbers in `remote`, the members of
// `fetched`), its own `num_mine` from `first_document`, then the rest of
// `remote`. Here, not in its own header, because the split below is its
// only user besides distributed_pairs.cc. Thread-compatible (it only reads).
struct LocalNumbering {
  const std::vector<uint64_t>& remote;
  const DocumentSet& fetched;
  size_t num_before;
  size_t num_mine;
  uint64_t first_document;
  // The documents of the corpus.
  uint64_t total;

  bool IsMine(uint64_t local_doc) const {
    return local_doc >= num_before && local_doc < num_before + num_mine;
  }
  uint64_t Global(uint64_t local_doc) const {
    if (local_doc < num_before) return remote[local_doc];
    if (local_doc < num_before + num_mine) return first_document + (local_doc - num_before);
    return remote[local_doc - num_mine];
  }
  // The local number of `remote[index]`.
  uint64_t OfRemote(size_t index) const { return index < num_before ? index : index + num_mine; }
  // The local number of global `doc` (O(1): a fetched one's by its rank in
  // `fetched`); false if this rank neither owns nor fetched it, or `doc` is
  // not a document of the corpus (any value is safe).
  bool Local(uint64_t doc, uint64_t* local) const {
    if (doc >= first_document && doc - first_document < num_mine) {
      *local = num_before + (doc - first_document);
      return true;
    }
    if (doc >= total || !fetched.Contains(doc)) return false;
    *local = OfRemote(fetched.Rank(doc));
    return true;
  }
};

// The work of verifying one candidate, in units of a sixteenth of a
// candidate's fixed cost (the two bottom-k sketches' estimate, the loop):
// 16, plus kChunkElementCost a chunk-set element of either document for
// exact verification (the merge walk). The weight is 1, which makes the cost
// close to a count (2.3-2.6 elements a candidate on the 1M corpus). Session
// 13 tried 6, from the two ranks' slope of the merge walk (perf: 1.38 against
// 1.01 CPU s for 62M against 54M elements), but the mean is ~20 ns an
// element, the ~125 ns for the rest of a candidate was not recorded, and
// with 6 the walk's imbalance did not move (1.33 against 0.90 s): unproven,
// so back to 1. The seam stays; a quiet run decides (docs/DISTRIBUTED.md,
// docs/BENCHMARKS.md "Session 13, MPI"). The weight changes only which rank
// verifies a pair, never the output. `sizes`: ChunkSizes of the
// verification set. Inline: summed over every candidate.
inline constexpr uint64_t kChunkElementCost = 1;
inline uint64_t VerificationCost(const std::vector<uint32_t>& sizes, const CandidatePair& pair) {
  return 16 + kChunkElementCost * (uint64_t{sizes[pair.a]} + sizes[pair.b]);
}

// Each document's chunk-set size, packed (4 bytes a document: read once per
// candidate, at random, it stays in cache, where the Fingerprints did not).
std::vector<uint32_t> ChunkSizes(const std::vector<Fingerprint>& verifying);

// Verification split by cost, not count: the verifiers were chosen by a hash
// of the pair (VerifierOf), which gives the ranks equal counts but not equal
// work. Every rank learns each rank's cost (the sum of VerificationCost of
// its candidates); the heaviest rank hands candidates to the lightest, the
// second heaviest to the second lightest, and so on, each until the two
// would be even (the gap is at least 2%). Only candidates the receiver can
// verify with what it holds move: one document its own, the other the
// giver's, of those the receiver fetched (asked_docs[receiver]), so no
// sketch moves and each pair stays on the owner of one of its documents
// (which the leader rule needs). *candidates (local numbers, sorted) loses
// the pairs moved (*moved_out of them); *moved_in gets those received, in
// local numbers, sorted. Collective.
Status BalanceVerification(Comm& comm, const DocumentLayout& layout, uint64_t cost,
                           const std::vector<std::vector<uint64_t>>& asked_docs,
                           const std::vector<uint32_t>& sizes, const LocalNumbering& numbering,
                           std::vector<CandidatePair>* candidates,
                           std::vector<CandidatePair>* moved_in, uint64_t* moved_out);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_VERIFICATION_SPLIT_H_
