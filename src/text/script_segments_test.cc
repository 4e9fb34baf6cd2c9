#include "text/script_segments.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <string>
#include <string_view>
#include <vector>

#include "text/char_class.h"
#include "text/tokenizer.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

std::vector<std::string> Segments(std::string_view token) {
  std::vector<std::string> out;
  ForEachScriptSegment(token, [&](std::string_view s) { out.emplace_back(s); });
  return out;
}

std::vector<std::string> Tokens(std::string_view text, ScriptSegmentation segmentation) {
  std::vector<std::string> out;
  ForEachToken(TokenizerKind::kWord, segmentation, text,
               [&](std::string_view s) { out.emplace_back(s); });
  return out;
}

using Strings = std::vector<std::string>;

TEST(ScriptSegmentsTest, HanAndHiraganaAreSingleKatakanaRunsStayTogether) {
  EXPECT_EQ(Segments("東京はコンピュータの首都"),
            (Strings{"東", "京", "は", "コンピュータ", "の", "首", "都"}));
  // Katakana next to Latin or digits: separate tokens (UAX #29 WB13).
  EXPECT_EQ(Segments("第3章カナabc漢"), (Strings{"第", "3", "章", "カナ", "abc", "漢"}));
  // Chinese: one token per ideograph; ext A, ext B and compatibility too.
  EXPECT_EQ(Segments("中文\u3400\U00020000\uF900"),
            (Strings{"中", "文", "\u3400", "\U00020000", "\uF900"}));
  // The iteration mark 々 is Han.
  EXPECT_EQ(Segments("時々"), (Strings{"時", "々"}));
}

TEST(ScriptSegmentsTest, MarksStayWithTheCharacterBeforeThem) {
  // Thai: ไม่มี = ไ, ม + tone mark, ม + vowel sign.
  EXPECT_EQ(Segments("ไม่มี"), (Strings{"ไ", "ม่", "มี"}));
  // か + combining dakuten (U+3099) is one token; a combining acute after Han too.
  EXPECT_EQ(Segments("か\u3099き"), (Strings{"か\u3099", "き"}));
  EXPECT_EQ(Segments("漢\u0301字"), (Strings{"漢\u0301", "字"}));
  // A mark first in a token has no base: it joins what follows it, like Latin.
  EXPECT_EQ(Segments("\u0301ab漢"), (Strings{"\u0301ab", "漢"}));
}

TEST(ScriptSegmentsTest, OtherScriptsAreUnchanged) {
  for (std::string_view token : {"hello", "Straße", "한국어", "русский", "123abc", "ελληνικά"}) {
    EXPECT_EQ(Segments(token), Strings{std::string(token)}) << token;
  }
  // Lao, Khmer and Myanmar: one token per character with its marks.
  EXPECT_EQ(Segments("ລາວ").size(), 3u);
  EXPECT_EQ(Segments("ខ្មែរ"), (Strings{"ខ្", "មែ", "រ"}));
}

TEST(ScriptSegmentsTest, TokenizerCutsRunsOnlyWithCharacters) {
  const std::string text = "東京は日本の首都です。Tokyo カタカナ";
  EXPECT_EQ(Tokens(text, ScriptSegmentation::kNone),
            (Strings{"東京は日本の首都です", "Tokyo", "カタカナ"}));
  EXPECT_EQ(
      Tokens(text, ScriptSegmentation::kCharacters),
      (Strings{"東", "京", "は", "日", "本", "の", "首", "都", "で", "す", "Tokyo", "カタカナ"}));
}

// Every code point that is cut (kSingle, kKatakana) has a lead byte in
// IsSegmentLeadByte's set: what lets the scanner skip blocks without one.
TEST(ScriptSegmentsTest, EveryCutCodePointHasASegmentLeadByte) {
  for (char32_t c = 0x80; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const SegmentClass cls = ScriptSegmentClass(c);
    if (cls != SegmentClass::kSingle && cls != SegmentClass::kKatakana) continue;
    std::string utf8;
    AppendUtf8(c, &utf8);
    ASSERT_TRUE(IsSegmentLeadByte(static_cast<unsigned char>(utf8[0])))
        << std::hex << static_cast<uint32_t>(c);
  }
  // And the set: E0 E1 E3..EA EF F0 and nothing else.
  for (int b = 0; b < 256; ++b) {
    const bool want = b == 0xE0 || b == 0xE1 || (b >= 0xE3 && b <= 0xEA) || b == 0xEF || b == 0xF0;
    EXPECT_EQ(IsSegmentLeadByte(static_cast<unsigned char>(b)), want) << b;
  }
}

TEST(ScriptSegmentsTest, TheTableFreePathAgreesWithScriptSegmentClass) {
  for (char32_t c = 0x3000; c <= 0x9FFF; ++c) {
    const SegmentClass fast = CommonCjkSegmentClass(c);
    if (fast != SegmentClass::kMark) {
      ASSERT_EQ(fast, ScriptSegmentClass(c)) << static_cast<uint32_t>(c);
    }
  }
}

// An oracle from the definition, per code point: a boundary before code
// point i (i > 0) iff it is not a mark and it, or the last non-mark before
// it, is a single character, or exactly one of the two is Katakana.
std::vector<std::string> OracleSegments(std::string_view token) {
  std::vector<size_t> starts;
  std::vector<SegmentClass> classes;
  for (size_t i = 0; i < token.size();) {
    const DecodedCodePoint d = DecodeUtf8(token.data() + i, token.data() + token.size());
    starts.push_back(i);
    const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(d.code_point));
    const bool mark = category == UTF8PROC_CATEGORY_MN || category == UTF8PROC_CATEGORY_MC ||
                      category == UTF8PROC_CATEGORY_ME;
    classes.push_back(mark ? SegmentClass::kMark : ScriptSegmentClass(d.code_point));
    i += d.length;
  }
  std::vector<std::string> out;
  size_t begin = 0;
  SegmentClass base = SegmentClass::kOther;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (classes[i] == SegmentClass::kMark) continue;
    const bool single = classes[i] == SegmentClass::kSingle || base == SegmentClass::kSingle;
    const bool katakana_edge =
        (classes[i] == SegmentClass::kKatakana) != (base == SegmentClass::kKatakana);
    if (i > 0 && (single || katakana_edge)) {
      out.emplace_back(token.substr(begin, starts[i] - begin));
      begin = starts[i];
    }
    base = classes[i];
  }
  if (!token.empty()) out.emplace_back(token.substr(begin));
  return out;
}

TEST(ScriptSegmentsTest, RandomTokensMatchTheOracle) {
  static const char32_t kPieces[] = {'a',    '7',    0xE9,   0x301,  0x3099, 0x30FC, 0x30AB,
                                     0x30BF, 0x3042, 0x4E2D, 0x6587, 0x3400, 0xF900, 0x20000,
                                     0x0E44, 0x0E21, 0x0E48, 0x0E35, 0x1780, 0x17D2, 0xFF76,
                                     0xAC00, 0x0416, 0x3005, 0x1000, 0x102C};
  SplitMix64 rng(29);
  for (int round = 0; round < 2000; ++round) {
    std::string token;
    const size_t length = 1 + rng.Next() % 12;
    for (size_t i = 0; i < length; ++i) {
      AppendUtf8(kPieces[rng.Next() % std::size(kPieces)], &token);
    }
    ASSERT_EQ(Segments(token), OracleSegments(token)) << token;
    std::string joined;
    for (const std::string& s : Segments(token)) joined += s;
    ASSERT_EQ(joined, token);
  }
}

TEST(ScriptSegmentsTest, InvalidUtf8AroundCjkSeparatesAndIsNeverInAToken) {
  // Truncated 漢 (E6 97), a lone E3, FF and a surrogate between CJK letters.
  const std::string text = "漢\xE6\x97字\xE3 か\xFFな\xED\xA0\x80カナ\xF0\xA0\x80";
  EXPECT_EQ(Tokens(text, ScriptSegmentation::kCharacters),
            (Strings{"漢", "字", "か", "な", "カナ"}));
}

}  // namespace
}  // namespace neardup::internal
