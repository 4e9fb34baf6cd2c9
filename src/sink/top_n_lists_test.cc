#include "sink/top_n_lists.h"

#include <gtest/gtest.h>

#include <vector>

namespace neardup::internal {
namespace {

TEST(TopNListsTest, GroupsConsecutiveRowsAndDigestsTheirContent) {
  std::vector<TopNRecord> rows = {
      {"x", "y", 0.5, 0.25}, {"x", "z", 0.4, 0.1}, {"y", "x", 0.25, 0.5}};
  Result<std::vector<TopNList>> lists = GroupTopNLists(rows);
  ASSERT_TRUE(lists.ok()) << lists.status().message();
  ASSERT_EQ(lists->size(), 2u);
  EXPECT_EQ((*lists)[0].a, "x");
  EXPECT_EQ((*lists)[0].begin, 0u);
  EXPECT_EQ((*lists)[0].end, 2u);
  EXPECT_EQ((*lists)[1].a, "y");
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
  EXPECT_EQ(GroupTopNLists(same)->front().digest, (*lists)[0].digest);
  for (const auto& other : changed) {
    EXPECT_NE(GroupTopNLists(other)->front().digest, (*lists)[0].digest);
  }
}

TEST(TopNListsTest, RowsOfADocumentSplitApartAreAnError) {
  std::vector<TopNRecord> rows = {{"x", "y", 0.5, 0.5}, {"y", "x", 0.5, 0.5}, {"x", "z", 0.5, 0.5}};
  Result<std::vector<TopNList>> lists = GroupTopNLists(rows);
  ASSERT_FALSE(lists.ok());
  EXPECT_EQ(lists.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(lists.status().message().find("\"x\" are not consecutive"), std::string::npos);
}

TEST(TopNListsTest, EmptyInputHasNoLists) {
  Result<std::vector<TopNList>> lists = GroupTopNLists({});
  ASSERT_TRUE(lists.ok());
  EXPECT_TRUE(lists->empty());
}

}  // namespace
}  // namespace neardup::internal
