#include "text/ascii_word_normalizer.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup::internal {
namespace {

std::string Normalized(std::string_view text, uint64_t* invalid = nullptr) {
  std::string out = "stale";
  NormalizeStats stats;
  NormalizeAsciiWord(text, &out, &stats);
  if (invalid != nullptr) *invalid = stats.invalid_utf8_sequences;
  return out;
}

TEST(AsciiWordNormalizerTest, LowerCasesAndTurnsNonWordRunsIntoOneSpace) {
  EXPECT_EQ(Normalized("Lorem ipsum, dolor sit amet."), "lorem ipsum dolor sit amet ");
  EXPECT_EQ(Normalized("  Hello,\t\n--World!! "), " hello world ");
  EXPECT_EQ(Normalized("snake_case and CamelCase 42"), "snake_case and camelcase 42");
  EXPECT_EQ(Normalized(""), "");
  EXPECT_EQ(Normalized("..."), " ");
}

TEST(AsciiWordNormalizerTest, NonAsciiCharactersBecomeSpaces) {
  // "Straße café": ß and é are not ASCII word characters (ExLSH's \W).
  EXPECT_EQ(Normalized("Stra\xc3\x9f"
                       "e caf\xc3\xa9!"),
            "stra e caf ");
  // Greek and CJK vanish into one space each run.
  EXPECT_EQ(Normalized("a \xce\xb1\xce\xb2\xce\xb3 \xe6\x9d\xb1\xe4\xba\xac b"), "a b");
}

TEST(AsciiWordNormalizerTest, NfcComesFirst) {
  // "e" + COMBINING ACUTE composes to "é" under NFC, so the letter goes too.
  EXPECT_EQ(Normalized("caf"
                       "e\xcc\x81 x"),
            "caf x");
  // KELVIN SIGN is canonically "K" (NFC), then lower case.
  EXPECT_EQ(Normalized("5 \xe2\x84\xaa"), "5 k");
}

TEST(AsciiWordNormalizerTest, LowerCaseComesBeforeTheAsciiFilter) {
  // U+0130 lower-cases to "i" + U+0307 (full mapping): the "i" survives.
  EXPECT_EQ(Normalized("\xc4\xb0stanbul"), "i stanbul");
}

TEST(AsciiWordNormalizerTest, InvalidUtf8IsRepairedAndCounted) {
  uint64_t invalid = 0;
  EXPECT_EQ(Normalized("bad\xff\xfe bytes \xc3", &invalid), "bad bytes ");
  EXPECT_EQ(invalid, 3u);
}

}  // namespace
}  // namespace neardup::internal
