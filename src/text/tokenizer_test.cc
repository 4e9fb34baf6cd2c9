#include "text/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <utf8proc.h>

#include <string>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Tokens(TokenizerKind kind, std::string_view text) {
  std::vector<std::string> tokens;
  ForEachToken(kind, text, [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

std::vector<std::string> Words(std::string_view text) { return Tokens(TokenizerKind::kWord, text); }
std::vector<std::string> Spaces(std::string_view text) {
  return Tokens(TokenizerKind::kWhitespace, text);
}
std::vector<std::string> Chars(std::string_view text) { return Tokens(TokenizerKind::kChar, text); }

TEST(WordTokenizerTest, Ascii) {
  EXPECT_THAT(Words("Hello, world! 42x  y2k"), ElementsAre("Hello", "world", "42x", "y2k"));
  EXPECT_THAT(Words("don't snake_case a-b"), ElementsAre("don", "t", "snake", "case", "a", "b"));
  EXPECT_THAT(Words("  ...  "), IsEmpty());
  EXPECT_THAT(Words(""), IsEmpty());
  EXPECT_THAT(Words("word"), ElementsAre("word"));
}

TEST(WordTokenizerTest, AccentedLatinAndGreek) {
  EXPECT_THAT(Words("caf\xC3\xA9 au-lait"), ElementsAre("caf\xC3\xA9", "au", "lait"));
  // A combining mark (Mn) continues the word.
  EXPECT_THAT(Words("cafe\xCC\x81!"), ElementsAre("cafe\xCC\x81"));
  // Καλημέρα κόσμε
  EXPECT_THAT(Words("\xCE\x9A\xCE\xB1\xCE\xBB\xCE\xB7\xCE\xBC\xCE\xAD\xCF\x81\xCE\xB1 "
                    "\xCE\xBA\xCF\x8C\xCF\x83\xCE\xBC\xCE\xB5"),
              ElementsAre("\xCE\x9A\xCE\xB1\xCE\xBB\xCE\xB7\xCE\xBC\xCE\xAD\xCF\x81\xCE\xB1",
                          "\xCE\xBA\xCF\x8C\xCF\x83\xCE\xBC\xCE\xB5"));
}

TEST(WordTokenizerTest, CjkRunIsOneToken) {
  // 我爱北京。你好 : the ideographic full stop (Po) is the only separator.
  EXPECT_THAT(
      Words("\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC\xE3\x80\x82"
            "\xE4\xBD\xA0\xE5\xA5\xBD"),
      ElementsAre("\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC", "\xE4\xBD\xA0\xE5\xA5\xBD"));
}

TEST(WordTokenizerTest, EmojiSeparatesAndScriptsMix) {
  // 🍕 (So) separates.
  EXPECT_THAT(Words("I\xF0\x9F\x8D\x95pizza"), ElementsAre("I", "pizza"));
  // Latin, Cyrillic, digits and Han in one run: all L* / N*.
  EXPECT_THAT(Words("abc\xD0\x94\xD0\x95"
                    "123\xE6\x9D\xB1 x"),
              ElementsAre("abc\xD0\x94\xD0\x95"
                          "123\xE6\x9D\xB1",
                          "x"));
  // Non-ASCII digits (Arabic-Indic, Nd) and non-ASCII separators (U+3000).
  EXPECT_THAT(Words("\xD9\xA1\xD9\xA2\xE3\x80\x80z"), ElementsAre("\xD9\xA1\xD9\xA2", "z"));
}

TEST(WhitespaceTokenizerTest, SplitsOnUnicodeWhiteSpaceOnly) {
  EXPECT_THAT(Spaces("hello, world."), ElementsAre("hello,", "world."));
  EXPECT_THAT(Spaces(" \t a\nb\xC2\xA0"
                     "c\xE3\x80\x80"
                     "d\xE2\x80\xA8"
                     "e\xC2\x85"
                     "f  "),
              ElementsAre("a", "b", "c", "d", "e", "f"));
  // U+200B (zero-width space) is Cf, not White_Space: it stays in the token.
  EXPECT_THAT(Spaces("a\xE2\x80\x8B"
                     "b"),
              ElementsAre("a\xE2\x80\x8B"
                          "b"));
  EXPECT_THAT(Spaces("\xF0\x9F\x8D\x95 \xE6\x88\x91\xE7\x88\xB1"),
              ElementsAre("\xF0\x9F\x8D\x95", "\xE6\x88\x91\xE7\x88\xB1"));
  EXPECT_THAT(Spaces(""), IsEmpty());
  EXPECT_THAT(Spaces(" \t\r\n "), IsEmpty());
}

TEST(CharTokenizerTest, CodePointsAndOneSpacePerRun) {
  EXPECT_THAT(Chars("  ab \t\xE3\x80\x80 c "), ElementsAre("a", "b", " ", "c"));
  EXPECT_THAT(Chars("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"),
              ElementsAre("\xE6\x97\xA5", "\xE6\x9C\xAC", "\xE8\xAA\x9E"));
  EXPECT_THAT(Chars("\xF0\x9F\x8D\x95!\xC3\xA9"), ElementsAre("\xF0\x9F\x8D\x95", "!", "\xC3\xA9"));
  EXPECT_THAT(Chars(""), IsEmpty());
  EXPECT_THAT(Chars(" \n\t "), IsEmpty());
  // The space token is the static " ", whatever white space it stands for.
  std::vector<std::string_view> views;
  ForEachToken(TokenizerKind::kChar, "a\tb", [&](std::string_view t) { views.push_back(t); });
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[1].data(), kCharSpaceToken.data());
}

TEST(TokenizerTest, InvalidBytesAreSafe) {
  const std::string text =
      "ab\xFF"
      "cd\xE2\x82";
  EXPECT_THAT(Words(text), ElementsAre("ab", "cd"));
  EXPECT_THAT(Spaces(text), ElementsAre(text));
  EXPECT_THAT(Chars(text), ElementsAre("a", "b", "\xFF", "c", "d", "\xE2\x82"));
}

// Oracle: decode with utf8proc_iterate, classify with utf8proc_category and
// the White_Space list, and build tokens by brute force.
std::vector<std::string> OracleTokens(TokenizerKind kind, const std::string& text) {
  struct Cp {
    size_t offset, length;
    bool word, space;
  };
  std::vector<Cp> cps;
  size_t i = 0;
  while (i < text.size()) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(&text[i]),
                                          static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    EXPECT_GT(n, 0);
    if (n <= 0) return {};
    utf8proc_category_t c = utf8proc_category(cp);
    bool word = c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_NO;
    bool space = c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL ||
                 c == UTF8PROC_CATEGORY_ZP || (cp >= 9 && cp <= 13) || cp == 0x85;
    cps.push_back({i, static_cast<size_t>(n), word, space});
    i += static_cast<size_t>(n);
  }
  std::vector<std::string> out;
  if (kind == TokenizerKind::kChar) {
    for (size_t k = 0; k < cps.size(); ++k) {
      if (!cps[k].space) {
        out.push_back(text.substr(cps[k].offset, cps[k].length));
      } else if (!out.empty() && (k + 1 == cps.size() || !cps[k + 1].space)) {
        // The end of a white-space run that follows a token: " " if a token
        // follows.
        if (k + 1 < cps.size()) out.push_back(" ");
      }
    }
    return out;
  }
  std::string current;
  for (const Cp& cp : cps) {
    bool in = kind == TokenizerKind::kWord ? cp.word : !cp.space;
    if (in) {
      current += text.substr(cp.offset, cp.length);
    } else if (!current.empty()) {
      out.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

TEST(TokenizerTest, MatchesBruteForceOracleOnRandomText) {
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "7",
                                           " ",
                                           ".",
                                           "_",
                                           "\t",
                                           "\n",
                                           "\xC3\xA9",
                                           "\xCC\x81",
                                           "\xCE\xA3",
                                           "\xE6\x88\x91",
                                           "\xE3\x80\x82",
                                           "\xE3\x80\x80",
                                           "\xC2\xA0",
                                           "\xE2\x80\x8B",
                                           "\xF0\x9F\x8D\x95",
                                           "\xD9\xA1",
                                           "\xE2\x85\xA0",
                                           "\xC2\x85",
                                           "\xEF\xBF\xBD",
                                           std::string("\0", 1)};
  SplitMix64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    size_t n = rng.Next() % 24;
    for (size_t k = 0; k < n; ++k) text += pieces[rng.Next() % pieces.size()];
    for (TokenizerKind kind :
         {TokenizerKind::kWord, TokenizerKind::kWhitespace, TokenizerKind::kChar}) {
      ASSERT_EQ(Tokens(kind, text), OracleTokens(kind, text))
          << ::testing::PrintToString(text) << " kind " << static_cast<int>(kind);
    }
  }
}

}  // namespace
}  // namespace neardup::internal
