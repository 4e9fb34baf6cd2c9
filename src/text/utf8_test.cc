#include "text/utf8.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// An oracle written differently from DecodeUtf8: decode by the bit pattern of
// the lead byte, then reject overlong forms, surrogates and values above
// U+10FFFF by the decoded value.
bool OracleValid(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int n;
    uint32_t cp;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b >> 5) == 0x6) {
      n = 2;
      cp = b & 0x1F;
    } else if ((b >> 4) == 0xE) {
      n = 3;
      cp = b & 0x0F;
    } else if ((b >> 3) == 0x1E) {
      n = 4;
      cp = b & 0x07;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// Random bytes biased towards UTF-8 structure, so valid and almost-valid
// sequences both occur often.
std::string RandomUtf8ish(SplitMix64& rng, size_t max_length) {
  static const unsigned char kBytes[] = {'a',  'Z',  ' ',  0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                         0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                         0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::string s;
  size_t length = rng.Next() % (max_length + 1);
  for (size_t i = 0; i < length; ++i) {
    uint64_t r = rng.Next();
    s.push_back(static_cast<char>(r % 2 ? kBytes[(r >> 8) % sizeof(kBytes)] : (r >> 8) & 0xFF));
  }
  return s;
}

std::string Replace(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '~') {
      out += kReplacementUtf8;
    } else {
      out += c;
    }
  }
  return out;
}

TEST(IsAsciiTest, FindsAHighByteAtEveryPosition) {
  EXPECT_TRUE(IsAscii(""));
  for (size_t length = 1; length <= 80; ++length) {
    std::string s(length, 'a');
    EXPECT_TRUE(IsAscii(s));
    for (size_t pos = 0; pos < length; ++pos) {
      std::string t = s;
      t[pos] = static_cast<char>(0x80 | pos);
      EXPECT_FALSE(IsAscii(t)) << "length " << length << " pos " << pos;
    }
  }
  EXPECT_TRUE(IsAscii(std::string("\0\x7f\x01", 3)));
}

TEST(FindFirstNonAsciiTest, EveryPositionAndStart) {
  for (size_t length = 0; length <= 40; ++length) {
    std::string s(length, 'x');
    for (size_t from = 0; from <= length; ++from) {
      EXPECT_EQ(FindFirstNonAscii(s, from), length);
    }
    for (size_t pos = 0; pos < length; ++pos) {
      std::string t = s;
      t[pos] = '\xC3';
      if (pos + 2 < length) t[pos + 2] = '\xFF';  // a later one must not matter
      for (size_t from = 0; from <= length; ++from) {
        size_t want = from <= pos ? pos : (pos + 2 < length && from <= pos + 2 ? pos + 2 : length);
        ASSERT_EQ(FindFirstNonAscii(t, from), want) << length << " " << pos << " " << from;
      }
    }
  }
}

TEST(Utf8Test, BoundaryCodePointsAreValid) {
  for (const char* s : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                        "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
  }
  DecodedCodePoint d = DecodeUtf8("\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF" + 4);
  EXPECT_TRUE(d.valid);
  EXPECT_EQ(d.code_point, 0x10FFFFu);
  EXPECT_EQ(d.length, 4u);
}

TEST(Utf8Test, IllFormedSequencesAreInvalid) {
  for (const char* s :
       {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\x80", "\xE0\x9F\xBF", "\xED\xA0\x80",
        "\xED\xBF\xBF", "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80",
        "\xF5\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82", "\xF0\x9F\x98"}) {
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(std::string(s));
  }
}

TEST(SanitizeUtf8Test, MaximalSubpartsBecomeOneReplacementEach) {
  struct Case {
    std::string in;
    std::string want;  // '~' stands for U+FFFD
    uint64_t replacements;
  };
  const std::vector<Case> cases = {
      {"", "", 0},
      {"caf\xC3\xA9", "caf\xC3\xA9", 0},
      {"\xE1\x80"
       "A",
       "~A", 1},                        // truncated 3-byte form: one subpart
      {"\xED\xA0\x80", "~~~", 3},       // surrogate: ED alone, then two strays
      {"\xC0\xAF", "~~", 2},            // overlong '/': C0 is never a lead
      {"\xE0\x80\x80", "~~~", 3},       // overlong 3-byte form
      {"\xF4\x90\x80\x80", "~~~~", 4},  // above U+10FFFF
      {"ab\xF0\x9F\x98", "ab~", 1},     // truncated at the end
      {"\xF0\x9F\x98\xF0\x9F\x98\x80", "~\xF0\x9F\x98\x80", 1},
      {"\xFF\xFE", "~~", 2},
      // Unicode ch. 3, Table 3-8 (U+FFFD for maximal subparts).
      {"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", "a~~~b~c~~d", 6},
  };
  std::string out = "stale contents";
  for (const Case& c : cases) {
    EXPECT_EQ(SanitizeUtf8(c.in, &out), c.replacements) << ::testing::PrintToString(c.in);
    EXPECT_EQ(out, Replace(c.want)) << ::testing::PrintToString(c.in);
  }
}

TEST(Utf8Test, ValidatorAndSanitizerAgreeWithOracleOnRandomBytes) {
  SplitMix64 rng(7);
  std::string out;
  for (int i = 0; i < 20000; ++i) {
    std::string s = RandomUtf8ish(rng, 24);
    const bool valid = OracleValid(s);
    ASSERT_EQ(IsValidUtf8(s), valid) << ::testing::PrintToString(s);
    uint64_t replacements = SanitizeUtf8(s, &out);
    ASSERT_EQ(replacements == 0, valid) << ::testing::PrintToString(s);
    ASSERT_TRUE(OracleValid(out)) << ::testing::PrintToString(s);
    if (valid) {
      ASSERT_EQ(out, s);
    }
    // Repair is idempotent.
    std::string again;
    ASSERT_EQ(SanitizeUtf8(out, &again), 0u);
    ASSERT_EQ(again, out);
  }
}

TEST(Utf8Test, EncodeDecodeRoundTripsEveryScalarValue) {
  std::string s;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    s.clear();
    AppendUtf8(cp, &s);
    DecodedCodePoint d = DecodeUtf8(s.data(), s.data() + s.size());
    ASSERT_TRUE(d.valid) << static_cast<uint32_t>(cp);
    ASSERT_EQ(d.code_point, cp);
    ASSERT_EQ(d.length, s.size());
  }
}

TEST(Utf8Test, DecodeNeverReadsPastEnd) {
  // A lead byte whose continuation lies beyond `end` must not be read.
  const char buffer[] = "\xE2\x82\xAC";
  DecodedCodePoint d = DecodeUtf8(buffer, buffer + 2);
  EXPECT_FALSE(d.valid);
  EXPECT_EQ(d.length, 2u);
  EXPECT_EQ(d.code_point, kReplacementCharacter);
}

}  // namespace
}  // namespace neardup::internal
