#include "neardup/hamming_index.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "index/hamming_test_util.h"

namespace neardup {
namespace {

using testing::BruteFindAll;
using testing::MakeFingerprints;

// Compares every query answer of `index` with a linear scan over `truth`.
void ExpectMatchesOracle(const HammingIndex& index, const std::set<HammingEntry>& truth,
                         const std::vector<uint64_t>& queries, const std::string& context) {
  const int k = index.options().max_distance;
  ASSERT_EQ(index.size(), truth.size()) << context;
  HammingMatchesBulk bulk = index.FindAllBulk(queries);
  std::vector<std::optional<HammingMatch>> first = index.FindFirstBulk(queries);
  ASSERT_EQ(bulk.offsets.size(), queries.size() + 1);
  for (size_t i = 0; i < queries.size(); ++i) {
    std::vector<HammingMatch> want = BruteFindAll(truth, queries[i], k);
    std::vector<HammingMatch> got = index.FindAll(queries[i]);
    ASSERT_EQ(got, want) << context << " query " << i;
    auto span = bulk.For(i);
    ASSERT_EQ(std::vector<HammingMatch>(span.begin(), span.end()), want) << context;
    if (want.empty()) {
      ASSERT_FALSE(first[i].has_value()) << context;
      ASSERT_FALSE(index.FindFirst(queries[i]).has_value()) << context;
    } else {
      ASSERT_EQ(first[i], want.front()) << context;
      ASSERT_EQ(index.FindFirst(queries[i]), want.front()) << context;
    }
  }
}

// Queries: stored fingerprints, their neighbours at distance 0..k+1, and
// random values.
std::vector<uint64_t> MakeQueries(const std::vector<uint64_t>& fps, int k, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> queries;
  for (size_t i = 0; i < 120; ++i) {
    uint64_t base = fps[rng.Next() % fps.size()];
    queries.push_back(testing::FlipBits(base, static_cast<int>(rng.Next() % (k + 2)), rng));
  }
  for (int i = 0; i < 20; ++i) queries.push_back(rng.Next());
  return queries;
}

// For every (m, k) with 1 <= k <= 6 and k < m <= 8, on random and clustered
// fingerprints: bulk build, single and bulk inserts, single and bulk removes
// (with re-inserts of removed entries), then queries against a linear scan.
TEST(HammingIndexTest, MatchesLinearScanForAllSmallParameters) {
  for (bool clustered : {false, true}) {
    for (int k = 1; k <= 6; ++k) {
      for (int m = k + 1; m <= 8; ++m) {
        const std::string context = "m=" + std::to_string(m) + " k=" + std::to_string(k) +
                                    (clustered ? " clustered" : " random");
        const uint64_t seed = static_cast<uint64_t>(m * 100 + k * 10 + clustered);
        std::vector<uint64_t> fps = MakeFingerprints(1200, clustered, k + 1, seed);
        internal::SplitMix64 rng(seed ^ 0xabc);
        std::vector<HammingEntry> entries;
        for (uint64_t fp : fps) {
          entries.push_back({fp, rng.Next() % 5000});
          if (rng.Next() % 8 == 0) entries.push_back({fp, rng.Next() % 5000});  // shared fp
        }
        std::set<HammingEntry> truth;
        // Build from the first half, single-insert 300, bulk-insert the rest.
        const size_t half = entries.size() / 2;
        auto built = HammingIndex::Build({.num_blocks = m, .max_distance = k},
                                         std::span(entries).first(half));
        ASSERT_TRUE(built.ok()) << built.status();
        HammingIndex index = std::move(built).value();
        truth.insert(entries.begin(), entries.begin() + half);
        for (size_t i = half; i < half + 300; ++i) {
          auto added = index.Insert(entries[i]);
          ASSERT_TRUE(added.ok());
          EXPECT_EQ(*added, truth.insert(entries[i]).second);
        }
        std::vector<HammingEntry> rest(entries.begin() + half + 300, entries.end());
        rest.push_back(entries[0]);  // already present
        size_t want_added = 0;
        for (const HammingEntry& e : rest) want_added += truth.insert(e).second;
        auto added = index.InsertBulk(rest);
        ASSERT_TRUE(added.ok());
        EXPECT_EQ(*added, want_added);
        ExpectMatchesOracle(index, truth, MakeQueries(fps, k, seed + 1), context + " inserted");

        // Remove a third (single and bulk), some absent, then re-insert a few.
        std::vector<HammingEntry> all(truth.begin(), truth.end());
        std::vector<HammingEntry> bulk_remove;
        for (size_t i = 0; i < all.size(); i += 3) {
          if (i % 2 == 0) {
            EXPECT_TRUE(index.Remove(all[i]));
          } else {
            bulk_remove.push_back(all[i]);
          }
          truth.erase(all[i]);
        }
        EXPECT_FALSE(index.Remove(all[0]));
        bulk_remove.push_back({12345, 999999});  // absent
        EXPECT_EQ(index.RemoveBulk(bulk_remove), bulk_remove.size() - 1);
        for (size_t i = 0; i < all.size(); i += 9) {
          ASSERT_TRUE(index.Insert(all[i]).ok());
          truth.insert(all[i]);
        }
        ExpectMatchesOracle(index, truth, MakeQueries(fps, k, seed + 2), context + " removed");
        index.Compact();
        ExpectMatchesOracle(index, truth, MakeQueries(fps, k, seed + 3), context + " compacted");
      }
    }
  }
}

TEST(HammingIndexTest, ManySingleInsertsAndRemovesKeepTheSet) {
  auto created = HammingIndex::Create({.num_blocks = 5, .max_distance = 3});
  ASSERT_TRUE(created.ok());
  HammingIndex index = std::move(created).value();
  std::vector<uint64_t> fps = MakeFingerprints(5000, true, 4, 7);
  std::set<HammingEntry> truth;
  for (size_t i = 0; i < fps.size(); ++i) {
    ASSERT_TRUE(index.Insert({fps[i], i}).ok());
    truth.insert({fps[i], i});
    if (i % 3 == 2) {  // remove an older one: tombstones in older runs
      HammingEntry old{fps[i / 2], i / 2};
      EXPECT_EQ(index.Remove(old), truth.erase(old) == 1);
    }
  }
  for (const HammingEntry& e : truth) ASSERT_TRUE(index.Contains(e));
  EXPECT_FALSE(index.Contains({fps[1], 1}));
  ExpectMatchesOracle(index, truth, MakeQueries(fps, 3, 8), "single inserts");
  // Remove everything: the index is empty and answers nothing.
  std::vector<HammingEntry> all(truth.begin(), truth.end());
  EXPECT_EQ(index.RemoveBulk(all), all.size());
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.FindAll(fps[0]).empty());
  EXPECT_FALSE(index.FindFirst(fps[0]).has_value());
}

TEST(HammingIndexTest, SetSemanticsAndSharedFingerprints) {
  auto built = HammingIndex::Build({.num_blocks = 4, .max_distance = 2},
                                   std::vector<HammingEntry>{{7, 1}, {7, 1}, {7, 3}, {6, 2}});
  ASSERT_TRUE(built.ok());
  HammingIndex index = std::move(built).value();
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(*index.Insert({7, 3}), false);
  EXPECT_EQ(*index.Insert({7, 0}), true);
  std::vector<HammingMatch> want = {{7, 0, 0}, {7, 1, 0}, {7, 3, 0}, {6, 2, 1}};
  EXPECT_EQ(index.FindAll(7), want);
  EXPECT_EQ(index.FindFirst(6), (HammingMatch{6, 2, 0}));
  EXPECT_TRUE(index.Remove({7, 1}));
  EXPECT_FALSE(index.Remove({7, 1}));
  EXPECT_EQ(*index.Insert({7, 1}), true);  // revives the tombstone
  EXPECT_EQ(index.FindAll(7), want);
  EXPECT_GT(index.MemoryBytes(), 0u);
  EXPECT_EQ(index.num_tables(), 6u);
}

TEST(HammingIndexTest, EmptyIndexAnswersNothing) {
  auto created = HammingIndex::Create({.num_blocks = 6, .max_distance = 3});
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->FindAll(0).empty());
  EXPECT_TRUE(created->FindAllBulk({}).matches.empty());
  EXPECT_EQ(created->FindAllBulk({}).offsets.size(), 1u);
  EXPECT_TRUE(created->SelfJoin().empty());
  EXPECT_EQ(created->Clusters().num_clusters(), 0u);
  EXPECT_EQ(*created->InsertBulk({}), 0u);
  EXPECT_EQ(created->RemoveBulk({}), 0u);
}

TEST(HammingIndexTest, ExtremeFingerprintsAndParameters) {
  // All-zero and all-one fingerprints, one block and 64 one-bit blocks.
  std::vector<HammingEntry> entries = {{0, 1}, {~0ULL, 2}, {1, 3}, {1ULL << 63, 4}, {~0ULL ^ 7, 5}};
  std::set<HammingEntry> truth(entries.begin(), entries.end());
  for (auto [m, k] : {std::pair{1, 0}, {2, 1}, {64, 1}, {64, 63}, {33, 2}}) {
    auto built = HammingIndex::Build({.num_blocks = m, .max_distance = k}, entries);
    ASSERT_TRUE(built.ok());
    ExpectMatchesOracle(*built, truth, {0, ~0ULL, 3, 1ULL << 62, 0xff00ff00ULL},
                        "m=" + std::to_string(m));
  }
}

}  // namespace
}  // namespace neardup
