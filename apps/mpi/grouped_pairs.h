// Groups of SimHash copies on one rank of neardup-mpi's SimHash join, for
// clusters and dedup (distributed_pairs.cc; session 19). Pure functions (no
// MPI), unit-tested in grouped_pairs_test against ClusterDocuments over
// every pair.
//
// Clusters need not every pair of a group of copies (documents of one
// SimHash: g copies, g (g - 1) / 2 pairs). A rank that holds a SimHash in
// some shard holds every copy of it (the copies share all their keys), so
// each rank keeps the first copy (the smallest number) of each SimHash, the
// same on every rank, and joins those only: their pairs are the pairs
// between groups, each on one rank. It lists, instead of every pair, the
// pairs (r, s) of first copies, r < s, and the star (s, m) of each group,
// listed by one rank (that of the group's table-0 shard): O(g) pairs a
// group under either rule. Each listed pair is a pair of the full graph
// (at its first copies' distance; a star's at distance 0).
// - components: ClusterDocuments of the list is the full graph's (each
//   group is joined to its first copy, the first copies as in the full
//   graph; ClusterDocumentGroups' argument, neardup/clustering.h).
// - leader: the stars are the groups: a pair at distance 0 joins two copies
//   of one SimHash (one 64-bit value, so the same neighbours), and the
//   leader scan (LeaderClusters, distributed_clusters.cc) takes each later
//   copy out of the scan and gives it its first copy's cluster, as
//   ClusterDocumentGroups does in one process. ClusterDocuments of the
//   list alone is not the full graph's under this rule: a later copy
//   whose first copy follows another leader would lead.
#ifndef NEARDUP_APPS_MPI_GROUPED_PAIRS_H_
#define NEARDUP_APPS_MPI_GROUPED_PAIRS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/hamming_index.h"

namespace neardup::mpi {

// A rank's entries by SimHash: copies[start[k], start[k + 1]) are the
// copies of first[k]'s SimHash, first[k] the smallest of them.
struct CopyGroups {
  std::vector<HammingEntry> copies;  // every entry, by (SimHash, id)
  std::vector<HammingEntry> first;   // the entries to join, by SimHash
  std::vector<uint64_t> start;       // first.size() + 1 offsets into copies
};

// Sorts `entries` (a rank's) by (SimHash, id) and finds their runs of one
// SimHash (the only walk over the runs).
CopyGroups GroupCopies(std::vector<HammingEntry> entries);

struct GroupedPairs {
  std::vector<SimilarPair> pairs;  // sorted by (a, b), unique
  // The pairs of the full graph these stand for: for each joined pair, the
  // product of its groups' sizes; for each star listed, g (g - 1) / 2.
  uint64_t expanded = 0;
};

// The list for the clustering from `groups` (GroupCopies') and `joined`
// (pairs of first copies, a.id < b.id, found by this rank's join): each
// joined pair, and the star of each group of two or more whose SimHash
// `lists_star` accepts.
// REQUIRES: each joined entry is one of groups.first.
GroupedPairs ListGroupedSimHashPairs(const CopyGroups& groups, std::span<const HammingPair> joined,
                                     const std::function<bool(uint64_t)>& lists_star);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_GROUPED_PAIRS_H_
