// SortUnique, MergeUnique and MergeUniqueInPlace (candidate_runs.h)
// against an oracle: std::sort + std::unique of the same pairs, on random inputs of both of
// SortUnique's paths (radix below 2^32 documents, std::sort above or for
// short lists), empty lists and runs, runs out of order and pairs outside
// the documents (DataLoss).
#include "candidate_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace neardup::mpi {
namespace {

std::vector<CandidatePair> Oracle(std::vector<CandidatePair> pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// `count` pairs a < b of documents below `limit`, with repeats (a pair
// sharing several bands is found several times).
std::vector<CandidatePair> RandomPairs(std::mt19937_64& rng, size_t count, uint64_t limit) {
  std::uniform_int_distribution<uint64_t> doc(0, limit - 2);
  std::vector<CandidatePair> pairs;
  while (pairs.size() < count) {
    if (!pairs.empty() && rng() % 4 == 0) {
      pairs.push_back(pairs[rng() % pairs.size()]);
      continue;
    }
    const uint64_t a = doc(rng);
    std::uniform_int_distribution<uint64_t> later(a + 1, limit - 1);
    pairs.push_back({a, later(rng)});
  }
  return pairs;
}

std::string_view Bytes(const std::vector<CandidatePair>& pairs) {
  return {reinterpret_cast<const char*>(pairs.data()), pairs.size() * sizeof(CandidatePair)};
}

TEST(MpiCandidateRunsTest, SortUniqueMatchesSortAndUnique) {
  std::mt19937_64 rng(15);
  // Document limits for the radix path (1 bit to 2^32) and the std::sort
  // path (above 2^32); sizes below and above the 64 where the radix sort
  // starts.
  for (uint64_t limit : {uint64_t{2}, uint64_t{3}, uint64_t{1000}, uint64_t{1} << 20,
                         uint64_t{1} << 32, (uint64_t{1} << 32) + 1, uint64_t{1} << 62}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{63}, size_t{64}, size_t{65},
                         size_t{1000}, size_t{50000}}) {
      const std::vector<CandidatePair> pairs = RandomPairs(rng, count, limit);
      std::vector<CandidatePair> sorted = pairs;
      SortUnique(&sorted);
      EXPECT_EQ(sorted, Oracle(pairs)) << "limit " << limit << ", " << count << " pairs";
    }
  }
}

// One StageBlock for lists of growing, shrinking and empty sizes, on both
// paths: each list as sorted alone, whatever the block held before (here
// first a stage's stale bytes, as band_groups.cc's records leave them).
TEST(MpiCandidateRunsTest, SortUniqueWithKeptScratch) {
  std::mt19937_64 rng(19);
  StageBlock scratch;
  const std::span<uint64_t> stale = scratch.Take<uint64_t>(150000);
  std::fill(stale.begin(), stale.end(), UINT64_MAX);
  for (size_t count : {size_t{50000}, size_t{70}, size_t{0}, size_t{90000}, size_t{1000}}) {
    for (uint64_t limit : {uint64_t{1} << 20, uint64_t{1} << 40, uint64_t{5000}}) {
      const std::vector<CandidatePair> pairs = RandomPairs(rng, count, limit);
      std::vector<CandidatePair> sorted = pairs;
      SortUnique(&sorted, &scratch);
      EXPECT_EQ(sorted, Oracle(pairs)) << "limit " << limit << ", " << count << " pairs";
    }
  }
}

TEST(MpiCandidateRunsTest, SortUniqueOfTheLargestDocuments) {
  // Documents at 2^32 - 1 (32 bits: the radix path) and 2^32 (33: std::sort).
  for (uint64_t top : {(uint64_t{1} << 32) - 1, uint64_t{1} << 32}) {
    std::vector<CandidatePair> pairs;
    for (uint64_t i = 0; i < 100; ++i) pairs.push_back({top - 1 - i % 7, top - i % 3});
    for (uint64_t i = 0; i < 100; ++i) pairs.push_back({i, top});
    std::vector<CandidatePair> sorted = pairs;
    SortUnique(&sorted);
    EXPECT_EQ(sorted, Oracle(pairs)) << "top " << top;
  }
}

TEST(MpiCandidateRunsTest, MergeUniqueMatchesSortAndUnique) {
  std::mt19937_64 rng(16);
  for (size_t num_runs : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{9}}) {
    for (uint64_t limit : {uint64_t{4}, uint64_t{100}, uint64_t{1} << 40}) {
      std::vector<std::vector<CandidatePair>> lists;
      std::vector<CandidatePair> all;
      for (size_t r = 0; r < num_runs; ++r) {
        // Some runs empty; the others overlap (pairs found by two ranks).
        const size_t count = rng() % 3 == 0 ? 0 : rng() % 2000;
        lists.push_back(Oracle(RandomPairs(rng, count, limit)));
        all.insert(all.end(), lists.back().begin(), lists.back().end());
      }
      std::vector<std::string_view> runs;
      for (const std::vector<CandidatePair>& list : lists) runs.push_back(Bytes(list));
      Result<std::vector<CandidatePair>> merged = MergeUnique(runs, limit);
      ASSERT_TRUE(merged.ok()) << merged.status().ToString();
      EXPECT_EQ(*merged, Oracle(all)) << num_runs << " runs, limit " << limit;
    }
  }
}

// MergeUnique's contract only: the merged block has the spare capacity
// asked for beyond the runs' pairs (distinct runs: no repeats to make
// room). Whether MinHashPairs keeps that capacity up to the split by cost's
// in-place merge is not pinned here.
TEST(MpiCandidateRunsTest, MergeUniqueLeavesTheSpareCapacityAskedFor) {
  std::vector<CandidatePair> first;
  std::vector<CandidatePair> second;
  for (uint64_t i = 0; i < 1000; ++i) (i % 2 == 0 ? first : second).push_back({i, i + 1});
  const std::vector<std::string_view> runs = {
      std::string_view(reinterpret_cast<const char*>(first.data()),
                       first.size() * sizeof(CandidatePair)),
      std::string_view(reinterpret_cast<const char*>(second.data()),
                       second.size() * sizeof(CandidatePair))};
  Result<std::vector<CandidatePair>> merged = MergeUnique(runs, 1001, /*spare_quarter=*/true);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), 1000u);
  EXPECT_GE(merged->capacity(), 1250u);
}

// The in-place merge gives MergeUnique's list in the list's own block
// when its capacity holds every run's pairs (overlapping runs, the list
// larger or smaller than the others, empty runs), and leaves the list
// untouched with false when it does not.
TEST(MpiCandidateRunsTest, MergeUniqueInPlaceMatchesSortAndUnique) {
  std::mt19937_64 rng(20);
  for (size_t num_others : {size_t{0}, size_t{1}, size_t{2}, size_t{4}}) {
    for (uint64_t limit : {uint64_t{4}, uint64_t{100}, uint64_t{1} << 40}) {
      for (size_t own : {size_t{0}, size_t{1}, size_t{50}, size_t{3000}}) {
        std::vector<std::vector<CandidatePair>> lists;
        std::vector<CandidatePair> list = Oracle(RandomPairs(rng, own, limit));
        std::vector<CandidatePair> all = list;
        size_t others_size = 0;
        for (size_t r = 0; r < num_others; ++r) {
          const size_t count = rng() % 3 == 0 ? 0 : rng() % 2000;
          lists.push_back(Oracle(RandomPairs(rng, count, limit)));
          all.insert(all.end(), lists.back().begin(), lists.back().end());
          others_size += lists.back().size();
        }
        std::vector<std::string_view> others;
        for (const std::vector<CandidatePair>& other : lists) others.push_back(Bytes(other));
        const std::string where = std::to_string(num_others) + " others, limit " +
                                  std::to_string(limit) + ", " + std::to_string(own) + " own";
        // One pair short of the room needed (where any is needed): untouched.
        if (list.size() + others_size > 0) {
          std::vector<CandidatePair> small = list;
          small.shrink_to_fit();
          small.reserve(list.size() + others_size - 1);
          if (small.capacity() < list.size() + others_size) {
            Result<bool> merged = MergeUniqueInPlace(&small, others, limit);
            ASSERT_TRUE(merged.ok()) << merged.status().ToString();
            EXPECT_FALSE(*merged) << where;
            EXPECT_EQ(small, list) << where;
          }
        }
        list.reserve(list.size() + others_size);
        const CandidatePair* block = list.data();
        Result<bool> merged = MergeUniqueInPlace(&list, others, limit);
        ASSERT_TRUE(merged.ok()) << merged.status().ToString();
        EXPECT_TRUE(*merged) << where;
        EXPECT_EQ(list, Oracle(all)) << where;
        if (block != nullptr) {
          EXPECT_EQ(list.data(), block) << where;  // no fresh block
        }
      }
    }
  }
}

// With spare_quarter (the last band round's list, which the split by cost
// may add to) in place only where a quarter more than the pairs in hand
// fits after the merge; else false, untouched, for MergeUnique's block.
TEST(MpiCandidateRunsTest, MergeUniqueInPlaceKeepsAQuarterSpare) {
  std::mt19937_64 rng(15);
  const std::vector<CandidatePair> own = Oracle(RandomPairs(rng, 400, 1000));
  const std::vector<CandidatePair> other = Oracle(RandomPairs(rng, 400, 1000));
  const std::vector<std::string_view> others = {Bytes(other)};
  const size_t pairs = own.size() + other.size();
  const std::vector<CandidatePair> all = Oracle([&] {
    std::vector<CandidatePair> both = own;
    both.insert(both.end(), other.begin(), other.end());
    return both;
  }());
  for (const size_t room : {pairs, pairs + pairs / 4 - 1, pairs + pairs / 4}) {
    for (const bool spare_quarter : {false, true}) {
      std::vector<CandidatePair> list = own;
      list.shrink_to_fit();
      list.reserve(room);
      const size_t capacity = list.capacity();
      Result<bool> merged = MergeUniqueInPlace(&list, others, 1000, spare_quarter);
      ASSERT_TRUE(merged.ok()) << merged.status().ToString();
      const std::string where =
          "room " + std::to_string(room) + ", spare_quarter " + std::to_string(spare_quarter);
      const bool fits = capacity >= pairs + (spare_quarter ? pairs / 4 : 0);
      EXPECT_EQ(*merged, fits) << where;
      if (fits) {
        EXPECT_EQ(list, all) << where;
        if (spare_quarter) {
          EXPECT_GE(list.capacity() - list.size(), list.size() / 4) << where;
        }
      } else {
        EXPECT_EQ(list, own) << where;
      }
    }
  }
}

#if defined(__linux__)
// The repeats' slots past the union (written by the merge) are not left
// resident: every whole page there is given back.
TEST(MpiCandidateRunsTest, MergeUniqueInPlaceReleasesTheRepeatsPages) {
  std::vector<CandidatePair> pairs;
  for (uint64_t i = 0; i < 200'000; ++i) pairs.push_back({i, i + 1});
  std::vector<CandidatePair> list = pairs;
  list.shrink_to_fit();
  list.reserve(2 * pairs.size());
  const std::vector<std::string_view> others = {Bytes(pairs)};  // every pair a repeat
  Result<bool> merged = MergeUniqueInPlace(&list, others, 300'000);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_TRUE(*merged);
  EXPECT_EQ(list, pairs);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first =
      (reinterpret_cast<uintptr_t>(list.data() + list.size()) + page - 1) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(list.data() + 2 * pairs.size()) / page * page;
  ASSERT_LT(first, last);
  std::vector<unsigned char> resident((last - first) / page);
  ASSERT_EQ(mincore(reinterpret_cast<void*>(first), last - first, resident.data()), 0);
  size_t kept = 0;
  for (unsigned char flags : resident) kept += flags & 1;
  EXPECT_EQ(kept, 0u) << "of " << resident.size() << " pages";
}
#endif

// Runs out of order and pairs outside the documents are DataLoss in place
// too, in *list itself as in another run.
TEST(MpiCandidateRunsTest, MergeUniqueInPlaceChecksEveryRun) {
  const std::vector<CandidatePair> good = {{1, 2}, {2, 3}, {4, 9}};
  const std::vector<std::vector<CandidatePair>> bad_runs = {
      {{2, 3}, {1, 2}}, {{1, 2}, {5, 6}, {4, 7}}, {{1, 10}}, {{2, 2}}, {{5, 4}}};
  for (const std::vector<CandidatePair>& bad : bad_runs) {
    for (bool bad_is_own : {false, true}) {
      std::vector<CandidatePair> list = bad_is_own ? bad : good;
      const std::vector<CandidatePair>& other = bad_is_own ? good : bad;
      list.reserve(list.size() + other.size());
      const std::vector<std::string_view> others = {Bytes(other)};
      Result<bool> merged = MergeUniqueInPlace(&list, others, 10);
      ASSERT_FALSE(merged.ok());
      EXPECT_EQ(merged.status().code(), StatusCode::kDataLoss) << merged.status().ToString();
    }
  }
}

TEST(MpiCandidateRunsTest, MergeUniqueOfNothing) {
  Result<std::vector<CandidatePair>> none = MergeUnique({}, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  const std::vector<std::string_view> empty_runs = {std::string_view(), std::string_view()};
  Result<std::vector<CandidatePair>> merged = MergeUnique(empty_runs, 0);
  ASSERT_TRUE(merged.ok());
  EXPECT_TRUE(merged->empty());
}

TEST(MpiCandidateRunsTest, MergeUniqueReadsUnalignedRuns) {
  const std::vector<CandidatePair> pairs = {{1, 2}, {1, 5}, {3, 4}};
  std::string bytes = "x" + std::string(Bytes(pairs));
  const std::vector<std::string_view> runs = {std::string_view(bytes).substr(1), Bytes(pairs)};
  Result<std::vector<CandidatePair>> merged = MergeUnique(runs, 6);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(*merged, pairs);
}

TEST(MpiCandidateRunsTest, AnUnsortedRunIsDataLoss) {
  const std::vector<CandidatePair> sorted = {{1, 2}, {2, 3}, {4, 9}};
  // Out of order alone, beside a sorted run, and at the very end of a run.
  const std::vector<std::vector<CandidatePair>> bad_runs = {
      {{2, 3}, {1, 2}}, {{1, 2}, {5, 6}, {4, 7}}, {{0, 1}, {0, 3}, {0, 2}}};
  for (const std::vector<CandidatePair>& bad : bad_runs) {
    for (bool with_sorted : {false, true}) {
      std::vector<std::string_view> runs = {Bytes(bad)};
      if (with_sorted) runs.push_back(Bytes(sorted));
      Result<std::vector<CandidatePair>> merged = MergeUnique(runs, 10);
      ASSERT_FALSE(merged.ok());
      EXPECT_EQ(merged.status().code(), StatusCode::kDataLoss) << merged.status().ToString();
    }
  }
}

TEST(MpiCandidateRunsTest, APairOutsideTheDocumentsIsDataLoss) {
  // A peer's pair is checked against the document count before any stage
  // indexes by it: b at or past the count (past a 64-document word too),
  // a == b and a > b, alone, beside a good run and after good pairs.
  const uint64_t num_documents = 10;
  const std::vector<CandidatePair> good = {{1, 2}, {2, 3}, {4, 9}};
  const std::vector<std::vector<CandidatePair>> bad_runs = {
      {{1, 10}}, {{0, 1}, {3, 1000}}, {{2, 2}}, {{5, 4}}, {{0, 1}, {9, uint64_t{1} << 40}}};
  for (const std::vector<CandidatePair>& bad : bad_runs) {
    for (bool with_good : {false, true}) {
      std::vector<std::string_view> runs = {Bytes(bad)};
      if (with_good) runs.push_back(Bytes(good));
      Result<std::vector<CandidatePair>> merged = MergeUnique(runs, num_documents);
      ASSERT_FALSE(merged.ok());
      EXPECT_EQ(merged.status().code(), StatusCode::kDataLoss) << merged.status().ToString();
      EXPECT_NE(merged.status().message().find("outside the 10 documents"), std::string::npos)
          << merged.status().ToString();
    }
  }
  // The last document is in range.
  const std::vector<std::string_view> good_runs = {Bytes(good)};
  Result<std::vector<CandidatePair>> merged = MergeUnique(good_runs, num_documents);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(*merged, good);
}

}  // namespace
}  // namespace neardup::mpi
