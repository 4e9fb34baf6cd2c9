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
// Cost: O(documents + pairs log pairs) time, O(documents + pairs) memory.
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
  uint32_t a = 0;  // Invariant: a < b
  uint32_t b = 0;
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
// InvalidArgument unless every pair has a < b < num_documents, and
// num_documents < 2^32.
Result<std::vector<uint32_t>> ClusterDocuments(size_t num_documents,
                                               std::span<const SimilarPair> pairs,
                                               ClusterRule rule);

// keep[i] is true for the one document kept per cluster: the first, or the
// longest / shortest by `lengths` (ties go to the earlier document).
// InvalidArgument unless lengths.size() == cluster_of.size() and every
// cluster_of[i] <= i names a document that is its own cluster (as
// ClusterDocuments returns).
Result<std::vector<bool>> ChooseKept(std::span<const uint32_t> cluster_of,
                                     std::span<const uint64_t> lengths, KeepRule rule);

}  // namespace neardup

#endif  // NEARDUP_CLUSTERING_H_
