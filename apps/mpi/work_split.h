// How neardup-mpi evens out work between ranks, the pure part (no MPI):
// which rank gives work to which. The split of verification by cost
// (verification_split.h) pairs the ranks ranked by cost: the heaviest
// gives to the lightest, the second heaviest to the second lightest, and
// so on, when their gap exceeds 2% of the heavier's cost, half the gap.
// Deterministic (a function of the costs), so a resumed job splits as the
// run that saved it did. Cost: O(ranks log ranks). Pure, thread-compatible.
#ifndef NEARDUP_APPS_MPI_WORK_SPLIT_H_
#define NEARDUP_APPS_MPI_WORK_SPLIT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace neardup::mpi {

// What one rank gives: `amount` of cost to rank `receiver`; receiver ==
// the number of ranks (and amount 0) when it gives nothing.
struct Handover {
  size_t receiver = 0;
  uint64_t amount = 0;
};

// The handover of rank `me` among ranks with `costs` (one per rank), of
// which only those with `eligible` take part (a rank without documents can
// take no work: it owns none of the documents). REQUIRES: costs.size() ==
// eligible.size(), me < costs.size().
Handover HandoverOf(std::span<const uint64_t> costs, const std::vector<bool>& eligible, size_t me);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_WORK_SPLIT_H_
