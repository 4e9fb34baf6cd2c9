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
// between groups, each on one rank. It lists, instead of every pair, pairs
// that give ClusterDocuments the same clusters: the pairs (r, s) of first
// copies, r < s; the star (s, m) of each group, listed by one rank (that of
// the group's table-0 shard); and, for the leader rule only, also (r, m)
// for each later copy m of s. Why it is the same (ClusterDocumentGroups,
// neardup/clustering.h): a later copy m takes s's cluster under either
// rule. Components (the pairs between first copies and the stars): each
// group is joined to its first copy, the first copies as in the full graph.
// Leader: a first copy's neighbours here are its neighbours among first
// copies, and later copies are never leaders (each joins s's cluster), so
// the first copies' leaders are the full graph's; m's earlier neighbours
// are s and s's earlier first-copy neighbours, so its first leader is s's
// (s's own, or s itself when s leads). Each listed pair is a pair of the
// full graph (at its first copies' distance). The leader rule's list holds
// g_s - 1 pairs per earlier first-copy neighbour of s: never more than the
// pairs it replaces, but not O(g) (DISTRIBUTED.md "Not done yet").
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
// joined pair; with `later_copies` (the leader rule) also (a, m) for each
// later copy m of b; the star of each group of two or more whose SimHash
// `lists_star` accepts.
// REQUIRES: each joined entry is one of groups.first.
GroupedPairs ListGroupedSimHashPairs(const CopyGroups& groups, std::span<const HammingPair> joined,
                                     bool later_copies,
                                     const std::function<bool(uint64_t)>& lists_star);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_GROUPED_PAIRS_H_
