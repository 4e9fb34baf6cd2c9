#include "neardup/clustering.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <string>
#include <utility>

#include "engine/first_copies_check.h"
#include "neardup/union_find.h"
#include "util/fresh_pages.h"

namespace neardup {
namespace {

// Pairs per task of the passes over all pairs (the check, the leader rule's
// (b, a) copy): large enough that a task is not all overhead.
constexpr size_t kPairGrain = size_t{1} << 14;

}  // namespace

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
  // The first malformed pair, found on all cores.
  const size_t bad = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, pairs.size(), kPairGrain), pairs.size(),
      [&](const tbb::blocked_range<size_t>& range, size_t found) {
        for (size_t i = range.begin(); i != range.end() && i < found; ++i) {
          if (!(pairs[i].a < pairs[i].b && pairs[i].b < num_documents)) return i;
        }
        return found;
      },
      [](size_t x, size_t y) { return std::min(x, y); });
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
  // Leader: visit documents in order; each looks at its earlier neighbours
  // (sorted by b, then a) and joins the first one that is a leader.
  // (b, a), its pages faulted in on all cores (util/fresh_pages.h).
  std::vector<std::pair<uint64_t, uint64_t>> earlier;
  internal::GrowFaultingInParallel(&earlier, pairs.size());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, pairs.size(), kPairGrain),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        earlier[i] = {pairs[i].b, pairs[i].a};
                      }
                    });
  // (b, a) are distinct, so the order is total: the same at any thread count.
  tbb::parallel_sort(earlier.begin(), earlier.end());
  std::vector<bool> is_leader(num_documents, false);
  size_t next = 0;
  for (uint64_t doc = 0; doc < num_documents; ++doc) {
    cluster_of[doc] = doc;
    for (; next < earlier.size() && earlier[next].first == doc; ++next) {
      const uint64_t candidate = earlier[next].second;
      if (cluster_of[doc] == doc && is_leader[candidate]) cluster_of[doc] = candidate;
    }
    is_leader[doc] = cluster_of[doc] == doc;
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
