#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "index/hamming_test_util.h"
#include "neardup/hamming_index.h"
#include "neardup/union_find.h"

namespace neardup {
namespace {

using testing::BruteSelfJoin;
using testing::EntryIdLess;
using testing::MakeFingerprints;

// Clusters by brute force: union-find over the brute-force pairs.
HammingClusters BruteClusters(const std::set<HammingEntry>& truth, int k, size_t min_size) {
  std::vector<HammingEntry> all(truth.begin(), truth.end());
  std::sort(all.begin(), all.end(), EntryIdLess);
  std::map<HammingEntry, uint32_t> index;
  for (size_t i = 0; i < all.size(); ++i) index[all[i]] = static_cast<uint32_t>(i);
  UnionFind uf(all.size());
  for (const HammingPair& p : BruteSelfJoin(truth, k)) uf.Union(index[p.a], index[p.b]);
  std::vector<uint32_t> labels = uf.Labels();  // ordered by smallest member
  return testing::ClustersFromLabels(all, labels, min_size);
}

void ExpectJoinMatchesOracle(const HammingIndex& index, const std::set<HammingEntry>& truth,
                             const std::string& context) {
  const int k = index.options().max_distance;
  std::vector<HammingPair> want = BruteSelfJoin(truth, k);
  std::vector<HammingPair> got = index.SelfJoin();
  ASSERT_EQ(got.size(), want.size()) << context;
  ASSERT_EQ(got, want) << context;
  // Split by table ranges, the joins partition SelfJoin: each pair once.
  const uint64_t tables = index.num_tables();
  std::vector<HammingPair> pieces;
  for (uint64_t t = 0; t < tables; ++t) {
    std::vector<HammingPair> part = *index.SelfJoinTables(t, t + 1);
    pieces.insert(pieces.end(), part.begin(), part.end());
  }
  std::sort(pieces.begin(), pieces.end(), [](const HammingPair& x, const HammingPair& y) {
    return std::tie(x.a.id, x.a.fingerprint, x.b.id, x.b.fingerprint) <
           std::tie(y.a.id, y.a.fingerprint, y.b.id, y.b.fingerprint);
  });
  ASSERT_EQ(pieces, want) << context << " (one table at a time)";
  EXPECT_TRUE(index.SelfJoinTables(0, 0)->empty());
  EXPECT_FALSE(index.SelfJoinTables(0, tables + 1).ok());
  EXPECT_FALSE(index.SelfJoinTables(2, 1).ok());
  for (size_t min_size : {1, 2, 3}) {
    HammingClusters want_clusters = BruteClusters(truth, k, min_size);
    HammingClusters got_clusters = index.Clusters(min_size);
    ASSERT_EQ(got_clusters.offsets, want_clusters.offsets) << context << " min " << min_size;
    ASSERT_EQ(got_clusters.members, want_clusters.members) << context << " min " << min_size;
  }
}

TEST(HammingJoinTest, SelfJoinAndClustersMatchBruteForce) {
  for (auto [m, k] : {std::pair{4, 3}, {5, 3}, {6, 3}, {3, 1}, {8, 6}, {7, 2}}) {
    const std::string context = "m=" + std::to_string(m) + " k=" + std::to_string(k);
    std::vector<uint64_t> fps = MakeFingerprints(2500, true, k, m * 31 + k);
    internal::SplitMix64 rng(m * 7 + k);
    std::vector<HammingEntry> entries;
    for (size_t i = 0; i < fps.size(); ++i) {
      entries.push_back({fps[i], rng.Next() % 100000});
      if (i % 10 == 0) entries.push_back({fps[i], rng.Next() % 100000});  // shared fp
      if (i % 50 == 0) entries.push_back({fps[(i * 7) % fps.size()], entries.back().id});
    }
    std::set<HammingEntry> truth(entries.begin(), entries.end());
    auto built = HammingIndex::Build({.num_blocks = m, .max_distance = k},
                                     std::span(entries).first(entries.size() - 200));
    ASSERT_TRUE(built.ok());
    HammingIndex index = std::move(built).value();
    // Pending buffer, extra runs and tombstones all take part.
    for (size_t i = entries.size() - 200; i < entries.size(); ++i) {
      ASSERT_TRUE(index.Insert(entries[i]).ok());
    }
    std::vector<HammingEntry> drop;
    for (size_t i = 0; i < entries.size(); i += 13) drop.push_back(entries[i]);
    index.RemoveBulk(drop);
    for (const HammingEntry& e : drop) truth.erase(e);
    ExpectJoinMatchesOracle(index, truth, context);
    index.Compact();
    ExpectJoinMatchesOracle(index, truth, context + " compacted");
  }
}

TEST(UnionFindTest, RootsAreSmallestMembersWhateverTheOrder) {
  UnionFind a(6), b(6);
  a.Union(5, 4);
  a.Union(4, 1);
  a.Union(2, 3);
  b.Union(1, 4);
  b.Union(3, 2);
  b.Union(5, 1);
  for (UnionFind* uf : {&a, &b}) {
    EXPECT_EQ(uf->Find(5), 1u);
    EXPECT_EQ(uf->Find(3), 2u);
    EXPECT_EQ(uf->Find(0), 0u);
    EXPECT_FALSE(uf->Union(4, 5));
    EXPECT_EQ(uf->Labels(), (std::vector<uint32_t>{0, 1, 2, 2, 1, 1}));
  }
}

}  // namespace
}  // namespace neardup
