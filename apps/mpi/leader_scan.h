// The leader rule over ranks, its pure steps (no MPI; LeaderClusters in
// distributed_clusters.cc runs them between its collectives, and
// leader_scan_test runs them over simulated ranks against ClusterDocuments).
//
// Each verified pair is on the owner of its first or second document. Rank
// r scans its documents in order (ScanLeaders) once every earlier rank has
// given it its leader flags and, for each of r's documents that an earlier
// rank's pairs name, the smallest leader among that document's neighbours
// there (SmallestLeaders, one record per document, applied by
// ApplySmallestLeaders). Thread-compatible.
#ifndef NEARDUP_APPS_MPI_LEADER_SCAN_H_
#define NEARDUP_APPS_MPI_LEADER_SCAN_H_

#include <cstdint>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/status.h"

namespace neardup::mpi {

// The documents of one rank: [first, first + count).
struct OwnRange {
  uint64_t first = 0;
  uint64_t count = 0;
  bool Holds(uint64_t doc) const { return doc >= first && doc - first < count; }
};

// Each own document's earlier neighbours: the a of the pairs (a, b) whose
// b is in `own`, by b (a counting sort; the order of the a's of one b does
// not matter, the scan takes the smallest leader).
// of[start[i] .. start[i + 1]) are those of document own.first + i.
struct Neighbours {
  std::vector<uint64_t> start;
  std::vector<uint64_t> of;
};
// REQUIRES: every pair has a < b < the corpus's documents (LeaderClusters
// checks).
Neighbours NeighboursByLater(const std::vector<SimilarPair>& pairs, OwnRange own);

// Keeps in *pairs only those whose b is after `own` (a later rank's), sorted
// by a (as SmallestLeaders needs); `sorted_by_a`: whether *pairs already is.
void KeepLaterPairs(OwnRange own, bool sorted_by_a, std::vector<SimilarPair>* pairs);

// A later rank's document and its smallest earlier neighbour on this rank
// that is a leader. The wire record (16 bytes, copied as is).
struct SmallestLeader {
  uint64_t doc = 0;
  uint64_t leader = 0;
  friend bool operator==(const SmallestLeader&, const SmallestLeader&) = default;
};

// The scan of one rank (ClusterDocuments' leader rule: in document order, a
// document joins its smallest earlier neighbour that is a leader, or leads).
// `earlier`: NeighboursByLater of the rank's pairs; `external_leader`: the
// flags of the documents before own.first (own.first of them);
// `smallest_leader`: per own document, the smallest leader the earlier ranks'
// pairs named (UINT64_MAX: none). Sets cluster_of and leader (1: leads) of
// the own documents (own.count each).
// REQUIRES: the pairs behind `earlier` have a < b < the corpus's documents
// (LeaderClusters checks).
void ScanLeaders(OwnRange own, const Neighbours& earlier, const std::vector<bool>& external_leader,
                 const std::vector<uint64_t>& smallest_leader, std::vector<uint64_t>* cluster_of,
                 std::vector<uint8_t>* leader);

// The pairs `later` (KeepLaterPairs': a in `own`, b in [own end, total),
// sorted by a) reduced, after the scan, to one record for each b with a
// leader neighbour: the smallest such a. In order of the records' first
// pair. `leader`: the rank's flags from ScanLeaders.
// REQUIRES: every pair has a < b < total (LeaderClusters checks).
std::vector<SmallestLeader> SmallestLeaders(const std::vector<SimilarPair>& later,
                                            const std::vector<uint8_t>& leader, OwnRange own,
                                            uint64_t total);

// The records rank `from` (its documents `from_range`, whose leader flags
// are already in external_leader) sent to this rank `own`: each must name
// an own document and a leader of `from`; *smallest_leader (per own
// document) keeps the smaller. Internal error otherwise (the ranks are out
// of step).
Status ApplySmallestLeaders(const std::vector<SmallestLeader>& records, int from,
                            OwnRange from_range, OwnRange own,
                            const std::vector<bool>& external_leader,
                            std::vector<uint64_t>* smallest_leader);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_LEADER_SCAN_H_
