#include "neardup/clustering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

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
  std::vector<uint32_t> cluster_of = {0, 0, 0, 3, 3, 5};
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

TEST(ClusteringTest, RejectsPairsOutOfOrderOrRange) {
  std::vector<SimilarPair> bad = {{2, 1, 0.9, -1}};
  Result<std::vector<uint32_t>> out_of_order = ClusterDocuments(3, bad, ClusterRule::kLeader);
  ASSERT_FALSE(out_of_order.ok());
  EXPECT_EQ(out_of_order.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(out_of_order.status().message(), testing::HasSubstr("out of order"));
  std::vector<SimilarPair> past_end = {{1, 3, 0.9, -1}};
  EXPECT_FALSE(ClusterDocuments(3, past_end, ClusterRule::kComponents).ok());
}

TEST(ClusteringTest, ChooseKeptRejectsBadClusters) {
  const std::vector<uint64_t> lengths = {1, 2, 3};
  EXPECT_FALSE(ChooseKept(std::vector<uint32_t>{0, 0}, lengths, KeepRule::kFirst).ok());
  // Document 1 names cluster 2, a later document.
  EXPECT_FALSE(ChooseKept(std::vector<uint32_t>{0, 2, 2}, lengths, KeepRule::kFirst).ok());
  // Document 2 names cluster 1, which is itself in cluster 0.
  EXPECT_FALSE(ChooseKept(std::vector<uint32_t>{0, 0, 1}, lengths, KeepRule::kFirst).ok());
}

}  // namespace
}  // namespace neardup
