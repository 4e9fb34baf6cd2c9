#include "text/graphemes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace neardup::internal {
namespace {

std::vector<std::string> Graphemes(std::string_view text) {
  std::vector<std::string> out;
  ForEachToken(TokenizerKind::kGrapheme, text,
               [&](std::string_view token) { out.emplace_back(token); });
  return out;
}

using GraphemeList = std::vector<std::string>;

TEST(GraphemesTest, AsciiIsOneTokenPerByteSpacesIncluded) {
  EXPECT_EQ(Graphemes("ab c "), (GraphemeList{"a", "b", " ", "c", " "}));
  EXPECT_EQ(Graphemes(" "), (GraphemeList{" "}));
  EXPECT_TRUE(Graphemes("").empty());
}

TEST(GraphemesTest, ClustersFollowUax29) {
  // "e" + COMBINING ACUTE ACCENT is one cluster; CR LF is one.
  EXPECT_EQ(Graphemes("e\xcc\x81x"), (GraphemeList{"e\xcc\x81", "x"}));
  EXPECT_EQ(Graphemes("a\r\nb"), (GraphemeList{"a", "\r\n", "b"}));
  // Two flags (regional-indicator pairs) are two clusters, not one or four.
  const std::string fr = "\xf0\x9f\x87\xab\xf0\x9f\x87\xb7";
  const std::string de = "\xf0\x9f\x87\xa9\xf0\x9f\x87\xaa";
  EXPECT_EQ(Graphemes(fr + de), (GraphemeList{fr, de}));
  // An emoji ZWJ sequence (man ZWJ woman) is one cluster.
  const std::string family = "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9";
  EXPECT_EQ(Graphemes(family + "!"), (GraphemeList{family, "!"}));
  // Hangul jamo L V T form one syllable cluster.
  EXPECT_EQ(Graphemes("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8"),
            (GraphemeList{"\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8"}));
}

TEST(GraphemesTest, InvalidBytesAreClustersOfTheirOwnAndCoverTheText) {
  const std::string text = "a\xff\xcc\x81z\xc3";
  GraphemeList tokens = Graphemes(text);
  std::string joined;
  for (const std::string& token : tokens) joined += token;
  EXPECT_EQ(joined, text);
  EXPECT_EQ(tokens.front(), "a");
  EXPECT_EQ(tokens[1], "\xff");
  EXPECT_EQ(tokens.back(), "\xc3");
}

}  // namespace
}  // namespace neardup::internal
