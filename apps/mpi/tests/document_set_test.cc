// DocumentSet (document_set.h) against an oracle: std::set of the same
// documents, its list and each document's rank (the members below it), on
// random sets of every density, at word boundaries, empty and full; in
// debug and sanitizer builds, misuse caught by its DCHECKs.
#include "document_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace neardup::mpi {
namespace {

void ExpectMatches(uint64_t total, const std::set<uint64_t>& oracle) {
  DocumentSet set(total);
  // Added in a scrambled order, some twice.
  std::vector<uint64_t> order(oracle.begin(), oracle.end());
  std::shuffle(order.begin(), order.end(), std::mt19937_64(total));
  for (uint64_t doc : order) set.Add(doc);
  for (size_t i = 0; i < order.size(); i += 3) set.Add(order[i]);
  const std::vector<uint64_t> members = set.Finish();
  ASSERT_EQ(members, std::vector<uint64_t>(oracle.begin(), oracle.end()));
  uint64_t below = 0;
  for (uint64_t doc = 0; doc < total; ++doc) {
    ASSERT_EQ(set.Rank(doc), below) << "document " << doc << " of " << total;
    ASSERT_EQ(set.Contains(doc), oracle.count(doc) == 1) << doc;
    below += oracle.count(doc);
  }
}

TEST(MpiDocumentSetTest, RandomSetsAgainstStdSet) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const uint64_t total = 1 + rng() % 700;
    const uint64_t per_mille = rng() % 1001;  // density, empty to full
    std::set<uint64_t> oracle;
    for (uint64_t doc = 0; doc < total; ++doc) {
      if (rng() % 1000 < per_mille) oracle.insert(doc);
    }
    ExpectMatches(total, oracle);
  }
}

TEST(MpiDocumentSetTest, WordBoundariesEmptyAndFull) {
  ExpectMatches(1, {});
  ExpectMatches(1, {0});
  ExpectMatches(64, {0, 63});
  ExpectMatches(65, {63, 64});
  ExpectMatches(128, {62, 63, 64, 65, 127});
  std::set<uint64_t> full;
  for (uint64_t doc = 0; doc < 200; ++doc) full.insert(doc);
  ExpectMatches(200, full);
  DocumentSet empty(0);
  EXPECT_TRUE(empty.Finish().empty());
}

#ifndef NDEBUG
// A caller's bug, not input: ids are checked where they arrive
// (MergeUnique, SortRecords), so the set only DCHECKs (debug and sanitizer
// builds): a document at or past total, Rank before Finish, Add after it.
TEST(MpiDocumentSetDeathTest, MisuseIsCaughtInDebugBuilds) {
  DocumentSet set(65);
  EXPECT_DEATH(set.Add(65), "doc < total_");
  EXPECT_DEATH(set.Add(128), "doc < total_");
  EXPECT_DEATH(set.Contains(65), "doc < total_");
  EXPECT_DEATH(set.Rank(3), "finished_");
  set.Add(3);
  set.Finish();
  EXPECT_DEATH(set.Rank(65), "doc < total_");
  EXPECT_DEATH(set.Add(4), "finished_");
}
#endif

}  // namespace
}  // namespace neardup::mpi
