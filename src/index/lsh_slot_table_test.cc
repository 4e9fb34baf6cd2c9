#include "index/lsh_slot_table.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// Oracle: a std::map from key to slot. Keys share tags and home positions
// deliberately (few distinct high bits) to exercise long runs, wrap-around
// and backward-shift deletion.
TEST(SlotTableTest, MatchesMapUnderRandomInsertAndErase) {
  for (uint64_t key_bits : {3, 8, 40}) {
    SplitMix64 rng(key_bits);
    SlotTable table;
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
