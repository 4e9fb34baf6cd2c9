// How neardup-mpi evens out work between ranks, the pure part (no MPI):
// which rank gives work to which, and which deferred documents a rank hands
// over as records for the asking rank to sketch (distributed_pairs.cc).
// Both the split of verification by cost (verification_split.h) and the
// split of the deferred sketches use the same pairing: the ranks ranked by
// cost, the heaviest gives to the lightest, the second heaviest to the
// second lightest, and so on, when their gap exceeds 2% of the heavier's
// cost, half the gap. Deterministic (a function of the costs), so a resumed
// job splits as the run that saved it did. Cost: O(ranks log ranks) for the
// pairing, O(documents offered) for the choice. Pure, thread-compatible.
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

// Why a rank needs a deferred document's verification sketches (bits of
// a byte per document).
inline constexpr uint8_t kNeededHere = 1;          // a candidate this rank verifies
inline constexpr uint8_t kAskedByReceiver = 2;     // the rank it gives to asked for it
inline constexpr uint8_t kAskedByAnotherRank = 4;  // any other rank asked for it

// The deferred documents (`deferred`, ascending, local indices; `bytes[i]`
// the record size of deferred[i], the cost of sketching it) that a rank
// hands to its receiver as records, for the receiver to sketch: those no
// third rank asked for (needs[doc] has no kAskedByAnotherRank bit: no other
// rank waits for their sketches from this one) and that have a record
// (bytes > 0), first those only the receiver needs (needs[doc] ==
// kAskedByReceiver), then those this rank needs too (their sketches come
// back), each pass in document order, until their bytes reach `amount`.
// Ascending. REQUIRES: bytes.size() == deferred.size(); every deferred
// doc < needs.size().
std::vector<uint64_t> RecordsToHand(std::span<const uint64_t> deferred,
                                    std::span<const uint64_t> bytes, std::span<const uint8_t> needs,
                                    uint64_t amount);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_WORK_SPLIT_H_
