#include "index/lsh_slot_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// Oracle: a std::map from key to slot. Keys share tags and home positions
// deliberately (few distinct high bits) to exercise long runs, wrap-around
// and backward-shift deletion.
// Also the oracle test of ShardedSlotTable (below): with few distinct high
// bits its keys fall into few shards, crowded within each.
template <typename Table>
void ExpectMatchesMapUnderRandomInsertAndErase() {
  for (uint64_t key_bits : {3, 8, 40}) {
    SplitMix64 rng(key_bits);
    Table table;
    std::map<uint64_t, uint32_t> oracle;
    std::vector<uint64_t> key_of_slot;
    const auto make_key = [&] {
      const uint64_t x = rng.Next();
      // Only the top key_bits of the tag vary: tags collide often and homes
      // crowd together (runs wrap around the end of the table).
      return (x >> (64 - key_bits) << (64 - key_bits)) | (x & 0xFFFFFFFFu);
    };
    for (int step = 0; step < 4000; ++step) {
      if (oracle.empty() || rng.Next() % 3 != 0) {
        const uint64_t key = make_key();
        const uint32_t slot = static_cast<uint32_t>(key_of_slot.size());
        key_of_slot.push_back(key);
        const auto [pos, inserted] =
            table.FindOrInsert(key, slot, [&](uint32_t s) { return key_of_slot[s] == key; });
        EXPECT_EQ(inserted, !oracle.contains(key));
        if (inserted) oracle[key] = slot;
        EXPECT_EQ(table.SlotAt(pos), oracle[key]);
      } else {
        auto it = oracle.begin();
        std::advance(it, rng.Next() % oracle.size());
        const uint64_t key = it->first;
        const size_t pos = table.Find(key, [&](uint32_t s) { return key_of_slot[s] == key; });
        ASSERT_NE(pos, SlotTable::kNotFound);
        EXPECT_EQ(table.SlotAt(pos), it->second);
        table.EraseAt(pos);
        oracle.erase(it);
      }
      ASSERT_EQ(table.size(), oracle.size());
      ASSERT_GE(table.capacity(), 2 * table.size());
    }
    for (const auto& [key, slot] : oracle) {
      const size_t pos = table.Find(key, [&](uint32_t s) { return key_of_slot[s] == key; });
      ASSERT_NE(pos, SlotTable::kNotFound);
      EXPECT_EQ(table.SlotAt(pos), slot);
    }
    // Erased keys are gone.
    for (size_t s = 0; s < key_of_slot.size(); ++s) {
      const uint64_t key = key_of_slot[s];
      if (oracle.contains(key)) continue;
      EXPECT_EQ(table.Find(key, [&](uint32_t other) { return key_of_slot[other] == key; }),
                SlotTable::kNotFound);
    }
  }
}

TEST(SlotTableTest, MatchesMapUnderRandomInsertAndErase) {
  ExpectMatchesMapUnderRandomInsertAndErase<SlotTable>();
}

TEST(ShardedSlotTableTest, MatchesMapUnderRandomInsertAndErase) {
  ExpectMatchesMapUnderRandomInsertAndErase<ShardedSlotTable>();
}

// Each shard grows on its own: inserting ids one at a time, no insert grows
// the whole table's capacity by more than one shard's doubling, and the
// positions returned name the right entries across shards.
TEST(ShardedSlotTableTest, ShardsGrowOneAtATime) {
  ShardedSlotTable table;
  std::vector<uint64_t> keys;
  size_t capacity = table.capacity();
  EXPECT_EQ(capacity, ShardedSlotTable::kNumShards * 16);
  size_t growths = 0;
  for (uint32_t i = 0; i < 200000; ++i) {
    keys.push_back(Mix64(i));
    ASSERT_TRUE(table.FindOrInsert(keys[i], i, [](uint32_t) { return false; }).second);
    const size_t now = table.capacity();
    if (now != capacity) {
      ++growths;
      // One shard doubled: it was at most 2 * (its share + slack) entries.
      EXPECT_LE(now - capacity, capacity / ShardedSlotTable::kNumShards * 4) << "insert " << i;
      capacity = now;
    }
  }
  EXPECT_EQ(table.size(), keys.size());
  EXPECT_GE(growths, ShardedSlotTable::kNumShards *
                         8);  // 25,000 ids a shard: 16 -> 65,536 entries, 12 doublings
  for (uint32_t i = 0; i < keys.size(); i += 97) {
    const size_t pos = table.Find(keys[i], [i](uint32_t s) { return s == i; });
    ASSERT_NE(pos, ShardedSlotTable::kNotFound);
    EXPECT_EQ(table.SlotAt(pos), i);
    table.SetSlotAt(pos, i + 1000000);
    EXPECT_EQ(table.SlotAt(table.Find(keys[i], [](uint32_t) { return true; })), i + 1000000);
    table.EraseAt(pos);
    EXPECT_EQ(table.Find(keys[i], [](uint32_t) { return true; }), ShardedSlotTable::kNotFound);
  }
}

// The 8 shards filled one id at a time (ids of Mix64, deterministic) by
// FindOrInsert and by FindOrInsertStaggered (session 18). Staggered, shard
// s doubles from 2^12 entries on at the insert that takes it past
// capacity / 2 + capacity / 16 * s / 8 entries (and at 1/2 below), exactly;
// its last doubling to 2^16 entries (at 2^14 + 256 s ids of the shard) is
// spread over more ids than at load 1/2, where the 8 came within the
// shards' chance differences of each other; no shard is bigger; every id
// is found.
TEST(ShardedSlotTableTest, StaggeredShardsGrowApart) {
  constexpr size_t kShards = ShardedSlotTable::kNumShards;
  constexpr uint32_t kIds = 150000;  // ~18,750 a shard: last step 32,768 -> 65,536
  auto fill = [&](bool staggered, std::vector<size_t>* capacity_of) {
    ShardedSlotTable table;
    std::vector<size_t> size_of(kShards, 0);
    capacity_of->assign(kShards, 16);
    std::vector<uint32_t> last_step_at(kShards, 0);  // the insert of the last doubling
    size_t capacity = table.capacity();
    size_t wrong_steps = 0;
    for (uint32_t i = 0; i < kIds; ++i) {
      const uint64_t key = Mix64(i);
      const size_t s = key >> (64 - ShardedSlotTable::kShardBits);
      const auto none = [](uint32_t) { return false; };
      const bool inserted = staggered ? table.FindOrInsertStaggered(key, i, none).second
                                      : table.FindOrInsert(key, i, none).second;
      EXPECT_TRUE(inserted) << i;
      const size_t c = (*capacity_of)[s];
      const size_t limit = c < 4096 || !staggered ? c / 2 : c / 2 + c / 16 * s / kShards;
      const bool due = size_of[s] + 1 > limit;
      ++size_of[s];
      const size_t now = table.capacity();
      if (due != (now != capacity) || (due && now - capacity != c)) ++wrong_steps;
      if (now != capacity) {
        (*capacity_of)[s] *= 2;
        if ((*capacity_of)[s] == 65536) last_step_at[s] = i;
      }
      capacity = now;
    }
    EXPECT_EQ(wrong_steps, 0u) << staggered;
    EXPECT_EQ(table.size(), kIds);
    size_t lost = 0;
    for (uint32_t i = 0; i < kIds; ++i) {
      const size_t pos = table.Find(Mix64(i), [i](uint32_t slot) { return slot == i; });
      if (pos == ShardedSlotTable::kNotFound || table.SlotAt(pos) != i) ++lost;
    }
    EXPECT_EQ(lost, 0u) << staggered;
    for (size_t s = 0; s < kShards; ++s) EXPECT_GT(last_step_at[s], 0u) << s;
    return *std::max_element(last_step_at.begin(), last_step_at.end()) -
           *std::min_element(last_step_at.begin(), last_step_at.end());
  };
  std::vector<size_t> staggered_capacity;
  std::vector<size_t> plain_capacity;
  const uint32_t staggered_span = fill(true, &staggered_capacity);
  const uint32_t plain_span = fill(false, &plain_capacity);
  // 256 s more ids of each shard: ~2,048 s inserts later for shard s.
  EXPECT_GT(staggered_span, plain_span + 8000) << plain_span;
  for (size_t s = 0; s < kShards; ++s) EXPECT_LE(staggered_capacity[s], plain_capacity[s]) << s;
}

TEST(ShardedSlotTableTest, ReserveCoversUniformHashes) {
  for (size_t n : {size_t{10}, size_t{600}, size_t{100000}}) {
    ShardedSlotTable table;
    table.Reserve(n);
    const size_t capacity = table.capacity();
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_TRUE(table.FindOrInsert(Mix64(i), i, [](uint32_t) { return false; }).second);
    }
    EXPECT_EQ(table.capacity(), capacity) << n;
    EXPECT_LE(capacity, 4 * (2 * n + ShardedSlotTable::kNumShards * 32)) << n;
  }
}

TEST(SlotTableTest, ReserveAndSetSlot) {
  SlotTable table;
  table.Reserve(1000);
  const size_t capacity = table.capacity();
  EXPECT_GE(capacity, 2000u);
  std::vector<uint64_t> keys;
  for (uint32_t i = 0; i < 1000; ++i) {
    keys.push_back(Mix64(i));
    EXPECT_TRUE(table.FindOrInsert(keys[i], i, [](uint32_t) { return false; }).second);
  }
  EXPECT_EQ(table.capacity(), capacity);
  const size_t pos = table.Find(keys[7], [](uint32_t s) { return s == 7; });
  ASSERT_NE(pos, SlotTable::kNotFound);
  table.SetSlotAt(pos, 12345);
  EXPECT_EQ(table.Find(keys[7], [](uint32_t s) { return s == 7; }), SlotTable::kNotFound);
  EXPECT_EQ(table.SlotAt(table.Find(keys[7], [](uint32_t s) { return s == 12345; })), 12345u);
  EXPECT_GE(table.MemoryBytes(), capacity * sizeof(uint64_t));
}

}  // namespace
}  // namespace neardup::internal
