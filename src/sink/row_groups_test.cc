#include "sink/row_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace neardup::internal {
namespace {

TEST(RowGroupsTest, GroupsConsecutiveRowsAndDigestsTheirContent) {
  std::vector<TopNRecord> rows = {
      {"x", "y", 0.5, 0.25}, {"x", "z", 0.4, 0.1}, {"y", "x", 0.25, 0.5}};
  Result<RowGroups> grouped = GroupTopNLists(rows);
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  const std::vector<RowGroup>* lists = &grouped->groups;
  EXPECT_TRUE(grouped->order.empty());
  ASSERT_EQ(lists->size(), 2u);
  EXPECT_EQ((*lists)[0].key, "x");
  EXPECT_EQ((*lists)[0].begin, 0u);
  EXPECT_EQ((*lists)[0].end, 2u);
  EXPECT_EQ((*lists)[1].key, "y");
  EXPECT_EQ((*lists)[1].begin, 2u);
  EXPECT_EQ((*lists)[1].end, 3u);

  // The same content under another document gives the same digest; any
  // change of a b, a score or the order gives another.
  std::vector<TopNRecord> same = {{"q", "y", 0.5, 0.25}, {"q", "z", 0.4, 0.1}};
  std::vector<std::vector<TopNRecord>> changed = {
      {{"q", "y", 0.5, 0.25}, {"q", "w", 0.4, 0.1}},
      {{"q", "y", 0.5, 0.25}, {"q", "z", 0.4, 0.2}},
      {{"q", "y", 0.5000001, 0.25}, {"q", "z", 0.4, 0.1}},
      {{"q", "z", 0.4, 0.1}, {"q", "y", 0.5, 0.25}},
      {{"q", "y", 0.5, 0.25}},
      // The separator keeps "y"+"z" apart from "yz".
      {{"q", "yz", 0.5, 0.25}},
  };
  EXPECT_EQ(GroupTopNLists(same)->groups.front().digest, (*lists)[0].digest);
  for (const auto& other : changed) {
    EXPECT_NE(GroupTopNLists(other)->groups.front().digest, (*lists)[0].digest);
  }
}

TEST(RowGroupsTest, RowsOfADocumentSplitApartAreAnError) {
  std::vector<TopNRecord> rows = {{"x", "y", 0.5, 0.5}, {"y", "x", 0.5, 0.5}, {"x", "z", 0.5, 0.5}};
  Result<RowGroups> grouped = GroupTopNLists(rows);
  ASSERT_FALSE(grouped.ok());
  EXPECT_EQ(grouped.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(grouped.status().message().find("\"x\" are not consecutive"), std::string::npos);
}

TEST(RowGroupsTest, EmptyInputHasNoLists) {
  Result<RowGroups> grouped = GroupTopNLists({});
  ASSERT_TRUE(grouped.ok());
  EXPECT_TRUE(grouped->groups.empty());
}

TEST(RowGroupsTest, PairsGroupByFirstIdWhateverTheirOrder) {
  std::vector<PairRecord> pairs = {
      {"y", "z", 0.9, -1}, {"x", "z", 0.8, -1}, {"y", "w", 0.7, -1}, {"x", "y", 0.85, -1}};
  Result<RowGroups> grouped = GroupPairs(pairs);
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  ASSERT_EQ(grouped->groups.size(), 2u);
  // Each group's rows, through the order, sorted by b.
  std::vector<std::pair<std::string, std::vector<std::string>>> seen;
  for (const RowGroup& group : grouped->groups) {
    std::vector<std::string> bs;
    for (size_t p = group.begin; p < group.end; ++p) {
      EXPECT_EQ(pairs[grouped->Row(p)].a, group.key);
      bs.emplace_back(pairs[grouped->Row(p)].b);
    }
    seen.emplace_back(group.key, bs);
  }
  using Seen = std::vector<std::pair<std::string, std::vector<std::string>>>;
  EXPECT_EQ(seen, (Seen{{"x", {"y", "z"}}, {"y", {"w", "z"}}}));

  // The digest follows the content, not the input order; a changed score,
  // distance or partner changes it.
  std::vector<PairRecord> shuffled = {pairs[3], pairs[2], pairs[1], pairs[0]};
  Result<RowGroups> again = GroupPairs(shuffled);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->groups[0].digest, grouped->groups[0].digest);
  EXPECT_EQ(again->groups[1].digest, grouped->groups[1].digest);
  for (PairRecord changed : {PairRecord{"x", "y", 0.86, -1}, PairRecord{"x", "y", 0.85, 3},
                             PairRecord{"x", "v", 0.85, -1}}) {
    std::vector<PairRecord> other = {changed, pairs[1]};
    EXPECT_NE(GroupPairs(other)->groups[0].digest, grouped->groups[0].digest);
  }
}

TEST(RowGroupsTest, PairIdsThatStoreAlikeAreAnError) {
  // Both become "a\uFFFD" once invalid UTF-8 is replaced.
  std::vector<PairRecord> pairs = {{"a\xFF", "z", 0.9, -1}, {"a\xFE", "z", 0.9, -1}};
  Result<RowGroups> grouped = GroupPairs(pairs);
  ASSERT_FALSE(grouped.ok());
  EXPECT_EQ(grouped.status().code(), StatusCode::kInvalidArgument);
}

TEST(RowGroupsTest, ClustersAreNamedByTheirFirstMember) {
  std::vector<ClusterRecord> members = {{0, "p"}, {0, "q"}, {1, "r"}, {1, "s"}, {1, "t"}};
  Result<RowGroups> grouped = GroupClusters(members);
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  ASSERT_EQ(grouped->groups.size(), 2u);
  EXPECT_EQ(grouped->groups[0].key, "p");
  EXPECT_EQ(grouped->groups[1].key, "r");
  EXPECT_EQ(grouped->groups[1].begin, 2u);
  EXPECT_EQ(grouped->groups[1].end, 5u);
  // Renumbered, the same members give the same digests; another member set
  // another digest.
  std::vector<ClusterRecord> renumbered = {{5, "p"}, {5, "q"}, {2, "r"}, {2, "s"}, {2, "u"}};
  Result<RowGroups> again = GroupClusters(renumbered);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->groups[0].digest, grouped->groups[0].digest);
  EXPECT_NE(again->groups[1].digest, grouped->groups[1].digest);

  std::vector<ClusterRecord> split = {{0, "p"}, {1, "r"}, {0, "q"}};
  EXPECT_THAT(GroupClusters(split).status().message(), testing::HasSubstr("not consecutive"));
  std::vector<ClusterRecord> twice = {{0, "p"}, {0, "q"}, {1, "q"}, {1, "r"}};
  EXPECT_THAT(GroupClusters(twice).status().message(), testing::HasSubstr("in two clusters"));
}

}  // namespace
}  // namespace neardup::internal
