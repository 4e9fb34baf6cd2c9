#include "index/lsh_band_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// Keys whose high and low halves each come from a small set, so that many
// keys share a high half (same home, long runs, wrap-around) or a low half
// (the entry matches until keys[] disagrees) without being equal.
uint64_t MakeKey(SplitMix64& rng, int distinct_halves) {
  const uint64_t high = Mix64(rng.Next() % distinct_halves) >> 32;
  const uint64_t low = Mix64(rng.Next() % distinct_halves + 1000) & 0xFFFFFFFFu;
  return (high << 32) | low;
}

// Oracle: a std::map from key to slot, under random inserts (single and
// ranged), finds, slot updates and erasures, through growth; for the
// whole table and the sharded one (few distinct high halves put the keys in
// few shards, crowded within each).
template <typename Table>
class BandTablesTest : public ::testing::Test {};
using BandTables = ::testing::Types<BandTable, ShardedBandTable>;
TYPED_TEST_SUITE(BandTablesTest, BandTables);

TYPED_TEST(BandTablesTest, MatchesMapUnderRandomOperations) {
  using Table = TypeParam;
  for (int distinct_halves : {3, 40, 100000}) {
    SCOPED_TRACE(distinct_halves);
    SplitMix64 rng(distinct_halves);
    Table table;
    std::map<uint64_t, uint32_t> oracle;
    std::vector<uint64_t> key_of_slot;
    std::vector<uint32_t> keys;  // high halves, as the index keeps them
    const auto add_slot = [&](uint64_t key) {
      key_of_slot.push_back(key);
      keys.push_back(Table::HighHalf(key));
      return static_cast<uint32_t>(key_of_slot.size() - 1);
    };
    for (int step = 0; step < 3000; ++step) {
      const uint64_t choice = rng.Next() % 8;
      if (oracle.empty() || choice < 3) {
        const uint64_t key = MakeKey(rng, distinct_halves);
        const uint32_t slot = add_slot(key);
        const auto [pos, inserted] = table.FindOrInsert(key, slot, keys.data());
        ASSERT_EQ(inserted, !oracle.contains(key));
        if (inserted) oracle[key] = slot;
        EXPECT_EQ(table.SlotAt(pos), oracle[key]);
      } else if (choice < 5) {
        // A run of new slots; a match moves the entry to the new slot, as
        // the index does when the new document becomes the chain head.
        const size_t count = rng.Next() % 40;
        const auto first = static_cast<uint32_t>(key_of_slot.size());
        std::vector<uint64_t> run_keys;
        for (size_t i = 0; i < count; ++i) run_keys.push_back(MakeKey(rng, distinct_halves));
        key_of_slot.insert(key_of_slot.end(), run_keys.begin(), run_keys.end());
        keys.resize(key_of_slot.size(), 0xDEADBEEFu);  // written by the call
        table.FindOrInsertRange(
            first, static_cast<uint32_t>(first + count), 3,
            [&](uint32_t slot) { return run_keys[slot - first]; }, keys.data(),
            [&](uint32_t slot) {
              ASSERT_FALSE(oracle.contains(key_of_slot[slot]));
              oracle[key_of_slot[slot]] = slot;
            },
            [&](uint32_t slot, uint32_t old) {
              EXPECT_EQ(oracle.at(key_of_slot[slot]), old);
              oracle[key_of_slot[slot]] = slot;
              return slot;
            });
        for (uint32_t slot = first; slot < first + count; ++slot) {
          ASSERT_EQ(keys[slot], Table::HighHalf(key_of_slot[slot]));
        }
      } else {
        auto it = oracle.begin();
        std::advance(it, rng.Next() % oracle.size());
        const uint64_t key = it->first;
        const size_t pos = table.Find(key, keys.data());
        ASSERT_NE(pos, Table::kNotFound);
        EXPECT_EQ(table.SlotAt(pos), it->second);
        EXPECT_EQ(table.FindSlot(it->second, keys.data()), pos);
        if (choice == 5) {
          // Move the entry to a fresh slot with the same key.
          const uint32_t slot = add_slot(key);
          table.SetSlotAt(pos, slot);
          it->second = slot;
        } else {
          table.EraseAt(pos, keys.data());
          oracle.erase(it);
        }
      }
      ASSERT_EQ(table.size(), oracle.size());
      ASSERT_GE(table.capacity(), 2 * table.size());
    }
    for (const auto& [key, slot] : oracle) {
      const size_t pos = table.Find(key, keys.data());
      ASSERT_NE(pos, Table::kNotFound);
      EXPECT_EQ(table.SlotAt(pos), slot);
      EXPECT_EQ(table.FindSlot(slot, keys.data()), pos);
    }
    // Keys not in the table are not found, nor are the slots that left it.
    for (size_t s = 0; s < key_of_slot.size(); ++s) {
      const uint64_t key = key_of_slot[s];
      const auto it = oracle.find(key);
      if (it == oracle.end()) {
        EXPECT_EQ(table.Find(key, keys.data()), Table::kNotFound);
      }
      if (it == oracle.end() || it->second != s) {
        EXPECT_EQ(table.FindSlot(static_cast<uint32_t>(s), keys.data()), Table::kNotFound);
      }
    }
  }
}

// Keys equal in one half only are different keys.
TEST(BandTableTest, HalvesAloneDoNotMatch) {
  BandTable table;
  const uint64_t key = 0x0123456789ABCDEFull;
  const std::vector<uint32_t> keys = {0x01234567u, 0x01234567u, 0x76543210u};
  EXPECT_TRUE(table.FindOrInsert(key, 0, keys.data()).second);
  // Same high half, other low half.
  EXPECT_TRUE(table.FindOrInsert(0x0123456700000000ull, 1, keys.data()).second);
  // Same low half, other high half.
  EXPECT_TRUE(table.FindOrInsert(0x7654321089ABCDEFull, 2, keys.data()).second);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.SlotAt(table.Find(key, keys.data())), 0u);
  EXPECT_FALSE(table.FindOrInsert(key, 0, keys.data()).second);
}

TEST(BandTableTest, ReserveKeepsCapacity) {
  BandTable table;
  std::vector<uint32_t> keys;
  table.Reserve(1000, keys.data());
  const size_t capacity = table.capacity();
  EXPECT_GE(capacity, 2000u);
  for (uint32_t i = 0; i < 1000; ++i) {
    keys.push_back(BandTable::HighHalf(Mix64(i)));
    EXPECT_TRUE(table.FindOrInsert(Mix64(i), i, keys.data()).second);
  }
  EXPECT_EQ(table.capacity(), capacity);
}

// Each shard grows on its own: no insert grows the band's table by more than
// one shard's doubling, and reserving covers keys spread by their hashes.
TEST(ShardedBandTableTest, ShardsGrowOneAtATime) {
  ShardedBandTable table;
  std::vector<uint32_t> keys;
  size_t capacity = table.capacity();
  size_t growths = 0;
  for (uint32_t i = 0; i < 200000; ++i) {
    const uint64_t key = Mix64(i);
    keys.push_back(ShardedBandTable::HighHalf(key));
    ASSERT_TRUE(table.FindOrInsert(key, i, keys.data()).second);
    if (table.capacity() != capacity) {
      ++growths;
      EXPECT_LE(table.capacity() - capacity, capacity / ShardedBandTable::kNumShards * 4) << i;
      capacity = table.capacity();
    }
  }
  EXPECT_GE(growths, ShardedBandTable::kNumShards * 8);
  for (uint32_t i = 0; i < keys.size(); i += 101) {
    const size_t pos = table.Find(Mix64(i), keys.data());
    ASSERT_NE(pos, ShardedBandTable::kNotFound);
    EXPECT_EQ(table.SlotAt(pos), i);
    EXPECT_EQ(table.FindSlot(i, keys.data()), pos);
  }
  ShardedBandTable reserved;
  reserved.Reserve(keys.size(), keys.data());
  const size_t room = reserved.capacity();
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(reserved.FindOrInsert(Mix64(i), i, keys.data()).second);
  }
  EXPECT_EQ(reserved.capacity(), room);
}

// FindOrInsertStaggered's threshold: step s of `steps` grows a table of
// 2^13 entries once one more entry passes a load of 1/2 + s / (16 steps);
// below 2^12 entries (kStaggerMinCapacity) at 1/2 as FindOrInsert. The
// last two steps are those of 2^31 - 1 bands (steps = 8 num_bands, the most
// an int num_bands gives), past the 2^20 steps an earlier version's DCHECK
// allowed.
TEST(BandTableTest, StaggeredGrowthAtItsStep) {
  constexpr size_t kMostSteps = 8 * ((size_t{1} << 31) - 1);
  for (const auto& [step, steps] : {std::pair<size_t, size_t>{0, 1},
                                    {1, 2},
                                    {127, 128},
                                    {kMostSteps / 3, kMostSteps},
                                    {kMostSteps - 1, kMostSteps}}) {
    SCOPED_TRACE(step);
    BandTable table;
    std::vector<uint32_t> keys;
    table.Reserve(4096, keys.data());
    ASSERT_EQ(table.capacity(), size_t{8192});
    const size_t grow_at = 8192 * (8 * steps + step) / (16 * steps) + 1;  // passes it
    for (uint32_t i = 0;; ++i) {
      keys.push_back(BandTable::HighHalf(Mix64(i)));
      ASSERT_TRUE(table.FindOrInsertStaggered(Mix64(i), i, keys.data(), step, steps).second);
      if (table.capacity() != 8192) {
        EXPECT_EQ(table.size(), grow_at);
        EXPECT_EQ(table.capacity(), size_t{16384});
        break;
      }
      ASSERT_LT(table.size(), grow_at);
    }
    for (uint32_t i = 0; i < keys.size(); ++i) {
      const size_t pos = table.Find(Mix64(i), keys.data());
      ASSERT_NE(pos, BandTable::kNotFound);
      ASSERT_EQ(table.SlotAt(pos), i);
    }
  }
  BandTable small;
  std::vector<uint32_t> keys;
  for (uint32_t i = 0; i < 1025; ++i) {
    keys.push_back(BandTable::HighHalf(Mix64(i)));
    ASSERT_TRUE(small.FindOrInsertStaggered(Mix64(i), i, keys.data(), 1, 2).second);
  }
  EXPECT_EQ(small.capacity(), size_t{4096});  // grown at 1025 of 2048 (load 1/2)
}

// Sixteen bands filled together, one key each per document, as
// LshIndex::Insert fills them: with FindOrInsertStaggered their 128 shards
// grow at fewer shared inserts than at load 1/2 (where they grew within a
// few thousand inserts of each other, several at one), never to more
// capacity, and every key stays found.
struct StaggerCount {
  size_t growths = 0;         // shard doublings from 2^14 entries on
  size_t shared_inserts = 0;  // inserts with two or more of them
  size_t capacity = 0;        // of all tables at the end
  // Each should stay 0 (counted, not an EXPECT per insert: 4M inserts).
  size_t not_inserted = 0;  // FindOrInsert* found the new key
  size_t over_9_16 = 0;     // inserts that left a table more than 9/16 full
  size_t lost = 0;          // keys not found, or found at another slot
};

StaggerCount FillBandsTogether(bool staggered) {
  constexpr size_t kBands = 16;
  constexpr uint32_t kDocuments = 1 << 18;
  std::vector<ShardedBandTable> tables(kBands);
  std::vector<std::vector<uint32_t>> keys(kBands);
  std::vector<size_t> capacity(kBands);
  for (size_t b = 0; b < kBands; ++b) capacity[b] = tables[b].capacity();
  StaggerCount count;
  for (uint32_t i = 0; i < kDocuments; ++i) {
    size_t grown = 0;
    for (size_t b = 0; b < kBands; ++b) {
      const uint64_t key = Mix64(i * kBands + b);
      keys[b].push_back(ShardedBandTable::HighHalf(key));
      const auto [pos, inserted] =
          staggered ? tables[b].FindOrInsertStaggered(key, i, keys[b].data(), b, kBands)
                    : tables[b].FindOrInsert(key, i, keys[b].data());
      if (!inserted) ++count.not_inserted;
      const size_t now = tables[b].capacity();
      if (now - capacity[b] >= size_t{1} << 14) ++grown;
      capacity[b] = now;
      if (16 * tables[b].size() > 9 * now) ++count.over_9_16;
    }
    count.growths += grown;
    if (grown >= 2) ++count.shared_inserts;
  }
  for (size_t b = 0; b < kBands; ++b) {
    count.capacity += capacity[b];
    for (uint32_t i = 0; i < kDocuments; ++i) {
      const size_t pos = tables[b].Find(Mix64(i * kBands + b), keys[b].data());
      if (pos == ShardedBandTable::kNotFound || tables[b].SlotAt(pos) != i) ++count.lost;
    }
  }
  return count;
}

TEST(ShardedBandTableTest, StaggeredShardsGrowApart) {
  const StaggerCount staggered = FillBandsTogether(true);
  const StaggerCount at_half = FillBandsTogether(false);
  std::printf("growths %zu shared inserts %zu capacity %zu (at load 1/2: %zu, %zu, %zu)\n",
              staggered.growths, staggered.shared_inserts, staggered.capacity, at_half.growths,
              at_half.shared_inserts, at_half.capacity);
  // 2^15 entries a shard: 2^14 -> 2^15 -> 2^16 for all 128 (2^16 -> 2^17
  // at 2^18 documents for about half of them at load 1/2; staggered, only
  // a few, those of the lowest steps: 258 = 2 * 128 + 2).
  EXPECT_GE(staggered.growths, 16 * ShardedBandTable::kNumShards * 2);
  EXPECT_LE(staggered.capacity, at_half.capacity);
  EXPECT_LT(staggered.shared_inserts * 2, at_half.shared_inserts);
  for (const StaggerCount& count : {staggered, at_half}) {
    EXPECT_EQ(count.not_inserted, 0u);
    EXPECT_EQ(count.over_9_16, 0u);
    EXPECT_EQ(count.lost, 0u);
  }
}

}  // namespace
}  // namespace neardup::internal
