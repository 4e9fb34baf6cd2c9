#include "index/lsh_segmented_array.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace neardup::internal {
namespace {

using Ids = SegmentedArray<uint64_t>;

TEST(SegmentedArrayTest, SegmentsAreFourMiB) {
  EXPECT_EQ(Ids::kSegmentSize * sizeof(uint64_t), size_t{4} << 20);
  EXPECT_EQ(SegmentedArray<uint32_t>::kSegmentSize * sizeof(uint32_t), size_t{4} << 20);
}

// Growth across segment boundaries, up and down, against a vector: every
// element stays where it was written, and popping back across a boundary
// then pushing again allocates nothing new (the high-water capacity).
TEST(SegmentedArrayTest, MatchesVectorAcrossSegmentBoundaries) {
  Ids ids;
  std::vector<uint64_t> oracle;
  const size_t n = 2 * Ids::kSegmentSize + 5;
  for (size_t i = 0; i < n; ++i) {
    ids.push_back(i * 3 + 1);
    oracle.push_back(i * 3 + 1);
  }
  ASSERT_EQ(ids.size(), n);
  for (size_t i : {size_t{0}, Ids::kSegmentSize - 1, Ids::kSegmentSize, Ids::kSegmentSize + 1,
                   2 * Ids::kSegmentSize - 1, 2 * Ids::kSegmentSize, n - 1}) {
    EXPECT_EQ(ids[i], oracle[i]) << i;
  }
  for (size_t i = 0; i < n; i += 4099) EXPECT_EQ(ids[i], oracle[i]) << i;
  const size_t capacity = ids.capacity();
  EXPECT_EQ(capacity, 3 * Ids::kSegmentSize);  // later segments are allocated whole

  // Down across two boundaries and up again: nothing reallocated.
  ids.truncate(Ids::kSegmentSize - 2);
  oracle.resize(Ids::kSegmentSize - 2);
  EXPECT_EQ(ids.capacity(), capacity);
  for (size_t i = 0; i < 10; ++i) {
    ids.push_back(7 * i);
    oracle.push_back(7 * i);
    ids[i] += 1;
    oracle[i] += 1;
  }
  for (size_t i = 0; i < 3 * Ids::kSegmentSize / 2; ++i) {
    ids.pop_back();
    oracle.pop_back();
    if (oracle.empty()) break;
  }
  ASSERT_EQ(ids.size(), oracle.size());
  ids.push_back(42);
  oracle.push_back(42);
  EXPECT_EQ(ids.capacity(), capacity);
  for (size_t i = 0; i < oracle.size(); ++i) ASSERT_EQ(ids[i], oracle[i]) << i;
  EXPECT_GE(ids.MemoryBytes(), capacity * sizeof(uint64_t));
}

// The first segment grows like a vector (a small array stays small).
TEST(SegmentedArrayTest, SmallArrayStaysSmall) {
  Ids ids;
  for (uint64_t i = 0; i < 100; ++i) ids.push_back(i);
  EXPECT_LT(ids.capacity(), 1024u);
  const std::vector<uint64_t> more{5, 6, 7};
  ids.append(more.begin(), more.end());
  EXPECT_EQ(ids.size(), 103u);
  EXPECT_EQ(ids[102], 7u);
  EXPECT_LT(ids.capacity(), 1024u);
}

TEST(SegmentedArrayTest, ReserveAllocatesEverythingUpFront) {
  for (size_t n : {size_t{1}, size_t{1000}, Ids::kSegmentSize, Ids::kSegmentSize + 1,
                   3 * Ids::kSegmentSize - 7}) {
    Ids ids;
    ids.reserve(n);
    const size_t capacity = ids.capacity();
    EXPECT_GE(capacity, n);
    std::vector<uint64_t> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = i ^ 0x5555;
    ids.append(values.begin(), values.end());
    EXPECT_EQ(ids.capacity(), capacity) << n;
    EXPECT_EQ(ids[n - 1], values[n - 1]);
    EXPECT_EQ(ids[n / 2], values[n / 2]);
  }
}

// After a reserve that is not a power of two, appending past it grows the
// first segment to a power of two and never past a segment (a plain vector
// would double 300,000 to 600,000 > kSegmentSize and copy 2.4 MB).
TEST(SegmentedArrayTest, FirstSegmentNeverOvershootsASegment) {
  for (size_t n : {size_t{3}, size_t{1000}, Ids::kSegmentSize / 2 + Ids::kSegmentSize / 4}) {
    Ids ids;
    ids.reserve(n);
    EXPECT_TRUE(std::has_single_bit(ids.capacity())) << n;
    EXPECT_LE(ids.capacity(), Ids::kSegmentSize) << n;
    for (size_t i = 0; i < Ids::kSegmentSize; ++i) {
      ids.push_back(i);
      ASSERT_LE(ids.capacity(), Ids::kSegmentSize) << n << " " << i;
    }
    EXPECT_EQ(ids.capacity(), Ids::kSegmentSize) << n;
    ids.push_back(0);
    EXPECT_EQ(ids.capacity(), 2 * Ids::kSegmentSize) << n;
  }
}

// A moved-from array is empty, not a size without storage.
TEST(SegmentedArrayTest, MovedFromIsEmpty) {
  Ids ids;
  for (uint64_t i = 0; i < 1000; ++i) ids.push_back(i);
  Ids moved(std::move(ids));
  EXPECT_EQ(moved.size(), 1000u);
  EXPECT_EQ(moved[999], 999u);
  EXPECT_EQ(ids.size(), 0u);  // NOLINT(bugprone-use-after-move): what is tested
  ids.push_back(7);
  EXPECT_EQ(ids[0], 7u);
  Ids assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.size(), 1000u);
  EXPECT_EQ(moved.size(), 0u);  // NOLINT(bugprone-use-after-move)
}

// A huge-page allocation with an offset starts that far into a 2 MiB page,
// and the vectors keep their allocator (offset) through growth, moves and
// swaps (how LshIndex staggers its bands' page faults).
TEST(HugePageAllocatorTest, OffsetStartsIntoTheFirstHugePage) {
  const size_t offset = 3 * 4096 + 64;
  HugePageVector<uint64_t> large{HugePageAllocator<uint64_t>(offset)};
  large.reserve(kHugePageMinAllocation / sizeof(uint64_t));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, offset);
  for (uint64_t i = 0; i < 3 * kHugePageBytes / sizeof(uint64_t); ++i) large.push_back(i);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, offset);
  EXPECT_EQ(large[12345], 12345u);
  HugePageVector<uint64_t> moved = std::move(large);
  EXPECT_EQ(moved.get_allocator().offset_bytes(), offset);
  HugePageVector<uint64_t> other;
  other.swap(moved);
  EXPECT_EQ(other.get_allocator().offset_bytes(), offset);
  EXPECT_EQ(other.back(), 3 * kHugePageBytes / sizeof(uint64_t) - 1);
  // Small allocations ignore the offset.
  HugePageVector<uint32_t> small{HugePageAllocator<uint32_t>(offset)};
  small.assign(10, 7u);
  EXPECT_EQ(small[9], 7u);
}

}  // namespace
}  // namespace neardup::internal
