// A HammingIndex built for a range of its permuted tables (a distributed
// job's share): the ranges of any split find every pair of the whole index
// exactly once, against brute force, for uneven splits and for more ranges
// than tables (ranges with no table find nothing).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "index/hamming_test_util.h"
#include "neardup/hamming_index.h"
#include "neardup/union_find.h"

namespace neardup {
namespace {

using testing::BruteFindAll;
using testing::BruteSelfJoin;
using testing::MakeFingerprints;
using testing::PairIdLess;

// Clustered fingerprints, some shared by several ids (pairs at distance 0).
std::vector<HammingEntry> PartialTestEntries(int m, int k, size_t count) {
  std::vector<uint64_t> fps = MakeFingerprints(count, true, k + 1, m * 131 + k);
  internal::SplitMix64 rng(m * 17 + k);
  std::vector<HammingEntry> entries;
  for (size_t i = 0; i < fps.size(); ++i) {
    entries.push_back({fps[i], rng.Next() % 1000000});
    if (i % 9 == 0) entries.push_back({fps[i], rng.Next() % 1000000});
  }
  return entries;
}

// The clusters of `truth` joined by `pairs` and by equal fingerprints (a
// partial index keeps the entries of one fingerprint together), in
// HammingIndex::Clusters' order.
HammingClusters PartialClustersOf(const std::set<HammingEntry>& truth,
                                  const std::vector<HammingPair>& pairs, size_t min_size) {
  std::vector<HammingEntry> all(truth.begin(), truth.end());
  std::sort(all.begin(), all.end(), testing::EntryIdLess);
  std::map<HammingEntry, uint32_t> index;
  std::map<uint64_t, uint32_t> first_of_fp;
  UnionFind uf(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    index[all[i]] = static_cast<uint32_t>(i);
    auto [it, fresh] = first_of_fp.emplace(all[i].fingerprint, static_cast<uint32_t>(i));
    if (!fresh) uf.Union(it->second, static_cast<uint32_t>(i));
  }
  for (const HammingPair& p : pairs) uf.Union(index.at(p.a), index.at(p.b));
  std::vector<uint32_t> labels = uf.Labels();  // ordered by smallest member
  return testing::ClustersFromLabels(all, labels, min_size);
}

void ExpectSameClusters(const HammingClusters& got, const HammingClusters& want,
                        const std::string& context) {
  ASSERT_EQ(got.num_clusters(), want.num_clusters()) << context;
  EXPECT_EQ(got.offsets, want.offsets) << context;
  EXPECT_EQ(got.members, want.members) << context;
}

// Rank r's share of t tables among n ranks, as neardup-mpi splits them.
std::pair<uint64_t, uint64_t> PartialShare(uint64_t t, uint64_t n, uint64_t r) {
  return {t * r / n, t * (r + 1) / n};
}

TEST(HammingPartialTest, RangesFindEveryPairExactlyOnce) {
  for (auto [m, k] : {std::pair{6, 3}, {4, 1}, {5, 2}, {7, 3}, {3, 0}}) {
    std::vector<HammingEntry> entries = PartialTestEntries(m, k, 1500);
    const std::set<HammingEntry> truth(entries.begin(), entries.end());
    const std::vector<HammingPair> want = BruteSelfJoin(truth, k);
    const HammingIndexOptions options{.num_blocks = m, .max_distance = k};
    HammingIndex whole = *HammingIndex::Build(options, entries);
    ASSERT_EQ(whole.SelfJoin(), want);
    const uint64_t t = whole.num_tables();
    for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4}, uint64_t{7}, t - 1, t,
                       t + 1, 2 * t + 3}) {
      if (n == 0) continue;
      const std::string context = "m=" + std::to_string(m) + " k=" + std::to_string(k) +
                                  " t=" + std::to_string(t) + " n=" + std::to_string(n);
      std::vector<HammingPair> all;
      for (uint64_t r = 0; r < n; ++r) {
        auto [begin, end] = PartialShare(t, n, r);
        Result<HammingIndex> part = HammingIndex::Build(options, entries, begin, end);
        ASSERT_TRUE(part.ok()) << context << " " << part.status().ToString();
        EXPECT_EQ(part->table_begin(), begin);
        EXPECT_EQ(part->table_end(), end);
        EXPECT_EQ(part->num_tables(), t);
        EXPECT_EQ(part->size(), truth.size());
        std::vector<HammingPair> got = part->SelfJoin();
        ASSERT_EQ(got, *whole.SelfJoinTables(begin, end)) << context << " r=" << r;
        if (begin == end) {
          EXPECT_TRUE(got.empty()) << context;
          EXPECT_TRUE(part->FindAll(entries[0].fingerprint).empty()) << context;
        }
        all.insert(all.end(), got.begin(), got.end());
      }
      std::sort(all.begin(), all.end(), PairIdLess);
      ASSERT_EQ(all, want) << context;  // none lost, none twice
    }
  }
}

TEST(HammingPartialTest, QueriesOfTheRangesAddUpToTheWholeIndex) {
  const int m = 6, k = 3;
  const HammingIndexOptions options{.num_blocks = m, .max_distance = k};
  std::vector<HammingEntry> entries = PartialTestEntries(m, k, 3000);
  // The last entries go in one by one (the pending buffer, then more runs),
  // a few are removed (tombstones): mutations of a partial index.
  const size_t built = entries.size() - 150;
  std::vector<HammingEntry> drop;
  for (size_t i = 0; i < entries.size(); i += 17) drop.push_back(entries[i]);
  std::set<HammingEntry> truth(entries.begin(), entries.end());
  for (const HammingEntry& e : drop) truth.erase(e);
  std::vector<uint64_t> queries;
  internal::SplitMix64 rng(5);
  for (size_t i = 0; i < 400; ++i) {
    queries.push_back(testing::FlipBits(entries[rng.Next() % entries.size()].fingerprint,
                                        static_cast<int>(rng.Next() % 4), rng));
  }
  const uint64_t t = HammingNumTables(m, k);
  for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{6}, t + 2}) {
    std::vector<std::vector<HammingMatch>> got(queries.size());
    std::vector<HammingPair> pairs;
    for (uint64_t r = 0; r < n; ++r) {
      auto [begin, end] = PartialShare(t, n, r);
      HammingIndex part =
          *HammingIndex::Build(options, std::span(entries).first(built), begin, end);
      for (size_t i = built; i < entries.size(); ++i) ASSERT_TRUE(part.Insert(entries[i]).ok());
      ASSERT_EQ(part.RemoveBulk(drop), drop.size());
      HammingMatchesBulk bulk = part.FindAllBulk(queries);
      std::vector<std::optional<HammingMatch>> firsts = part.FindFirstBulk(queries);
      ASSERT_EQ(firsts.size(), queries.size());
      for (size_t q = 0; q < queries.size(); ++q) {
        std::vector<HammingMatch> one = part.FindAll(queries[q]);
        ASSERT_TRUE(std::equal(one.begin(), one.end(), bulk.For(q).begin(), bulk.For(q).end()));
        // FindFirst sees the same matches as FindAll: the first of its range's.
        const std::optional<HammingMatch> first =
            one.empty() ? std::nullopt : std::optional<HammingMatch>(one.front());
        ASSERT_EQ(part.FindFirst(queries[q]), first) << "n=" << n << " r=" << r << " query " << q;
        ASSERT_EQ(firsts[q], first) << "n=" << n << " r=" << r << " query " << q;
        got[q].insert(got[q].end(), one.begin(), one.end());
      }
      std::vector<HammingPair> p = part.SelfJoin();
      pairs.insert(pairs.end(), p.begin(), p.end());
    }
    for (size_t q = 0; q < queries.size(); ++q) {
      std::sort(got[q].begin(), got[q].end(), testing::MatchOrder);
      ASSERT_EQ(got[q], BruteFindAll(truth, queries[q], k)) << "n=" << n << " query " << q;
    }
    std::sort(pairs.begin(), pairs.end(), PairIdLess);
    ASSERT_EQ(pairs, BruteSelfJoin(truth, k)) << "n=" << n;
  }
}

TEST(HammingPartialTest, HoldsOnlyItsTables) {
  const HammingIndexOptions options{.num_blocks = 6, .max_distance = 3};
  std::vector<uint64_t> fps = MakeFingerprints(20000, false, 0, 9);
  std::vector<HammingEntry> entries;
  for (size_t i = 0; i < fps.size(); ++i) entries.push_back({fps[i], i});
  HammingIndex whole = *HammingIndex::Build(options, entries);
  HammingIndex half = *HammingIndex::Build(options, entries, 0, 10);
  HammingIndex none = *HammingIndex::Build(options, entries, 20, 20);
  EXPECT_LT(half.MemoryBytes(), whole.MemoryBytes() * 6 / 10);
  EXPECT_LT(none.MemoryBytes(), whole.MemoryBytes() / 8);
}

// Clusters of a partial index join the pairs it finds (its SelfJoin's) and
// entries of one fingerprint, no others; the ranges' clusters together join
// as the whole index's do.
TEST(HammingPartialTest, ClustersOfTheRangesJoinTheirOwnPairs) {
  for (auto [m, k] : {std::pair{6, 3}, {5, 2}, {4, 1}}) {
    std::vector<HammingEntry> entries = PartialTestEntries(m, k, 1500);
    const std::set<HammingEntry> truth(entries.begin(), entries.end());
    const HammingIndexOptions options{.num_blocks = m, .max_distance = k};
    HammingIndex whole = *HammingIndex::Build(options, entries);
    const HammingClusters want = whole.Clusters(2);
    ExpectSameClusters(want, PartialClustersOf(truth, BruteSelfJoin(truth, k), 2), "whole");
    ASSERT_GT(want.num_clusters(), 20u);  // the data does cluster
    const uint64_t t = whole.num_tables();
    for (uint64_t n : {uint64_t{2}, uint64_t{3}, t}) {
      const std::string context =
          "m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n);
      std::vector<HammingPair> links;  // consecutive members of each range's clusters
      size_t smaller = 0;
      for (uint64_t r = 0; r < n; ++r) {
        auto [begin, end] = PartialShare(t, n, r);
        HammingIndex part = *HammingIndex::Build(options, entries, begin, end);
        const HammingClusters got = part.Clusters(2);
        ExpectSameClusters(got, PartialClustersOf(truth, part.SelfJoin(), 2),
                           context + " r=" + std::to_string(r));
        if (got.members.size() < want.members.size()) ++smaller;
        for (size_t c = 0; c < got.num_clusters(); ++c) {
          std::span<const HammingEntry> members = got.Cluster(c);
          for (size_t i = 1; i < members.size(); ++i) links.push_back({members[0], members[i], 0});
        }
      }
      EXPECT_GT(smaller, 0u) << context;  // some range misses pairs of others
      ExpectSameClusters(PartialClustersOf(truth, links, 2), want, context + " together");
    }
  }
}

// One pair whose canonical table is t > 0 and two ids of one fingerprint:
// only the range holding that table clusters the pair; every range keeps the
// two ids together.
TEST(HammingPartialTest, ClustersAPairOnlyInItsCanonicalTable) {
  const HammingIndexOptions options{.num_blocks = 6, .max_distance = 3};
  std::vector<uint64_t> fps = MakeFingerprints(2000, false, 0, 23);
  std::vector<HammingEntry> entries;
  for (size_t i = 0; i < fps.size(); ++i) entries.push_back({fps[i], 10 + i});
  // fps[0] and fps[0] with its top bit flipped (they differ in block 0 only).
  const HammingEntry a{fps[0], 10}, b{fps[0] ^ (uint64_t{1} << 63), 1};
  const HammingEntry c{fps[1], 11}, d{fps[1], 2};  // one fingerprint, two ids
  entries.push_back(b);
  entries.push_back(d);
  HammingIndex whole = *HammingIndex::Build(options, entries);
  ASSERT_EQ(whole.SelfJoin().size(), 2u);  // random fps: no other pair at k = 3
  const uint64_t t = whole.num_tables();
  std::optional<uint64_t> canonical;
  for (uint64_t i = 0; i < t; ++i) {
    const std::vector<HammingPair> found = *whole.SelfJoinTables(i, i + 1);
    for (const HammingPair& p : found) {
      if (p.a.fingerprint != p.b.fingerprint) canonical = i;
    }
  }
  ASSERT_TRUE(canonical.has_value());
  ASSERT_GT(*canonical, 0u);
  const std::vector<HammingEntry> pair = {b, a};  // (id, fingerprint) order
  const std::vector<HammingEntry> same = {d, c};
  for (uint64_t i = 0; i < t; ++i) {
    HammingIndex part = *HammingIndex::Build(options, entries, i, i + 1);
    const HammingClusters got = part.Clusters(2);
    const std::string context = "table " + std::to_string(i);
    std::vector<std::vector<HammingEntry>> clusters;
    for (size_t j = 0; j < got.num_clusters(); ++j) {
      clusters.emplace_back(got.Cluster(j).begin(), got.Cluster(j).end());
    }
    if (i == *canonical) {
      EXPECT_EQ(clusters, (std::vector<std::vector<HammingEntry>>{pair, same})) << context;
    } else {
      EXPECT_EQ(clusters, (std::vector<std::vector<HammingEntry>>{same})) << context;
    }
  }
}

TEST(HammingPartialTest, RejectsBadRanges) {
  const HammingIndexOptions options{.num_blocks = 6, .max_distance = 3};  // 20 tables
  std::vector<HammingEntry> entries = {{1, 1}, {3, 2}};
  EXPECT_EQ(HammingIndex::Build(options, entries, 0, 21).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(HammingIndex::Build(options, entries, 5, 4).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(HammingIndex::Create(options, 0, 21).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      HammingIndex::Build({.num_blocks = 3, .max_distance = 3}, entries, 0, 0).status().code(),
      StatusCode::kInvalidArgument);
  HammingIndex part = *HammingIndex::Build(options, entries, 4, 9);
  EXPECT_TRUE(part.SelfJoinTables(5, 9).ok());
  EXPECT_EQ(part.SelfJoinTables(3, 9).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(part.SelfJoinTables(4, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(part.Save(::testing::TempDir() + "/partial.hidx").code(),
            StatusCode::kFailedPrecondition);
  HammingIndex empty = *HammingIndex::Create(options, 0, 1);
  ASSERT_TRUE(empty.Insert({7, 1}).ok());
  ASSERT_TRUE(empty.Insert({7, 2}).ok());
  EXPECT_EQ(empty.SelfJoin().size(), 1u);  // equal fingerprints: table 0's
}

}  // namespace
}  // namespace neardup
