#include "util/json_writer.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace neardup::internal {
namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

TEST(JsonWriterTest, EscapesSpecialCharacters) {
  EXPECT_EQ(Quoted("plain"), "\"plain\"");
  EXPECT_EQ(Quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Quoted("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(Quoted(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(Quoted(std::string("nul\0", 4)), "\"nul\\u0000\"");
}

// VerbatimJsonPrefix against the byte predicate: every byte value at every
// position of strings of 1-24 bytes (inside the eight-byte words and in the
// tail), the rest plain.
TEST(JsonWriterTest, VerbatimPrefixStopsAtTheFirstByteToEscape) {
  const auto plain = [](unsigned char byte) {
    return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
  };
  for (size_t size = 1; size <= 24; ++size) {
    EXPECT_EQ(VerbatimJsonPrefix(std::string(size, 'x')), size);
    for (size_t at = 0; at < size; ++at) {
      for (int value = 0; value < 256; ++value) {
        std::string s(size, 'x');
        s[at] = static_cast<char>(value);
        const size_t want = plain(static_cast<unsigned char>(value)) ? size : at;
        ASSERT_EQ(VerbatimJsonPrefix(s), want)
            << "size " << size << " byte " << value << " at " << at;
      }
    }
  }
  EXPECT_EQ(VerbatimJsonPrefix(""), 0u);
}

TEST(JsonWriterTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Quoted("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"");
  EXPECT_EQ(Quoted("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(Quoted("\xc3"), "\"\\ufffd\"");                        // truncated
  EXPECT_EQ(Quoted("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong
  EXPECT_EQ(Quoted("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

TEST(JsonWriterTest, HexIsSixteenDigits) {
  EXPECT_EQ(Hex64(0), "0000000000000000");
  EXPECT_EQ(Hex64(0x3aa423c558350ff4ULL), "3aa423c558350ff4");
  EXPECT_EQ(Hex64(~0ULL), "ffffffffffffffff");
}

TEST(JsonWriterTest, Doubles) {
  std::string out;
  AppendJsonDouble(&out, 0.953125);
  EXPECT_EQ(out, "0.953125");
  out.clear();
  AppendJsonDouble(&out, 1.0);
  EXPECT_EQ(out, "1");
  out.clear();
  AppendJsonDouble(&out, 0.0);
  EXPECT_EQ(out, "0");
}

// The digits are printf("%.6g")'s (session 13 prints them with to_chars):
// similarities, exponents both ways, rounding at the sixth digit (also
// across the switch to exponent form), negatives, every binary exponent.
TEST(JsonWriterTest, DoublesArePrintedAsPercentPointSixG) {
  std::vector<double> values = {0.0,   1.0,        0.5,       1.0 / 3,  2.0 / 3,   0.8,
                                0.912, 0.99999949, 0.9999995, 123456.5, 1234567.0, 1e-5,
                                1e-4,  -2.5e-7,    6.02e23,   -0.0625,  1e300,     5e-324};
  std::mt19937_64 random(14);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) values.push_back(unit(random));
  // Where %g switches between fixed and exponent form only after rounding
  // to 6 digits, negative zero, and the extremes.
  for (const double edge : {999999.5, 999999.4, 9.9999951e-5, 9.9999949e-5, -0.0, DBL_MAX, DBL_MIN,
                            -DBL_MIN, -DBL_MAX, DBL_TRUE_MIN}) {
    values.push_back(edge);
  }
  // Every binary exponent, denormals included.
  for (int e = -1074; e <= 1023; ++e) {
    for (int i = 0; i < 3; ++i) values.push_back(std::ldexp(unit(random), e));
    values.push_back(-std::ldexp(unit(random), e));
  }
  for (int i = 0; i <= 64; ++i) values.push_back(1.0 - static_cast<double>(i) / 64);
  for (const double value : values) {
    char expected[64];
    std::snprintf(expected, sizeof(expected), "%.6g", value);
    std::string out;
    AppendJsonDouble(&out, value);
    EXPECT_EQ(out, expected) << value;
  }
}

}  // namespace
}  // namespace neardup::internal
