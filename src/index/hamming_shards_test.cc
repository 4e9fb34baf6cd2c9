// HammingShards: the key-prefix shards of every permuted table. Each shard
// joins the entries routed to it (ShardsOf); the shards' pairs together are
// the brute-force pairs, each exactly once, for uneven shard counts, more
// shards than key prefixes, and entries shared by several ids.
#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "index/hamming_test_util.h"
#include "neardup/hamming_shards.h"

namespace neardup {
namespace {

using testing::BruteSelfJoin;
using testing::MakeFingerprints;
using testing::PairIdLess;

// Clustered fingerprints, some shared by several ids (pairs at distance 0),
// and an exact duplicate entry. Ids are drawn at random below 10^6, so an id
// may also come with two fingerprints: intended, entries are (fingerprint,
// id) pairs and the join must keep them apart.
std::vector<HammingEntry> ShardTestEntries(int m, int k, size_t count) {
  std::vector<uint64_t> fps = MakeFingerprints(count, true, k + 1, m * 257 + k);
  internal::SplitMix64 rng(m * 29 + k);
  std::vector<HammingEntry> entries;
  for (size_t i = 0; i < fps.size(); ++i) {
    entries.push_back({fps[i], rng.Next() % 1000000});
    if (i % 7 == 0) entries.push_back({fps[i], rng.Next() % 1000000});
  }
  entries.push_back(entries.front());
  return entries;
}

TEST(HammingShards, ShardsTogetherFindEveryPairOnce) {
  // (m, k): m = 8, k = 7 has 8-bit key prefixes, so 300 shards leave most
  // of them empty in every table.
  for (auto [m, k] :
       std::vector<std::pair<int, int>>{{6, 3}, {5, 2}, {4, 1}, {7, 3}, {3, 0}, {8, 7}}) {
    const std::vector<HammingEntry> entries = ShardTestEntries(m, k, 700);
    const std::set<HammingEntry> truth(entries.begin(), entries.end());
    const std::vector<HammingPair> want = BruteSelfJoin(truth, k);
    ASSERT_GT(want.size(), 50u) << m << "," << k;
    HammingIndexOptions options{m, k};
    const std::vector<HammingPair> whole = HammingIndex::Build(options, entries)->SelfJoin();
    ASSERT_EQ(whole, want);
    for (uint64_t n : std::vector<uint64_t>{1, 2, 3, 4, 7, 8, 300}) {
      Result<HammingShards> shards = HammingShards::Create(options, n);
      ASSERT_TRUE(shards.ok()) << shards.status().ToString();
      std::vector<std::vector<HammingEntry>> routed(n);
      std::vector<uint64_t> owners;
      for (const HammingEntry& e : entries) {
        shards->ShardsOf(e.fingerprint, &owners);
        ASSERT_TRUE(std::is_sorted(owners.begin(), owners.end()));
        ASSERT_LE(owners.size(), shards->num_tables());
        for (uint64_t t = 0; t < shards->num_tables(); ++t) {
          ASSERT_TRUE(
              std::binary_search(owners.begin(), owners.end(), *shards->ShardOf(t, e.fingerprint)));
        }
        for (uint64_t s : owners) routed[s].push_back(e);
      }
      std::vector<HammingPair> got;
      size_t empty_shards = 0;
      for (uint64_t s = 0; s < n; ++s) {
        HammingShardJoinStats stats;
        Result<std::vector<HammingPair>> pairs = shards->SelfJoin(routed[s], s, &stats);
        ASSERT_TRUE(pairs.ok());
        EXPECT_TRUE(std::is_sorted(pairs->begin(), pairs->end(), PairIdLess));
        EXPECT_LE(stats.table_values, stats.entries * shards->num_tables());
        if (routed[s].empty()) {
          ++empty_shards;
          EXPECT_TRUE(pairs->empty());
        }
        // Extra entries (every one) change nothing: a shard reports only
        // the pairs whose canonical key is its own.
        EXPECT_EQ(*shards->SelfJoin(entries, s), *pairs) << m << "," << k << " n=" << n;
        got.insert(got.end(), pairs->begin(), pairs->end());
      }
      std::sort(got.begin(), got.end(), PairIdLess);
      EXPECT_EQ(got, want) << m << "," << k << " n=" << n;  // each pair once
      if (m == 8 && n == 300) {
        EXPECT_GT(empty_shards, 0u);
      }
    }
  }
}

TEST(HammingShards, SpreadsCloseRandomPairs) {
  // Random centres with one close neighbour each: the pairs spread over the
  // shards (what the table split of HammingIndex::Build(.., begin, end)
  // does not do: there the first tables get them).
  HammingIndexOptions options{5, 3};
  internal::SplitMix64 rng(5);
  std::vector<HammingEntry> entries;
  for (uint64_t i = 0; i < 2000; ++i) {
    const uint64_t centre = rng.Next();
    entries.push_back({centre, 2 * i});
    entries.push_back({testing::FlipBits(centre, 2, rng), 2 * i + 1});
  }
  HammingShards shards = *HammingShards::Create(options, 2);
  std::vector<size_t> per_shard;
  for (uint64_t s = 0; s < 2; ++s) per_shard.push_back(shards.SelfJoin(entries, s)->size());
  EXPECT_GE(per_shard[0] + per_shard[1], 2000u);
  EXPECT_GT(per_shard[0], 800u);
  EXPECT_GT(per_shard[1], 800u);
}

TEST(HammingShards, SpreadsTheCopiesOfOneFingerprint) {
  // 300 ids of one fingerprint: 44,850 pairs at distance 0, dealt out row by
  // row over the shards of its keys, each pair once.
  HammingIndexOptions options{6, 3};
  HammingShards shards = *HammingShards::Create(options, 4);
  const uint64_t fp = 0x0123456789abcdefULL;
  std::vector<uint64_t> owners;
  shards.ShardsOf(fp, &owners);
  ASSERT_GE(owners.size(), 2u);
  std::vector<HammingEntry> entries;
  for (uint64_t id = 0; id < 300; ++id) entries.push_back({fp, id * 7});
  const std::set<HammingEntry> truth(entries.begin(), entries.end());
  std::vector<HammingPair> got;
  for (uint64_t s = 0; s < 4; ++s) {
    std::vector<HammingPair> pairs = *shards.SelfJoin(entries, s);
    const bool owns = std::binary_search(owners.begin(), owners.end(), s);
    if (owns) {
      EXPECT_GT(pairs.size(), 44850u / owners.size() / 2) << s;
    } else {
      EXPECT_TRUE(pairs.empty()) << s;
    }
    got.insert(got.end(), pairs.begin(), pairs.end());
  }
  std::sort(got.begin(), got.end(), PairIdLess);
  EXPECT_EQ(got, BruteSelfJoin(truth, 3));
}

TEST(HammingShards, RejectsBadArguments) {
  EXPECT_FALSE(HammingShards::Create({6, 3}, 0).ok());
  EXPECT_FALSE(HammingShards::Create({6, 3}, (uint64_t{1} << 32) + 1).ok());
  EXPECT_TRUE(HammingShards::Create({6, 3}, uint64_t{1} << 32).ok());
  EXPECT_FALSE(HammingShards::Create({3, 3}, 2).ok());
  HammingShards shards = *HammingShards::Create({6, 3}, 3);
  EXPECT_EQ(shards.num_tables(), 20u);
  EXPECT_EQ(shards.num_shards(), 3u);
  EXPECT_FALSE(shards.SelfJoin({}, 3).ok());
  EXPECT_TRUE(shards.SelfJoin({}, 2)->empty());
  // A table number past the last is refused, not read out of range.
  EXPECT_TRUE(shards.ShardOf(19, 0xdeadbeefcafef00dULL).ok());
  EXPECT_EQ(shards.ShardOf(20, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(shards.ShardOf((uint64_t{1} << 32) + 1, 1).ok());
  // Shard 0 of 1 is every value.
  HammingShards one = *HammingShards::Create({6, 3}, 1);
  std::vector<uint64_t> owners;
  one.ShardsOf(0xdeadbeefcafef00dULL, &owners);
  EXPECT_EQ(owners, std::vector<uint64_t>{0});
}

// A table's key leads with its first chosen block, one of blocks 0..k: for a
// power-of-two shard count up to 2^(block bits) the shard depends on that
// block alone, so a fingerprint goes to at most k + 1 shards, not one per
// table (docs/DISTRIBUTED.md's model counts on it).
TEST(HammingShards, AFingerprintHasAtMostKPlusOneShards) {
  internal::SplitMix64 rng(18);
  std::vector<uint64_t> owners;
  for (auto [m, k] : std::vector<std::pair<int, int>>{{6, 3}, {5, 3}, {4, 3}, {5, 2}}) {
    for (uint64_t n : std::vector<uint64_t>{2, 64, 512}) {
      HammingShards shards = *HammingShards::Create({m, k}, n);
      size_t most = 0;
      for (int i = 0; i < 2000; ++i) {
        shards.ShardsOf(rng.Next(), &owners);
        most = std::max(most, owners.size());
      }
      EXPECT_LE(most, static_cast<size_t>(k + 1)) << m << "," << k << "," << n;
    }
  }
}

}  // namespace
}  // namespace neardup
