#include "neardup/clustering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/pair_scan.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;

std::vector<SimilarPair> Chain() {
  // 0~1, 1~2, 2~3: a chain; 4 alone; 5~6.
  return {{0, 1, 0.9, -1}, {1, 2, 0.9, -1}, {2, 3, 0.9, -1}, {5, 6, 0.95, -1}};
}

TEST(ClusteringTest, ComponentsAreTransitive) {
  EXPECT_THAT(*ClusterDocuments(7, Chain(), ClusterRule::kComponents),
              ElementsAre(0, 0, 0, 0, 4, 5, 5));
}

TEST(ClusteringTest, LeaderDoesNotChain) {
  // 1 joins leader 0; 2 is similar only to 1, which is not a leader, so 2
  // leads; 3 joins 2.
  EXPECT_THAT(*ClusterDocuments(7, Chain(), ClusterRule::kLeader),
              ElementsAre(0, 0, 2, 2, 4, 5, 5));
}

TEST(ClusteringTest, LeaderJoinsTheFirstLeader) {
  // 0 and 2 are leaders (0 !~ 2); 3 is similar to both and joins 0.
  std::vector<SimilarPair> pairs = {{2, 3, 0.9, -1}, {0, 3, 0.8, -1}, {1, 2, 0.1, -1}};
  EXPECT_THAT(*ClusterDocuments(4, pairs, ClusterRule::kLeader), ElementsAre(0, 1, 1, 0));
}

TEST(ClusteringTest, ResultDoesNotDependOnPairOrder) {
  std::vector<SimilarPair> pairs = Chain();
  std::vector<SimilarPair> reversed(pairs.rbegin(), pairs.rend());
  for (ClusterRule rule : {ClusterRule::kComponents, ClusterRule::kLeader}) {
    EXPECT_EQ(*ClusterDocuments(7, pairs, rule), *ClusterDocuments(7, reversed, rule));
  }
}

TEST(ClusteringTest, KeepRules) {
  std::vector<uint64_t> cluster_of = {0, 0, 0, 3, 3, 5};
  std::vector<uint64_t> lengths = {10, 30, 30, 7, 5, 1};
  EXPECT_THAT(*ChooseKept(cluster_of, lengths, KeepRule::kFirst),
              ElementsAre(true, false, false, true, false, true));
  // Ties go to the earlier document (1, not 2).
  EXPECT_THAT(*ChooseKept(cluster_of, lengths, KeepRule::kLongest),
              ElementsAre(false, true, false, true, false, true));
  EXPECT_THAT(*ChooseKept(cluster_of, lengths, KeepRule::kShortest),
              ElementsAre(true, false, false, false, true, true));
}

TEST(ClusteringTest, ParseRules) {
  EXPECT_EQ(*ParseClusterRule("leader"), ClusterRule::kLeader);
  EXPECT_EQ(*ParseClusterRule("components"), ClusterRule::kComponents);
  EXPECT_FALSE(ParseClusterRule("transitive").ok());
  EXPECT_EQ(*ParseKeepRule("longest"), KeepRule::kLongest);
  EXPECT_FALSE(ParseKeepRule("random").ok());
}

TEST(ClusteringTest, PairsOutOfOrderOrRangeAreAnErrorNotAnAbort) {
  for (const SimilarPair& bad :
       {SimilarPair{2, 1, 0.9, -1}, SimilarPair{1, 1, 0.9, -1}, SimilarPair{1, 3, 0.9, -1}}) {
    const std::vector<SimilarPair> pairs = {bad};
    for (ClusterRule rule : {ClusterRule::kComponents, ClusterRule::kLeader}) {
      Result<std::vector<uint64_t>> clusters = ClusterDocuments(3, pairs, rule);
      ASSERT_FALSE(clusters.ok());
      EXPECT_EQ(clusters.status().code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(clusters.status().message(), ::testing::HasSubstr("a < b < the 3 documents"));
    }
  }
}

// The leader rule as its definition reads: each document, in order, joins
// its first (smallest) earlier neighbour that leads a cluster.
std::vector<uint64_t> LeaderClustersByDefinition(uint64_t n,
                                                 const std::vector<SimilarPair>& pairs) {
  std::vector<std::vector<uint64_t>> earlier(n);
  for (const SimilarPair& pair : pairs) earlier[pair.b].push_back(pair.a);
  std::vector<uint64_t> cluster_of(n);
  for (uint64_t doc = 0; doc < n; ++doc) {
    std::sort(earlier[doc].begin(), earlier[doc].end());
    cluster_of[doc] = doc;
    for (uint64_t a : earlier[doc]) {
      if (cluster_of[a] == a) {
        cluster_of[doc] = a;
        break;
      }
    }
  }
  return cluster_of;
}

// Many pairs (several tasks of the parallel passes) in random order: the
// same clusters at every thread count, the leader rule's by definition, and
// the first malformed pair named whichever task finds it.
TEST(ClusteringTest, ManyPairsGiveTheSameClustersAtEveryThreadCount) {
  const uint64_t n = 30000;
  internal::SplitMix64 rng(5);
  std::vector<SimilarPair> pairs;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  while (pairs.size() < 60000) {
    const uint64_t a = rng.Next() % n;
    const uint64_t b = a + 1 + rng.Next() % 40;
    if (b >= n) continue;
    seen.emplace_back(a, b);
    pairs.push_back(SimilarPair{a, b, 0.9, -1});
  }
  // Unique pairs, as the verification stage gives them.
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  pairs.clear();
  for (const auto& [a, b] : seen) pairs.push_back(SimilarPair{a, b, 0.9, -1});
  for (size_t i = pairs.size() - 1; i > 0; --i) std::swap(pairs[i], pairs[rng.Next() % (i + 1)]);
  const std::vector<uint64_t> leaders = LeaderClustersByDefinition(n, pairs);
  const std::vector<uint64_t> components = *ClusterDocuments(n, pairs, ClusterRule::kComponents);
  EXPECT_NE(leaders, components);
  std::vector<SimilarPair> malformed = pairs;
  malformed[40000] = SimilarPair{7, 7, 0.9, -1};
  malformed[50000] = SimilarPair{1, n, 0.9, -1};
  for (int threads : {1, 2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_EQ(*ClusterDocuments(n, pairs, ClusterRule::kLeader), leaders) << threads;
    EXPECT_EQ(*ClusterDocuments(n, pairs, ClusterRule::kComponents), components) << threads;
    Result<std::vector<uint64_t>> bad = ClusterDocuments(n, malformed, ClusterRule::kLeader);
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("pair (7, 7)"));
  }
}

// The leader rule in the verification stage's order (sorted by a, then b),
// sorted by a alone (ties shuffled) and shuffled: the same clusters.
TEST(ClusteringTest, LeaderClustersDoNotDependOnTheOrderOfThePairs) {
  const uint64_t n = 20000;
  internal::SplitMix64 rng(11);
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  while (seen.size() < 50000) {
    const uint64_t a = rng.Next() % n;
    const uint64_t b = a + 1 + rng.Next() % 30;
    if (b < n) seen.emplace_back(a, b);
  }
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  std::vector<SimilarPair> by_a_then_b;
  for (const auto& [a, b] : seen) by_a_then_b.push_back(SimilarPair{a, b, 0.9, -1});
  const std::vector<uint64_t> leaders = LeaderClustersByDefinition(n, by_a_then_b);
  std::vector<SimilarPair> shuffled = by_a_then_b;
  for (size_t i = shuffled.size() - 1; i > 0; --i) {
    std::swap(shuffled[i], shuffled[rng.Next() % (i + 1)]);
  }
  std::vector<SimilarPair> by_a = shuffled;
  std::stable_sort(by_a.begin(), by_a.end(),
                   [](const SimilarPair& x, const SimilarPair& y) { return x.a < y.a; });
  for (int threads : {1, 2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (const std::vector<SimilarPair>* pairs : {&by_a_then_b, &by_a, &shuffled}) {
      EXPECT_EQ(*ClusterDocuments(n, *pairs, ClusterRule::kLeader), leaders) << threads;
    }
  }
}

// A chain 0-1-2-...: the leader rule alternates leaders and followers
// (0 <- 1, 2 <- 3, ...). Two neighbouring pairs (i, i + 1), (i + 1, i + 2)
// swapped, i a leader, leave the pairs unsorted by a; a pass that took them
// as sorted would see (i + 1, i + 2) before i's claim on i + 1 and put
// i + 2 under the follower i + 1. ScanPairs halves 4K pairs down to tasks
// of K = kClusterPairGrain - 1 (odd), so swaps at K - 1 and 3K - 1 put the
// descent exactly across a task's edge, and 0 and 2K inside a task.
TEST(ClusteringTest, ALeaderChainWithTwoPairsOutOfOrderAnywhereKeepsItsClusters) {
  const size_t k = internal::kClusterPairGrain - 1;
  const uint64_t n = 4 * k + 1;
  std::vector<SimilarPair> chain;
  for (uint64_t i = 0; i + 1 < n; ++i) chain.push_back(SimilarPair{i, i + 1, 0.9, -1});
  const std::vector<uint64_t> leaders = LeaderClustersByDefinition(n, chain);
  ASSERT_EQ(leaders[2], 2u);
  ASSERT_EQ(leaders[3], 2u);
  EXPECT_TRUE(internal::ScanPairs(n, chain).sorted_by_a);
  for (size_t at : {size_t{0}, k - 1, 2 * k, 3 * k - 1, chain.size() - 2}) {
    ASSERT_EQ(at % 2, 0u);
    std::vector<SimilarPair> pairs = chain;
    std::swap(pairs[at], pairs[at + 1]);
    for (int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const internal::PairScan scan = internal::ScanPairs(n, pairs);
      EXPECT_EQ(scan.first_bad, pairs.size());
      EXPECT_FALSE(scan.sorted_by_a) << "swapped at " << at << ", " << threads << " threads";
      EXPECT_EQ(*ClusterDocuments(n, pairs, ClusterRule::kLeader), leaders)
          << "swapped at " << at << ", " << threads << " threads";
    }
  }
}

// The one-pass form is taken where it applies: pairs sorted by a, with
// ties in any order, scan as sorted (and a bad pair is found wherever it
// lies).
TEST(ClusteringTest, PairsSortedByAScanAsSortedWhateverTheOrderOfTies) {
  std::vector<SimilarPair> pairs;
  internal::SplitMix64 rng(3);
  for (uint64_t a = 0; a < 20000; ++a) {
    const int count = static_cast<int>(rng.Next() % 4);
    for (int j = count; j > 0; --j) pairs.push_back(SimilarPair{a, a + 1 + j * 7, 0.9, -1});
  }
  const uint64_t n = 20000 + 40;
  for (int threads : {1, 2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const internal::PairScan scan = internal::ScanPairs(n, pairs);
    EXPECT_EQ(scan.first_bad, pairs.size());
    EXPECT_TRUE(scan.sorted_by_a) << threads << " threads";
    std::vector<SimilarPair> bad = pairs;
    bad[bad.size() / 3] = SimilarPair{5, 5, 0.9, -1};
    EXPECT_EQ(internal::ScanPairs(n, bad).first_bad, bad.size() / 3);
  }
}

TEST(ClusteringTest, ChooseKeptRejectsMalformedInput) {
  const std::vector<uint64_t> lengths = {1, 2, 3};
  EXPECT_FALSE(ChooseKept(std::vector<uint64_t>{0, 0}, lengths, KeepRule::kFirst).ok());
  // A member before its cluster's first member, and a cluster number that is
  // not its own first member.
  EXPECT_FALSE(ChooseKept(std::vector<uint64_t>{1, 1, 2}, lengths, KeepRule::kFirst).ok());
  EXPECT_FALSE(ChooseKept(std::vector<uint64_t>{0, 0, 1}, lengths, KeepRule::kFirst).ok());
}

}  // namespace
}  // namespace neardup
