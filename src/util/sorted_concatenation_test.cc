// SortedConcatenation must equal joining the lists and sorting the whole,
// whatever the lists' sizes, the keys' range and skew, and the thread count;
// non-const lists are freed, const ones left as they were.
#include "util/sorted_concatenation.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using Pair = std::pair<uint64_t, uint64_t>;

uint64_t FirstOf(const Pair& pair) { return pair.first; }

std::vector<Pair> JoinedAndSorted(const std::vector<std::vector<Pair>>& lists) {
  std::vector<Pair> all;
  for (const std::vector<Pair>& list : lists) all.insert(all.end(), list.begin(), list.end());
  std::sort(all.begin(), all.end());
  return all;
}

// `count` lists of random sizes up to `max_size`, first members below
// `key_limit` (0: any 64-bit value), second members any.
std::vector<std::vector<Pair>> RandomLists(uint64_t seed, size_t count, size_t max_size,
                                           uint64_t key_limit) {
  SplitMix64 rng(seed);
  std::vector<std::vector<Pair>> lists(count);
  for (std::vector<Pair>& list : lists) {
    const size_t size = rng.Next() % (max_size + 1);
    for (size_t i = 0; i < size; ++i) {
      const uint64_t key = key_limit == 0 ? rng.Next() : rng.Next() % key_limit;
      list.emplace_back(key, rng.Next() % 1000);
    }
  }
  return lists;
}

TEST(SortedConcatenationTest, EqualsTheJoinedListsSortedForAnyShapeAndThreadCount) {
  struct Shape {
    size_t lists, max_size;
    uint64_t key_limit;
  };
  // Many elements over few lists (thousands of buckets), many small lists
  // (few buckets), keys of every width, all keys equal (one bucket: the
  // skewed path), keys 0 and 1 only, empty lists among full ones, and one
  // bucket for keys of any width (2^63 and above: no shift by 64).
  const Shape shapes[] = {{8, 60000, 1000000}, {500, 50, 100000}, {16, 20000, 0},
                          {6, 30000, 1},       {6, 30000, 2},     {40, 8000, uint64_t{1} << 40},
                          {3, 0, 10},          {1, 1, 10},        {3, 100, 0}};
  uint64_t seed = 1;
  for (const Shape& shape : shapes) {
    const std::vector<std::vector<Pair>> lists =
        RandomLists(seed++, shape.lists, shape.max_size, shape.key_limit);
    const std::vector<Pair> expected = JoinedAndSorted(lists);
    for (int threads : {1, 2, 3}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const std::vector<Pair> got =
          SortedConcatenation(std::span<const std::vector<Pair>>(lists), FirstOf);
      EXPECT_EQ(got, expected) << shape.lists << " lists of up to " << shape.max_size
                               << ", keys below " << shape.key_limit << ", " << threads
                               << " threads";
    }
  }
}

TEST(SortedConcatenationTest, TheLargestKeysLandInTheLastBucket) {
  std::vector<std::vector<Pair>> lists(4);
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  for (uint64_t i = 0; i < 40000; ++i) {
    lists[i % 4].emplace_back(i % 3 == 0 ? top - i : i * 977, i);
  }
  EXPECT_EQ(SortedConcatenation(std::span<const std::vector<Pair>>(lists), FirstOf),
            JoinedAndSorted(lists));
}

TEST(SortedConcatenationTest, OneBucketTakesKeysOfTwoToTheSixtyThreeAndAbove) {
  const uint64_t high = uint64_t{1} << 63;
  std::vector<std::vector<Pair>> lists = {{{high + 1, 0}, {high, 5}}, {{~uint64_t{0}, 1}, {3, 2}}};
  EXPECT_EQ(SortedConcatenation(std::span<const std::vector<Pair>>(lists), FirstOf),
            JoinedAndSorted(lists));
}

TEST(SortedConcatenationTest, AnOrderOtherThanOperatorLessIsKept) {
  // Ordered by the first member, then the second descending: the key stays
  // the first member.
  std::vector<std::vector<Pair>> lists = RandomLists(9, 10, 20000, 5000);
  const auto less = [](const Pair& x, const Pair& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  };
  std::vector<Pair> expected;
  for (const std::vector<Pair>& list : lists)
    expected.insert(expected.end(), list.begin(), list.end());
  std::sort(expected.begin(), expected.end(), less);
  EXPECT_EQ(SortedConcatenation(std::span<const std::vector<Pair>>(lists), FirstOf, less),
            expected);
}

TEST(SortedConcatenationTest, NonConstListsAreFreedAndConstOnesKept) {
  std::vector<std::vector<Pair>> lists = RandomLists(4, 12, 30000, 1u << 20);
  const std::vector<std::vector<Pair>> copy = lists;
  const std::vector<Pair> expected = JoinedAndSorted(lists);
  EXPECT_EQ(SortedConcatenation(std::span<const std::vector<Pair>>(lists), FirstOf), expected);
  EXPECT_EQ(lists, copy);
  EXPECT_EQ(SortedConcatenation(std::span<std::vector<Pair>>(lists), FirstOf), expected);
  for (const std::vector<Pair>& list : lists) {
    EXPECT_TRUE(list.empty());
    EXPECT_EQ(list.capacity(), 0u);
  }
  std::vector<std::vector<Pair>> none;
  EXPECT_TRUE(SortedConcatenation(std::span<std::vector<Pair>>(none), FirstOf).empty());
}

}  // namespace
}  // namespace neardup::internal
