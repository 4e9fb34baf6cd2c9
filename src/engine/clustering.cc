#include "neardup/clustering.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <utility>

#include "engine/first_copies_check.h"
#include "engine/pair_scan.h"
#include "neardup/union_find.h"
#include "util/fresh_pages.h"

namespace neardup {
namespace {

using internal::kClusterPairGrain;

// The leader rule: visit documents in order; each joins its smallest
// earlier neighbour that is a leader (a document that joined nobody, i.e.
// cluster_of[a] == a), or leads a cluster of its own. Both forms below give
// that; which one runs depends only on the pairs' order, and the result on
// neither. Before session 21 the rule sorted (b, a) copies of every pair:
// on the 1M corpus (23.5M pairs) 5.6-6.3 s of a 31-38 CPU s `dedup` at one
// thread; the pass below takes 0.31 s.

// The pairs sorted by a (ties in any order: the verification stage's order):
// every pair (x, a) comes before any pair (a, y), so when a pair (a, b) is
// reached a's cluster is final, and the first leader a to reach b is its
// smallest. One pass in order, random access only to cluster_of (8 bytes a
// document), no copy of the pairs.
void LeaderClustersOfPairsByA(std::span<const SimilarPair> pairs,
                              std::vector<uint64_t>* cluster_of) {
  std::vector<uint64_t>& cluster = *cluster_of;
  for (size_t doc = 0; doc < cluster.size(); ++doc) cluster[doc] = doc;
  for (const SimilarPair& pair : pairs) {
    if (cluster[pair.a] == pair.a && cluster[pair.b] == pair.b) cluster[pair.b] = pair.a;
  }
}

// Any order: each document's earlier neighbours grouped by a counting sort
// on b (an offset per document, then each a placed in its b's run), O(pairs
// + documents). Count and placement run on all cores with relaxed atomic
// increments, so the order *within* a run depends on the schedule; the rule
// takes a minimum over the run, so cluster_of does not. Index holds a
// document number and a pair count (32 bits where both fit). The placement's
// writes land at random in a list the size of the pairs (cache misses: ~1.8
// s of the 1M corpus' 23.5M pairs), hence the pass above where it applies.
template <typename Index>
void LeaderClustersOfPairsInAnyOrder(std::span<const SimilarPair> pairs,
                                     std::vector<uint64_t>* cluster_of) {
  const size_t n = cluster_of->size();
  // run_end[b] counts b's earlier neighbours, then (prefix sums) is where
  // b's run starts, then (after the placement moved it) where it ends.
  std::vector<Index> run_end(n, 0);
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, pairs.size(), kClusterPairGrain),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          std::atomic_ref<Index>(run_end[pairs[i].b]).fetch_add(1, std::memory_order_relaxed);
        }
      });
  Index start = 0;
  for (size_t b = 0; b < n; ++b) start += std::exchange(run_end[b], start);
  std::vector<Index> earlier;
  internal::GrowFaultingInParallel(&earlier, pairs.size());
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, pairs.size(), kClusterPairGrain),
      [&](const tbb::blocked_range<size_t>& range) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          const Index slot =
              std::atomic_ref<Index>(run_end[pairs[i].b]).fetch_add(1, std::memory_order_relaxed);
          earlier[slot] = static_cast<Index>(pairs[i].a);
        }
      });
  std::vector<uint64_t>& cluster = *cluster_of;
  size_t next = 0;
  for (size_t doc = 0; doc < n; ++doc) {
    uint64_t leader = doc;
    for (const size_t end = run_end[doc]; next < end; ++next) {
      const uint64_t candidate = earlier[next];
      if (candidate < leader && cluster[candidate] == candidate) leader = candidate;
    }
    cluster[doc] = leader;
  }
}

}  // namespace

namespace internal {

PairScan ScanPairs(uint64_t num_documents, std::span<const SimilarPair> pairs) {
  const auto join = [](PairScan x, PairScan y) {
    return PairScan{std::min(x.first_bad, y.first_bad), x.sorted_by_a && y.sorted_by_a};
  };
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, pairs.size(), kClusterPairGrain), PairScan{pairs.size(), true},
      [&](const tbb::blocked_range<size_t>& range, PairScan found) {
        bool sorted = range.begin() == 0 || pairs[range.begin() - 1].a <= pairs[range.begin()].a;
        for (size_t i = range.begin(); i != range.end(); ++i) {
          if (!(pairs[i].a < pairs[i].b && pairs[i].b < num_documents)) {
            return join(found, PairScan{i, false});
          }
          if (i + 1 != range.end()) sorted = sorted && pairs[i].a <= pairs[i + 1].a;
        }
        return join(found, PairScan{pairs.size(), sorted});
      },
      join, tbb::simple_partitioner());
}

}  // namespace internal

Result<ClusterRule> ParseClusterRule(std::string_view name) {
  if (name == "components") return ClusterRule::kComponents;
  if (name == "leader") return ClusterRule::kLeader;
  return InvalidArgumentError("cluster rule (\"" + std::string(name) +
                              "\") must be \"leader\" or \"components\"");
}

Result<KeepRule> ParseKeepRule(std::string_view name) {
  if (name == "first") return KeepRule::kFirst;
  if (name == "longest") return KeepRule::kLongest;
  if (name == "shortest") return KeepRule::kShortest;
  return InvalidArgumentError("keep rule (\"" + std::string(name) +
                              "\") must be \"first\", \"longest\" or \"shortest\"");
}

Result<std::vector<uint64_t>> ClusterDocuments(uint64_t num_documents,
                                               std::span<const SimilarPair> pairs,
                                               ClusterRule rule) {
  const internal::PairScan scan = internal::ScanPairs(num_documents, pairs);
  const size_t bad = scan.first_bad;
  const bool sorted_by_a = scan.sorted_by_a;
  if (bad != pairs.size()) {
    return InvalidArgumentError("pair (" + std::to_string(pairs[bad].a) + ", " +
                                std::to_string(pairs[bad].b) + ") must have a < b < the " +
                                std::to_string(num_documents) + " documents");
  }
  std::vector<uint64_t> cluster_of(num_documents);
  if (rule == ClusterRule::kComponents) {
    // UnionFind keeps the smallest member as each set's root.
    UnionFind64 sets(num_documents);
    for (const SimilarPair& pair : pairs) sets.Union(pair.a, pair.b);
    for (uint64_t i = 0; i < num_documents; ++i) cluster_of[i] = sets.Find(i);
    return cluster_of;
  }
  if (sorted_by_a) {
    LeaderClustersOfPairsByA(pairs, &cluster_of);
  } else if (num_documents <= std::numeric_limits<uint32_t>::max() &&
             pairs.size() <= std::numeric_limits<uint32_t>::max()) {
    LeaderClustersOfPairsInAnyOrder<uint32_t>(pairs, &cluster_of);
  } else {
    LeaderClustersOfPairsInAnyOrder<uint64_t>(pairs, &cluster_of);
  }
  return cluster_of;
}

Result<std::vector<uint64_t>> ClusterDocumentGroups(std::span<const uint64_t> first_copy_of,
                                                    std::span<const SimilarPair> pairs,
                                                    ClusterRule rule) {
  const uint64_t n = first_copy_of.size();
  NEARDUP_RETURN_IF_ERROR(internal::CheckFirstCopies(first_copy_of).status());
  for (const SimilarPair& pair : pairs) {
    if (pair.a < n && pair.b < n &&
        (first_copy_of[pair.a] != pair.a || first_copy_of[pair.b] != pair.b)) {
      return InvalidArgumentError("pair (" + std::to_string(pair.a) + ", " +
                                  std::to_string(pair.b) +
                                  ") must join the first members of two groups");
    }
  }
  // The quotient: members after their group's first have no pairs, so they
  // are alone here (and nobody's leader candidate); then each takes its first
  // member's cluster (see clustering.h for why that is the expanded graph's).
  NEARDUP_ASSIGN_OR_RETURN(std::vector<uint64_t> cluster_of, ClusterDocuments(n, pairs, rule));
  for (uint64_t doc = 0; doc < n; ++doc) cluster_of[doc] = cluster_of[first_copy_of[doc]];
  return cluster_of;
}

Result<std::vector<bool>> ChooseKept(std::span<const uint64_t> cluster_of,
                                     std::span<const uint64_t> lengths, KeepRule rule) {
  if (lengths.size() != cluster_of.size()) {
    return InvalidArgumentError("lengths (" + std::to_string(lengths.size()) +
                                ") must have one entry per document of cluster_of (" +
                                std::to_string(cluster_of.size()) + ")");
  }
  const uint64_t n = cluster_of.size();
  for (uint64_t doc = 0; doc < n; ++doc) {
    const uint64_t cluster = cluster_of[doc];
    if (cluster > doc || cluster_of[cluster] != cluster) {
      return InvalidArgumentError("cluster_of[" + std::to_string(doc) + "] (" +
                                  std::to_string(cluster) +
                                  ") must name a cluster's first member, at or before it");
    }
  }
  // best[c] is the chosen member of the cluster whose first member is c.
  std::vector<uint64_t> best(n);
  for (uint64_t doc = 0; doc < n; ++doc) {
    const uint64_t cluster = cluster_of[doc];
    if (cluster == doc) {
      best[cluster] = doc;
      continue;
    }
    const uint64_t current = best[cluster];
    const bool better = (rule == KeepRule::kLongest && lengths[doc] > lengths[current]) ||
                        (rule == KeepRule::kShortest && lengths[doc] < lengths[current]);
    if (better) best[cluster] = doc;
  }
  std::vector<bool> keep(n, false);
  for (uint64_t doc = 0; doc < n; ++doc) {
    if (cluster_of[doc] == doc) keep[best[doc]] = true;
  }
  return keep;
}

}  // namespace neardup
