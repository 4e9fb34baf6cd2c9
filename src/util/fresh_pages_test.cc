// GrowFaultingInParallel is std::vector::resize with the new pages faulted
// in first: the elements it keeps and the ones it adds must be those of
// resize, above and below its threshold and at any thread count.
#include "util/fresh_pages.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace neardup::internal {
namespace {

using Pair = std::pair<uint64_t, uint64_t>;

// Elements past the threshold, so that the pages are populated.
constexpr size_t kLarge = 3 * kParallelFaultBytes / sizeof(Pair) + 123;

TEST(GrowFaultingInParallelTest, AnEmptyListGrowsToValueInitialisedElements) {
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<Pair> list;
    GrowFaultingInParallel(&list, kLarge);
    ASSERT_EQ(list.size(), kLarge);
    size_t nonzero = 0;
    for (const Pair& pair : list) nonzero += pair != Pair{0, 0};
    EXPECT_EQ(nonzero, 0u) << threads << " threads";
  }
}

TEST(GrowFaultingInParallelTest, KeepsTheElementsItHad) {
  std::vector<Pair> list;
  for (uint64_t i = 0; i < 1000; ++i) list.emplace_back(i, i * 3 + 1);
  GrowFaultingInParallel(&list, kLarge);
  ASSERT_EQ(list.size(), kLarge);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(list[i], Pair(i, i * 3 + 1)) << i;
  for (size_t i = 1000; i < kLarge; i += 4099) ASSERT_EQ(list[i], Pair(0, 0)) << i;
  EXPECT_EQ(list.back(), Pair(0, 0));
}

TEST(GrowFaultingInParallelTest, SmallGrowthsAndShrinksAreThoseOfResize) {
  std::vector<uint32_t> list = {7, 8, 9};
  GrowFaultingInParallel(&list, 5);
  EXPECT_EQ(list, (std::vector<uint32_t>{7, 8, 9, 0, 0}));
  GrowFaultingInParallel(&list, 2);
  EXPECT_EQ(list, (std::vector<uint32_t>{7, 8}));
  GrowFaultingInParallel(&list, 2);
  EXPECT_EQ(list, (std::vector<uint32_t>{7, 8}));
}

TEST(ConcatenateInParallelTest, ListsInOrderAndNonConstListsFreed) {
  // Large enough (> 16 MiB of uint64_t) for the faulting path, with empty
  // lists between.
  std::vector<std::vector<uint64_t>> lists(5);
  lists[0] = {1, 2, 3};
  lists[2].resize(3 << 20);
  for (size_t i = 0; i < lists[2].size(); ++i) lists[2][i] = i * 7;
  lists[4] = {9};
  std::vector<uint64_t> expected;
  for (const std::vector<uint64_t>& list : lists)
    expected.insert(expected.end(), list.begin(), list.end());

  const std::vector<std::vector<uint64_t>>& kept = lists;
  EXPECT_EQ(ConcatenateInParallel(std::span<const std::vector<uint64_t>>(kept)), expected);
  EXPECT_EQ(lists[2].size(), size_t{3} << 20);  // const lists are left as they were

  EXPECT_EQ(ConcatenateInParallel(std::span<std::vector<uint64_t>>(lists)), expected);
  for (const std::vector<uint64_t>& list : lists) EXPECT_EQ(list.capacity(), 0u);
  EXPECT_TRUE(ConcatenateInParallel(std::span<std::vector<uint64_t>>(lists)).empty());
}

}  // namespace
}  // namespace neardup::internal
