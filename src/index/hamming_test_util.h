// Test helpers for the Hamming index: deterministic data and brute-force
// oracles (a linear scan over every entry).
#ifndef NEARDUP_INDEX_HAMMING_TEST_UTIL_H_
#define NEARDUP_INDEX_HAMMING_TEST_UTIL_H_

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>
#include <vector>

#include "neardup/hamming_index.h"
#include "util/mix.h"

namespace neardup::testing {

// Flips `flips` distinct random bits of `x`.
inline uint64_t FlipBits(uint64_t x, int flips, internal::SplitMix64& rng) {
  uint64_t mask = 0;
  while (std::popcount(mask) < flips) mask |= uint64_t{1} << (rng.Next() % 64);
  return x ^ mask;
}

// `count` fingerprints: with `clustered`, groups of 1..8 within 0..spread bits
// of a random centre (many pairs within distance k, the realistic case); else
// uniformly random.
inline std::vector<uint64_t> MakeFingerprints(size_t count, bool clustered, int spread,
                                              uint64_t seed) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> out;
  out.reserve(count);
  while (out.size() < count) {
    uint64_t centre = rng.Next();
    if (!clustered) {
      out.push_back(centre);
      continue;
    }
    size_t group = 1 + rng.Next() % 8;
    for (size_t i = 0; i < group && out.size() < count; ++i) {
      out.push_back(FlipBits(centre, static_cast<int>(rng.Next() % (spread + 1)), rng));
    }
  }
  return out;
}

// The clusters of `all` by their union-find labels (UnionFind::Labels: a
// label is the smallest member's position), those of at least `min_size`
// entries, in order of their smallest member: HammingIndex::Clusters' order.
inline HammingClusters ClustersFromLabels(const std::vector<HammingEntry>& all,
                                          const std::vector<uint32_t>& labels, size_t min_size) {
  std::vector<std::vector<HammingEntry>> groups;
  for (size_t i = 0; i < all.size(); ++i) {
    if (labels[i] >= groups.size()) groups.resize(labels[i] + 1);
    groups[labels[i]].push_back(all[i]);
  }
  HammingClusters out;
  out.offsets.push_back(0);
  for (const auto& g : groups) {
    if (g.size() < min_size) continue;
    out.members.insert(out.members.end(), g.begin(), g.end());
    out.offsets.push_back(out.members.size());
  }
  return out;
}

inline bool MatchOrder(const HammingMatch& a, const HammingMatch& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.id != b.id) return a.id < b.id;
  return a.fingerprint < b.fingerprint;
}

inline std::vector<HammingMatch> BruteFindAll(const std::set<HammingEntry>& entries, uint64_t query,
                                              int max_distance) {
  std::vector<HammingMatch> out;
  for (const HammingEntry& e : entries) {
    int d = std::popcount(e.fingerprint ^ query);
    if (d <= max_distance) out.push_back({e.fingerprint, e.id, d});
  }
  std::sort(out.begin(), out.end(), MatchOrder);
  return out;
}

inline bool EntryIdLess(const HammingEntry& a, const HammingEntry& b) {
  return a.id != b.id ? a.id < b.id : a.fingerprint < b.fingerprint;
}

// Pairs by (a.id, a.fingerprint, b.id, b.fingerprint): the order the joins'
// tests compare in (an id may come with two fingerprints).
inline bool PairIdLess(const HammingPair& x, const HammingPair& y) {
  return std::tie(x.a.id, x.a.fingerprint, x.b.id, x.b.fingerprint) <
         std::tie(y.a.id, y.a.fingerprint, y.b.id, y.b.fingerprint);
}

inline std::vector<HammingPair> BruteSelfJoin(const std::set<HammingEntry>& entries,
                                              int max_distance) {
  std::vector<HammingEntry> all(entries.begin(), entries.end());
  std::sort(all.begin(), all.end(), EntryIdLess);
  std::vector<HammingPair> out;
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      int d = std::popcount(all[i].fingerprint ^ all[j].fingerprint);
      if (d <= max_distance) out.push_back({all[i], all[j], d});
    }
  }
  return out;  // ordered by (a, b) in (id, fingerprint) order
}

}  // namespace neardup::testing

#endif  // NEARDUP_INDEX_HAMMING_TEST_UTIL_H_
