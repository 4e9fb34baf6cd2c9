// ForEachFileRun (located_records.h), the grouping of a range's records by
// file that checking, page mapping and page release share: against a
// brute-force grouping of random ranges, with filters and an index map.
#include "engine/located_records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace neardup::internal {
namespace {

using FileRun = std::tuple<uint32_t, uint64_t, uint64_t>;  // file, first offset, last offset

// What ForEachFileRun must give: split [begin, end) where the file changes,
// keep the kept records of each piece, report the first and last of each
// piece that has any.
template <typename DocumentAt, typename Keep>
std::vector<FileRun> BruteForceFileRuns(const std::vector<RecordLocation>& locations, size_t begin,
                                        size_t end, DocumentAt document_at, Keep keep) {
  std::vector<FileRun> runs;
  std::vector<size_t> piece;
  auto flush = [&] {
    std::vector<size_t> kept;
    for (size_t i : piece) {
      if (keep(i)) kept.push_back(i);
    }
    if (!kept.empty()) {
      runs.emplace_back(locations[document_at(kept.front())].file,
                        locations[document_at(kept.front())].offset,
                        locations[document_at(kept.back())].offset);
    }
    piece.clear();
  };
  for (size_t i = begin; i < end; ++i) {
    if (!piece.empty() &&
        locations[document_at(piece.back())].file != locations[document_at(i)].file) {
      flush();
    }
    piece.push_back(i);
  }
  flush();
  return runs;
}

TEST(ForEachFileRunTest, AgreesWithABruteForceGrouping) {
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 300; ++trial) {
    // Records of 1-4 files, in runs of 1-5, files recurring.
    std::vector<RecordLocation> locations;
    const uint32_t num_files = 1 + random() % 4;
    while (locations.size() < 40) {
      const uint32_t file = random() % num_files;
      for (uint64_t k = 1 + random() % 5; k > 0; --k) {
        locations.push_back({file, 10 * locations.size(), 1 + random() % 9});
      }
    }
    const size_t n = locations.size();
    std::vector<size_t> order(n);  // an index map, as deferred_sketches.cc passes
    std::iota(order.begin(), order.end(), size_t{0});  // identity, or a shuffle:
    if (trial % 2 == 1) std::shuffle(order.begin(), order.end(), random);
    std::vector<bool> keep(n);
    const int keep_one_in = 1 + trial % 4;  // all, half, a third, a quarter
    for (size_t i = 0; i < n; ++i) keep[i] = random() % keep_one_in == 0;
    const size_t begin = random() % n;
    const size_t end = begin + random() % (n - begin + 1);
    auto document_at = [&](size_t i) { return order[i]; };
    auto kept = [&](size_t i) { return static_cast<bool>(keep[i]); };

    std::vector<FileRun> runs;
    Status status = ForEachFileRun(locations, begin, end, document_at, kept,
                                   [&](const RecordLocation& first, const RecordLocation& last) {
                                     EXPECT_EQ(first.file, last.file);
                                     runs.emplace_back(first.file, first.offset, last.offset);
                                     return Status::Ok();
                                   });
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(runs, BruteForceFileRuns(locations, begin, end, document_at, kept))
        << "trial " << trial;
  }
}

TEST(ForEachFileRunTest, StopsAtTheFirstErrorAndSkipsRunsWithNothingKept) {
  const std::vector<RecordLocation> locations = {{0, 0, 5},  {0, 10, 5}, {1, 0, 5},
                                                 {1, 10, 5}, {2, 0, 5},  {0, 20, 5}};
  std::vector<uint32_t> visited;
  Status status = ForEachFileRun(
      locations, 0, locations.size(), SameRecord, [](size_t i) { return i != 2 && i != 3; },
      [&](const RecordLocation& first, const RecordLocation&) {
        visited.push_back(first.file);
        return first.file == 2 ? DataLossError("file 2") : Status::Ok();
      });
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(visited, (std::vector<uint32_t>{0, 2}));  // file 1's run has nothing kept
  visited.clear();
  EXPECT_TRUE(ForEachFileRun(locations, 3, 3, SameRecord, EveryRecord,
                             [&](const RecordLocation& first, const RecordLocation&) {
                               visited.push_back(first.file);
                               return Status::Ok();
                             })
                  .ok());
  EXPECT_TRUE(visited.empty());
}

}  // namespace
}  // namespace neardup::internal
