// The clusters of `clusters` and `dedup` computed where the documents are:
// each rank ends with the cluster of each of its own documents (the number
// of the cluster's first member, ClusterDocuments' cluster_of), chooses the
// kept documents of the clusters whose first member it holds, and writes
// the lines of those clusters. Rank 0 holds no per-document array of the
// whole corpus (see docs/DISTRIBUTED.md, "Clusters and dedup").
//
// - leader: each verified pair is on the owner of its first or second
//   document (PairPlacement::kVerifiers: MinHash leaves it on its
//   verifier, SimHash sends it to its first document's owner). A document's
//   cluster depends only on which earlier documents are leaders, so the
//   ranks decide in rank order: rank r's scan needs the leader flags of the
//   earlier documents, which each earlier rank broadcasts after its scan
//   (one bit per document), and, for the pairs an earlier rank verified
//   whose second document is on r, the smallest leader among each such
//   document's neighbours there, which that rank sends after its scan (one
//   record per document, not per pair). The scans are serial but cheap (a
//   pass over a rank's documents and their earlier neighbours); the
//   grouping of the pairs by document runs on every rank at once, while
//   the earlier ranks scan.
// - components: a union-find spread over the ranks (each document's label,
//   the smallest member found so far, on its owner; each rank's spanning
//   forest, PairPlacement::kForests, where it is): rounds of hooking over
//   the forests' pairs and of label jumping, until no label changes.
// Thread safety: collective operations; the main thread only.
#ifndef NEARDUP_APPS_MPI_DISTRIBUTED_CLUSTERS_H_
#define NEARDUP_APPS_MPI_DISTRIBUTED_CLUSTERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "distributed_pairs.h"
#include "mpi_comm.h"
#include "neardup/clustering.h"
#include "neardup/status.h"

namespace neardup::mpi {

// Collective. cluster_of of this rank's documents (layout.first[rank] + i
// for i = 0..count-1), equal to the slice of ClusterDocuments(all pairs,
// rule). `pairs`: leader, the pairs this rank verified (each with its
// first or second document here; sorted by (a, b), else sorted here);
// components, any pairs on any rank (this rank's spanning forest).
Result<std::vector<uint64_t>> ClusterOnRanks(Comm& comm, const DocumentLayout& layout,
                                             std::vector<SimilarPair> pairs, ClusterRule rule);

// Collective. keep[i] of this rank's documents, equal to the slice of
// ChooseKept over the whole corpus: each cluster's choice is made by the
// owner of its first member, from its members' lengths.
Result<std::vector<bool>> KeepOnRanks(Comm& comm, const DocumentLayout& layout,
                                      const std::vector<uint64_t>& cluster_of,
                                      const std::vector<uint64_t>& lengths, KeepRule rule);

// Collective. The member lists of the clusters of two or more whose first
// member is on this rank, in order of their first member, and the number
// of the first of them (clusters are numbered in order of their first
// member over the whole corpus).
struct LocalClusters {
  uint64_t first_number = 0;                   // the number of members[0]'s cluster
  uint64_t total = 0;                          // clusters of two or more, on all ranks
  std::vector<std::vector<uint64_t>> members;  // each ascending
};
Result<LocalClusters> GroupClustersOnRanks(Comm& comm, const DocumentLayout& layout,
                                           const std::vector<uint64_t>& cluster_of);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_DISTRIBUTED_CLUSTERS_H_
