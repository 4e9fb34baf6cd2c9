#include "util/json_writer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::internal {
namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

// "" when AppendJsonDouble writes what printf("%.6g") prints for value;
// otherwise both texts, for the failure message.
std::string AppendedAndPrinted(double value) {
  char expected[64];
  std::snprintf(expected, sizeof(expected), "%.6g", value);
  std::string out;
  AppendJsonDouble(&out, value);
  return out == expected ? "" : "AppendJsonDouble " + out + ", printf " + expected;
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
  for (const double value : values) EXPECT_EQ(AppendedAndPrinted(value), "") << value;
}

// WriteJsonDouble's integer path for [2^-13, 1] against today's text (to_chars
// general with precision 6, itself printf("%.6g")): every value a pair's
// similarity takes from a sketch (MinHash k/128, SimHash 1 - d/64 and
// 1 - d/128), every Jaccard i/j with j <= 1000, every k/2^n with n <= 14
// (exact ties at the seventh digit, which round half to even), both sides of
// every rounding midpoint of the 6-digit decimals in [0.1, 1] and a sample
// below, the switches of decade, and random doubles and bit patterns.
TEST(JsonWriterTest, UnitScoresAreWrittenAsToCharsWritesThem) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                std::nextafter(1.0, 0.0),
                                0x1p-13,
                                std::nextafter(0x1p-13, 0.0),
                                std::nextafter(0x1p-13, 1.0),
                                1e-4,
                                0.9999995,
                                0.99999949999999,
                                0.99999950000001,
                                0.00099999949,
                                0.0009999995,
                                0.00099999951,
                                0.000999999,
                                0.0099999995,
                                0.099999995,
                                0.5};
  for (const double power : {0.1, 0.01, 0.001, 0.0001}) {
    double below = power, above = power;
    for (int i = 0; i < 4; ++i) {
      values.push_back(below);
      values.push_back(above);
      below = std::nextafter(below, 0.0);
      above = std::nextafter(above, 1.0);
    }
  }
  for (int k = 0; k <= 128; ++k) values.push_back(k / 128.0);
  for (int d = 0; d <= 128; ++d) {
    values.push_back(1.0 - d / 64.0);
    values.push_back(1.0 - d / 128.0);
  }
  for (int j = 1; j <= 1000; ++j) {
    for (int i = 0; i <= j; ++i) values.push_back(static_cast<double>(i) / j);
  }
  for (int n = 0; n <= 14; ++n) {
    for (int k = 0; k <= (1 << n); ++k) values.push_back(std::ldexp(k, -n));
  }
  // Midpoints (q + 1/2) * 10^(decimal_exponent - 5) of 6-digit decimals q,
  // correctly rounded by the division, and their neighbours: one lies on
  // each side of the exact midpoint.
  const auto add_midpoint = [&](int q, int decimal_exponent) {
    const double midpoint = (2.0 * q + 1) / (2 * std::pow(10.0, 5 - decimal_exponent));
    values.push_back(midpoint);
    values.push_back(std::nextafter(midpoint, 0.0));
    values.push_back(std::nextafter(midpoint, 2.0));
  };
  for (int q = 100000; q <= 999999; ++q) add_midpoint(q, -1);
  std::mt19937_64 random(21);
  for (int decimal_exponent = -4; decimal_exponent <= -2; ++decimal_exponent) {
    std::uniform_int_distribution<int> digits(100000, 999999);
    for (int i = 0; i < 20000; ++i) add_midpoint(digits(random), decimal_exponent);
    add_midpoint(999999, decimal_exponent);
    add_midpoint(100000, decimal_exponent);
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 100000; ++i) values.push_back(unit(random));
  const uint64_t low = std::bit_cast<uint64_t>(0x1p-14), high = std::bit_cast<uint64_t>(1.0);
  std::uniform_int_distribution<uint64_t> bits(low, high);
  for (int i = 0; i < 100000; ++i) values.push_back(std::bit_cast<double>(bits(random)));
  size_t mismatches = 0;
  for (const double value : values) {
    char expected[64];
    const std::to_chars_result end =
        std::to_chars(expected, expected + sizeof(expected), value, std::chars_format::general, 6);
    char written[kMaxJsonDoubleChars];
    const char* written_end = WriteJsonDouble(written, value);
    const std::string_view want(expected, end.ptr - expected);
    const std::string_view got(written, written_end - written);
    if (got != want && ++mismatches <= 20) {
      ADD_FAILURE() << std::hexfloat << value << std::defaultfloat << ": wrote " << got
                    << ", to_chars " << want;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << values.size();
}

// The same path by way of AppendJsonDouble, against printf itself.
TEST(JsonWriterTest, UnitScoresMatchPrintf) {
  std::vector<double> values;
  for (int k = 0; k <= 128; ++k) values.push_back(k / 128.0);
  for (int j = 1; j <= 300; ++j) {
    for (int i = 0; i <= j; ++i) values.push_back(static_cast<double>(i) / j);
  }
  for (const double value : values) ASSERT_EQ(AppendedAndPrinted(value), "") << value;
}

}  // namespace
}  // namespace neardup::internal
