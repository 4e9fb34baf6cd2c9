#include "neardup/clustering.h"

#include <algorithm>
#include <limits>
#include <string>

#include "neardup/union_find.h"

namespace neardup {

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

Result<std::vector<uint32_t>> ClusterDocuments(size_t num_documents,
                                               std::span<const SimilarPair> pairs,
                                               ClusterRule rule) {
  if (num_documents > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgumentError("num_documents (" + std::to_string(num_documents) +
                                ") must be below 2^32");
  }
  for (const SimilarPair& pair : pairs) {
    if (!(pair.a < pair.b && pair.b < num_documents)) {
      return InvalidArgumentError("pair (" + std::to_string(pair.a) + ", " +
                                  std::to_string(pair.b) + ") out of order or range (" +
                                  std::to_string(num_documents) + " documents)");
    }
  }
  std::vector<uint32_t> cluster_of(num_documents);
  if (rule == ClusterRule::kComponents) {
    // UnionFind keeps the smallest member as each set's root.
    UnionFind sets(num_documents);
    for (const SimilarPair& pair : pairs) sets.Union(pair.a, pair.b);
    for (size_t i = 0; i < num_documents; ++i) cluster_of[i] = sets.Find(static_cast<uint32_t>(i));
    return cluster_of;
  }
  // Leader: visit documents in order; each looks at its earlier neighbours
  // (sorted by b, then a) and joins the first one that is a leader.
  std::vector<std::pair<uint32_t, uint32_t>> earlier;  // (b, a)
  earlier.reserve(pairs.size());
  for (const SimilarPair& pair : pairs) earlier.emplace_back(pair.b, pair.a);
  std::sort(earlier.begin(), earlier.end());
  std::vector<bool> is_leader(num_documents, false);
  size_t next = 0;
  for (uint32_t doc = 0; doc < num_documents; ++doc) {
    cluster_of[doc] = doc;
    for (; next < earlier.size() && earlier[next].first == doc; ++next) {
      uint32_t candidate = earlier[next].second;
      if (cluster_of[doc] == doc && is_leader[candidate]) cluster_of[doc] = candidate;
    }
    is_leader[doc] = cluster_of[doc] == doc;
  }
  return cluster_of;
}

Result<std::vector<bool>> ChooseKept(std::span<const uint32_t> cluster_of,
                                     std::span<const uint64_t> lengths, KeepRule rule) {
  if (lengths.size() != cluster_of.size()) {
    return InvalidArgumentError("ChooseKept: " + std::to_string(lengths.size()) + " lengths for " +
                                std::to_string(cluster_of.size()) + " documents");
  }
  const size_t n = cluster_of.size();
  for (size_t doc = 0; doc < n; ++doc) {
    const uint32_t cluster = cluster_of[doc];
    if (cluster > doc || cluster_of[cluster] != cluster) {
      return InvalidArgumentError("ChooseKept: document " + std::to_string(doc) +
                                  " names cluster " + std::to_string(cluster) +
                                  ", which is not a first member");
    }
  }
  // best[c] is the chosen member of the cluster whose first member is c.
  std::vector<uint32_t> best(n);
  for (uint32_t doc = 0; doc < n; ++doc) {
    uint32_t cluster = cluster_of[doc];
    if (cluster == doc) {
      best[cluster] = doc;
      continue;
    }
    uint32_t current = best[cluster];
    bool better = (rule == KeepRule::kLongest && lengths[doc] > lengths[current]) ||
                  (rule == KeepRule::kShortest && lengths[doc] < lengths[current]);
    if (better) best[cluster] = doc;
  }
  std::vector<bool> keep(n, false);
  for (uint32_t doc = 0; doc < n; ++doc) {
    if (cluster_of[doc] == doc) keep[best[doc]] = true;
  }
  return keep;
}

}  // namespace neardup
