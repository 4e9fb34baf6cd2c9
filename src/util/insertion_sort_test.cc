#include "util/insertion_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// A value that counts its copies: the moves an insertion sort makes.
struct Counted {
  static size_t copies;
  uint32_t v = 0;
  Counted() = default;
  explicit Counted(uint32_t value) : v(value) {}
  Counted(const Counted& other) : v(other.v) { ++copies; }
  Counted& operator=(const Counted& other) {
    v = other.v;
    ++copies;
    return *this;
  }
  bool operator>(const Counted& other) const { return v > other.v; }
};
size_t Counted::copies = 0;

std::vector<uint32_t> Values(const std::vector<Counted>& a) {
  std::vector<uint32_t> out;
  for (const Counted& c : a) out.push_back(c.v);
  return out;
}

TEST(InsertionSortTest, SortsArbitraryInput) {
  SplitMix64 rng(3);
  for (size_t n : {0, 1, 2, 3, 10, 100}) {
    std::vector<uint64_t> a(n);
    for (auto& v : a) v = rng.Next() % 16;
    std::vector<uint64_t> want = a;
    std::sort(want.begin(), want.end());
    InsertionSort(a.data(), a.size());
    EXPECT_EQ(a, want) << "n = " << n;
  }
}

// Bucket-sorted input (sorted by the top bits, any order inside a bucket of
// 4 values, repeats): both budgeted sorts sort it and return true.
TEST(InsertionSortTest, NearlySortedSortsBucketedInput) {
  SplitMix64 rng(5);
  for (size_t n : {0, 1, 2, 3, 4, 5, 64, 1000, 100000}) {
    std::vector<uint32_t> a(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<uint32_t>((i / 4) << 8) | static_cast<uint32_t>(rng.Next() % 8);
    }
    std::vector<uint32_t> want = a;
    std::sort(want.begin(), want.end());
    std::vector<uint32_t> b = a;
    EXPECT_TRUE(InsertionSortNearlySorted(a.data(), a.size())) << "n = " << n;
    EXPECT_EQ(a, want) << "n = " << n;
    EXPECT_TRUE(InsertionSortWithBudget(b.data(), b.size())) << "n = " << n;
    EXPECT_EQ(b, want) << "n = " << n;
  }
}

// Reversed input would cost n^2 / 2 moves: the budget stops it after at most
// 9n moves, false, the values permuted (none lost or duplicated).
TEST(InsertionSortTest, BudgetedSortsGiveUpOnReversedInputWithinTheirBudget) {
  for (const bool nearly_sorted : {true, false}) {
    for (size_t n : {100, 10000}) {
      std::vector<Counted> a;
      for (size_t i = 0; i < n; ++i) a.emplace_back(static_cast<uint32_t>(n - i));
      std::vector<uint32_t> want = Values(a);
      std::sort(want.begin(), want.end());
      Counted::copies = 0;
      EXPECT_FALSE(nearly_sorted ? InsertionSortNearlySorted(a.data(), a.size())
                                 : InsertionSortWithBudget(a.data(), a.size()))
          << "n = " << n;
      // 9n moves, and each step's few register copies.
      EXPECT_LE(Counted::copies, 16 * n) << "n = " << n;
      std::vector<uint32_t> got = Values(a);
      EXPECT_FALSE(std::is_sorted(got.begin(), got.end()));
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << "n = " << n;
    }
  }
}

}  // namespace
}  // namespace neardup::internal
