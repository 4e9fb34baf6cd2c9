// Grouping verified similar pairs into clusters, and choosing which document
// of each cluster to keep.
//
// Two rules, because transitive closure alone chains unrelated documents
// together through intermediates (A~B, B~C, C~D puts A and D in one cluster
// even when they share nothing):
//  - kComponents: connected components (union-find); transitive.
//  - kLeader: in input order, each document joins the cluster of the first
//    *leader* it is verified similar to, or becomes a leader itself. Every
//    member is similar to its leader; no chains. (A greedy "star" clustering,
//    as in Broder's shingling papers' later practice and in text dedup tools
//    that keep a first-seen representative.)
// Both are deterministic: they depend only on the pairs and document order.
// Document numbers are 64-bit throughout.
// Cost: O(documents + pairs) time; memory 8 bytes per document for
// cluster_of (components: 8 more for the union-find). The leader rule over
// pairs sorted by a (verification's order) takes one pass and no copy; over
// pairs in another order it groups them by b with a counting sort, 4 bytes
// per pair and per document (8 past 2^32 of either).
// Thread safety: pure functions.
#ifndef NEARDUP_CLUSTERING_H_
#define NEARDUP_CLUSTERING_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

// Documents are numbered 0..n-1 in input order.
struct SimilarPair {
  uint64_t a = 0;  // Invariant: a < b
  uint64_t b = 0;
  double similarity = 0;  // what was verified: Jaccard, or 1 - distance / bits
  int distance = -1;      // Hamming distance for SimHash pairs; -1 otherwise
  friend bool operator==(const SimilarPair&, const SimilarPair&) = default;
};

enum class ClusterRule { kComponents, kLeader };
enum class KeepRule { kFirst, kLongest, kShortest };

Result<ClusterRule> ParseClusterRule(std::string_view name);  // "components" | "leader"
Result<KeepRule> ParseKeepRule(std::string_view name);        // "first" | "longest" | "shortest"

// cluster_of[i] is the number of document i's cluster's first member (its
// smallest document number), so a document alone is its own cluster.
// InvalidArgument naming the pair when a pair is not a < b < num_documents.
Result<std::vector<uint64_t>> ClusterDocuments(uint64_t num_documents,
                                               std::span<const SimilarPair> pairs,
                                               ClusterRule rule);

// ClusterDocuments over documents in groups of copies, from the pairs of
// the groups' first copies only (session 19: g copies of one text no longer
// cost g^2 / 2 pairs). first_copy_of[i] is the first (smallest) copy of
// document i's group (i itself for a group of one); `pairs` join first
// copies only. REQUIRES (the caller's promise, not checked): the copies of a
// group are similar to each other and each is similar to exactly the
// documents its group's first copy is similar to (the copies of a SimHash
// group: one 64-bit value, so one distance to every other document).
// Then the result is ClusterDocuments(n, every pair of the expanded graph,
// rule), the same cluster_of:
//  - components: a group is a clique joined to its first copy's
//    neighbours, so the components are the quotient's, expanded; each
//    component's smallest document is a first copy (a group's smallest).
//  - leader: by induction over all documents in order, (1) a later copy m
//    of a group whose first copy is r lands in r's cluster (so is never a
//    leader), and (2) a first copy chooses as in the quotient. (2): a first
//    copy's earlier neighbours in the full graph are its quotient
//    neighbours plus their later copies, which are not leaders by (1), so
//    its smallest earlier leader neighbour is the quotient's. (1): if r is
//    a leader, no neighbour before r is one, and r is m's smallest leader
//    neighbour; if r joined leader L (the smallest leader among r's earlier
//    neighbours, all before r), m's earlier neighbours are r's earlier
//    neighbours, r, r's later neighbours before m and copies between r and
//    m; every leader among them other than L comes after r (r's earlier
//    ones are not smaller than L, the copies are not leaders), so after L,
//    and m's smallest leader neighbour is L. A document outside the group
//    sees among the group only r as a possible leader, so dropping the
//    other copies' pairs changes no other document's choice.
// Cost: ClusterDocuments' over the quotient's pairs, plus O(documents).
// InvalidArgument when first_copy_of is not of that form (first_copy_of[i]
// <= i and first_copy_of[first_copy_of[i]] == first_copy_of[i]) or a pair
// is not a < b < documents between first copies.
Result<std::vector<uint64_t>> ClusterDocumentGroups(std::span<const uint64_t> first_copy_of,
                                                    std::span<const SimilarPair> pairs,
                                                    ClusterRule rule);

// keep[i] is true for the one document kept per cluster: the first, or the
// longest / shortest by `lengths` (ties go to the earlier document).
// InvalidArgument when lengths.size() != cluster_of.size() or cluster_of is
// not ClusterDocuments' form (cluster_of[i] <= i, and a cluster's number is
// its own first member).
Result<std::vector<bool>> ChooseKept(std::span<const uint64_t> cluster_of,
                                     std::span<const uint64_t> lengths, KeepRule rule);

}  // namespace neardup

#endif  // NEARDUP_CLUSTERING_H_
