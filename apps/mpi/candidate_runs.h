// Sorted, unique lists of candidate pairs for neardup-mpi's band-key shuffle
// (band_groups.h): the sort of the pairs one rank found for a verifier, and
// the merge of the sorted runs a verifier receives. Pure functions (no MPI),
// unit-tested against std::sort + std::unique in candidate_runs_test.
#ifndef NEARDUP_APPS_MPI_CANDIDATE_RUNS_H_
#define NEARDUP_APPS_MPI_CANDIDATE_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/near_duplicate_stages.h"
#include "neardup/status.h"
#include "stage_block.h"

namespace neardup::mpi {

// Sorts and removes repeated candidates (a pair sharing several bands is
// found several times). Documents below 2^32: O(n), a radix sort of the
// packed pairs, whose keys and scratch (8 B a pair each) are live beside
// the list (16 B a pair): 32 B a pair at the peak; std::sort otherwise
// (in place).
void SortUnique(std::vector<CandidatePair>* candidates);
// The same, the radix path's two key lists in *scratch: a block handed on
// (a rank sorts one list per verifier in turn, in the block that held the
// round's records), not fresh lists of pages the kernel zeroes (~180 MB a
// rank at 2 ranks on the 1M corpus) and then value-initialised.
void SortUnique(std::vector<CandidatePair>* candidates, StageBlock* scratch);

// The sorted union of runs of candidate pairs (each the bytes of sorted,
// unique CandidatePairs, as sent; a trailing partial pair is ignored),
// without repeats. DataLoss when a run is not sorted (the merged pairs would
// go out of order: the ranks are out of step), never a silently unsorted
// list, and when a pair is not a < b < `num_documents` (the runs come from
// other ranks; a later stage indexes by these ids). One output block of the
// runs' total size, a quarter more with `spare_quarter`, for pairs the
// caller will add to the list later.
Result<std::vector<CandidatePair>> MergeUnique(std::span<const std::string_view> runs,
                                               uint64_t num_documents, bool spare_quarter = false);

// The same union with *list (sorted, unique) as one of the runs, written
// into *list's own block: no fresh block of the union's size (on the 1M
// corpus MergeUnique's was ~455 MB of pages the kernel zeroes, a rank at 2
// ranks). From the back (the union's largest pair into the block's last
// slot of list size + the others' pairs, so no pair of *list is
// overwritten before it is read), then moved to the front. Returns false,
// *list untouched, when its capacity is below list size + the others'
// pairs, a quarter more of them with `spare_quarter` (the caller merges
// into a fresh block instead, MergeUnique's, whose spare is then sure);
// DataLoss as MergeUnique (on DataLoss *list holds an unspecified list).
// The block's whole pages past the union are given back to the kernel
// (madvise): the repeats' slots, written by the merge, stay unresident.
// REQUIRES: `others` do not point into *list.
Result<bool> MergeUniqueInPlace(std::vector<CandidatePair>* list,
                                std::span<const std::string_view> others, uint64_t num_documents,
                                bool spare_quarter = false);

// SortUnique and MergeUnique are pure; MergeUniqueInPlace changes only
// *list. All are thread-compatible.

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_CANDIDATE_RUNS_H_
