// StageBlock (stage_block.h): a block handed from stage to stage keeps its
// address while its capacity holds the next stage's list, is replaced by a
// larger one (with a quarter more room) when it does not, and serves lists
// of different types one after another, each written before it is read.
#include "stage_block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <span>

namespace neardup::mpi {
namespace {

struct Record {  // an aggregate as band_groups.cc's records
  uint32_t band = 0;
  uint64_t key = 0;
  uint64_t doc = 0;
};

TEST(MpiStageBlockTest, EmptyUntilTaken) {
  StageBlock block;
  EXPECT_EQ(block.capacity(), 0u);
  EXPECT_TRUE(block.Take<uint64_t>(0).empty());
  EXPECT_EQ(block.capacity(), 0u);
}

TEST(MpiStageBlockTest, HandsTheSameBlockOnWhileItsCapacityHolds) {
  StageBlock block;
  const std::span<Record> records = block.Take<Record>(1000);
  ASSERT_EQ(records.size(), 1000u);
  const size_t capacity = block.capacity();
  EXPECT_EQ(capacity, 1000 * sizeof(Record) * 5 / 4);
  for (size_t i = 0; i < records.size(); ++i) records[i] = {1, i, 2 * i};
  // The next stage's lists of another type, within the capacity: the same
  // block, no fresh one.
  const std::span<uint64_t> keys = block.Take<uint64_t>(capacity / sizeof(uint64_t));
  EXPECT_EQ(static_cast<void*>(keys.data()), static_cast<void*>(records.data()));
  EXPECT_EQ(block.capacity(), capacity);
  std::iota(keys.begin(), keys.end(), uint64_t{7});
  EXPECT_EQ(keys.front(), 7u);
  EXPECT_EQ(keys.back(), 7 + keys.size() - 1);
  const std::span<char> bytes = block.Take<char>(10);
  EXPECT_EQ(static_cast<void*>(bytes.data()), static_cast<void*>(records.data()));
}

TEST(MpiStageBlockTest, GrowsWithAQuarterMoreRoom) {
  StageBlock block;
  block.Take<uint64_t>(100);
  const std::span<uint64_t> larger = block.Take<uint64_t>(1000);
  ASSERT_EQ(larger.size(), 1000u);
  EXPECT_EQ(block.capacity(), 1000 * sizeof(uint64_t) * 5 / 4);
  // Every element of the larger block can be written and read back.
  std::iota(larger.begin(), larger.end(), uint64_t{0});
  uint64_t sum = 0;
  for (uint64_t value : larger) sum += value;
  EXPECT_EQ(sum, 999u * 1000u / 2);
  block.Release();
  EXPECT_EQ(block.capacity(), 0u);
}

}  // namespace
}  // namespace neardup::mpi
