// The leader rule over ranks, its pure steps (no MPI; LeaderClusters in
// distributed_clusters.cc runs them between its collectives, and
// leader_scan_test runs them over simulated ranks against ClusterDocuments).
//
// Each verified pair is on the owner of its first or second document. Rank
// r scans its documents in order (ScanLeaders) once every earlier rank has
// given it its leader flags and, for each of r's documents that an earlier
// rank's pairs name, the smallest leader among that document's neighbours
// there (SmallestLeaders, one record per document, applied by
// ApplySmallestLeaders). Groups of SimHash copies (pairs at distance 0):
// each later copy learns its first copy (TakeCopyPairs, ApplyCopyRecords)
// before the scan, which leaves it out. Thread-compatible.
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

// A later copy of a SimHash group and its group's first copy (smaller):
// the wire record (16 bytes, copied as is) sent to the copy's owner.
struct CopyRecord {
  uint64_t doc = 0;
  uint64_t first = 0;
  friend bool operator==(const CopyRecord&, const CopyRecord&) = default;
};

// Takes the pairs at Hamming distance 0 out of *pairs (the others keep
// their order) and returns (b, a) for each. Such a pair joins two copies of
// one SimHash: one 64-bit value, so the same distance to every document,
// which is ClusterDocumentGroups' promise (neardup/clustering.h); a later
// copy's cluster is its first copy's. The SimHash grouped lists
// (grouped_pairs.h) hold one such pair per later copy, the star (s, m);
// every pair's list (format 4, and format 5 before session 19) one per
// earlier copy, and the smallest is the first copy. MinHash pairs (distance -1) stay.
std::vector<CopyRecord> TakeCopyPairs(std::vector<SimilarPair>* pairs);

// Lowers first_copy[i] (own.count entries, each own document's first copy,
// itself to begin with) to the smallest `first` of the records naming own
// document own.first + i. Internal error for a record that names no own
// document or a first copy not before it (the ranks are out of step).
// REQUIRES (of all ranks' records together): every later copy gets a record
// naming its group's first copy, so the smallest is that first copy, never
// another later copy (TakeCopyPairs of the lists above gives that).
Status ApplyCopyRecords(const std::vector<CopyRecord>& records, OwnRange own,
                        std::vector<uint64_t>* first_copy);

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
// pairs named (UINT64_MAX: none); `first_copy`: per own document, its
// group's first copy (ApplyCopyRecords'; itself when it is one). Sets
// cluster_of and leader (1: leads) of the own documents (own.count each).
// A later copy is taken out of the scan (ClusterDocumentGroups): it never
// leads, and takes its first copy's cluster when that is on this rank;
// else its cluster_of is its first copy's number, which the caller
// replaces by that copy's cluster once its owner has scanned.
// REQUIRES: the pairs behind `earlier` have a < b < the corpus's documents
// (LeaderClusters checks); first_copy[i] <= own.first + i, and is its
// group's first copy, whose own first copy is itself (ApplyCopyRecords'
// promise): only then is the cluster a later copy takes here final, and the
// number it leaves otherwise one that LabelsOf can answer with a cluster.
void ScanLeaders(OwnRange own, const Neighbours& earlier, const std::vector<bool>& external_leader,
                 const std::vector<uint64_t>& smallest_leader,
                 const std::vector<uint64_t>& first_copy, std::vector<uint64_t>* cluster_of,
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
