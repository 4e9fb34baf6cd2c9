// line_id_patch.h: the ids "<file>:<stand-in line>" of formatted
// fingerprint lines renumbered in place, other lines and ids untouched.
#include "line_id_patch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neardup::mpi {
namespace {

std::string Line(const std::string& id) {
  return "{\"id\":\"" + id + "\",\"recipe\":\"0123456789abcdef\",\"tokens\":3}\n";
}

TEST(MpiLineIdPatchTest, RenumbersOnlyTheNamedLines) {
  const std::string a = Line("f.jsonl:2");
  const std::string b = Line("own-7");
  const std::string c = Line("f.jsonl:9");
  const std::string d = Line("dir/f:12.jsonl:10");
  std::string text = a + b + c + d;
  const std::vector<LineIdRename> renames = {
      {0, 1001}, {(a + b).size(), 1008}, {(a + b + c).size(), 1009}};
  ASSERT_TRUE(RenumberLineIds(&text, renames).ok());
  EXPECT_EQ(text, Line("f.jsonl:1001") + b + Line("f.jsonl:1008") + Line("dir/f:12.jsonl:1009"));
}

TEST(MpiLineIdPatchTest, NoRenamesLeaveTheText) {
  std::string text = Line("x:2") + Line("y");
  const std::string before = text;
  ASSERT_TRUE(RenumberLineIds(&text, {}).ok());
  EXPECT_EQ(text, before);
}

TEST(MpiLineIdPatchTest, EscapedQuotesInTheNameAndEqualOrShorterNumbers) {
  // A name with an escaped quote and backslash: the id ends at the
  // unescaped quote.
  const std::string a = "{\"id\":\"a\\\"b\\\\:77\",\"tokens\":1}\n";
  const std::string b = Line("g:55");
  std::string text = a + b;
  ASSERT_TRUE(RenumberLineIds(&text, {{0, 78}, {a.size(), 9}}).ok());
  EXPECT_EQ(text, "{\"id\":\"a\\\"b\\\\:78\",\"tokens\":1}\n" + Line("g:9"));
}

// In place when the capacity holds the growth (the same buffer after),
// else by one forward copy; the same text either way.
TEST(MpiLineIdPatchTest, AManyDigitGrowthAcrossManyLines) {
  for (const bool room : {false, true}) {
    std::string text;
    std::string expected;
    std::vector<LineIdRename> renames;
    for (int i = 0; i < 1000; ++i) {
      if (i % 3 == 0) {
        renames.push_back({text.size(), 123456789000ULL + static_cast<uint64_t>(i)});
        text += Line("big.jsonl:" + std::to_string(i + 2));
        expected += Line("big.jsonl:" + std::to_string(123456789000ULL + static_cast<uint64_t>(i)));
      } else {
        text += Line("id" + std::to_string(i));
        expected += Line("id" + std::to_string(i));
      }
    }
    if (room) {
      text.reserve(expected.size());
    } else {
      text.shrink_to_fit();
    }
    const char* before = text.data();
    ASSERT_TRUE(RenumberLineIds(&text, renames).ok());
    EXPECT_EQ(text, expected) << "room " << room;
    if (room) {
      EXPECT_EQ(text.data(), before);
    }
  }
}

TEST(MpiLineIdPatchTest, ALineWithoutALineNumberIsAnErrorAndLeavesTheText) {
  const std::string a = Line("f:3");
  for (const std::string& bad : {Line("no-number"), Line("f:"), Line("12"),
                                 std::string("{\"tokens\":1}\n"), std::string("{\"id\":\"f:3")}) {
    std::string text = a + bad;
    const std::string before = text;
    const Status status = RenumberLineIds(&text, {{0, 4}, {a.size(), 5}});
    EXPECT_EQ(status.code(), StatusCode::kInternal) << bad;
    EXPECT_EQ(text, before) << bad;
  }
  std::string text = a + a;
  // Not ascending, or past the end.
  EXPECT_FALSE(RenumberLineIds(&text, {{a.size(), 4}, {0, 5}}).ok());
  EXPECT_FALSE(RenumberLineIds(&text, {{text.size() + 1, 4}}).ok());
  EXPECT_EQ(text, a + a);
}

}  // namespace
}  // namespace neardup::mpi
