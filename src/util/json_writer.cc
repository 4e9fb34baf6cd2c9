#include "neardup/json_writer.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "neardup/check.h"
#include "util/json_writer.h"

namespace neardup {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and values above U+10FFFF are invalid).
size_t ValidUtf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = s.size() - i;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    return (n >= 2 && (byte(i + 1) & 0xc0) == 0x80) ? 2 : 0;
  }
  if (c >= 0xe0 && c <= 0xef) {
    if (n < 3) return 0;
    unsigned char c1 = byte(i + 1);
    if ((c1 & 0xc0) != 0x80 || (byte(i + 2) & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && c1 < 0xa0) return 0;   // overlong
    if (c == 0xed && c1 >= 0xa0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (n < 4) return 0;
    unsigned char c1 = byte(i + 1);
    if ((c1 & 0xc0) != 0x80 || (byte(i + 2) & 0xc0) != 0x80 || (byte(i + 3) & 0xc0) != 0x80) {
      return 0;
    }
    if (c == 0xf0 && c1 < 0x90) return 0;   // overlong
    if (c == 0xf4 && c1 >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view value) {
  out->push_back('"');
  size_t i = internal::VerbatimJsonPrefix(value);
  out->append(value.data(), i);
  while (i < value.size()) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHexDigits[c >> 4]);
      out->push_back(kHexDigits[c & 0xf]);
      ++i;
      continue;
    }
    size_t length = ValidUtf8Length(value, i);
    if (length == 0) {
      out->append("\\ufffd");
      ++i;
    } else {
      out->append(value.substr(i, length));
      i += length;
    }
  }
  out->push_back('"');
}

void AppendHex64(std::string* out, uint64_t value) {
  char buffer[16];
  for (int i = 15; i >= 0; --i) {
    buffer[i] = kHexDigits[value & 0xf];
    value >>= 4;
  }
  out->append(buffer, 16);
}

std::string Hex64(uint64_t value) {
  std::string out;
  AppendHex64(&out, value);
  return out;
}

void AppendJsonDouble(std::string* out, double value) {
  char buffer[internal::kMaxJsonDoubleChars];
  const char* end = internal::WriteJsonDouble(buffer, value);
  out->append(buffer, static_cast<size_t>(end - buffer));
}

namespace internal {
namespace {

constexpr uint64_t kPowersOfFive[] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125};

// printf("%.6g") of a value in [2^-13, 1]. value = mantissa * 2^exponent
// exactly, so value * 10^power = mantissa * 5^power * 2^(exponent + power):
// an integer product (< 2^53 * 5^9 < 2^74) shifted right by 47-56 bits, its
// floor and remainder exact. %g writes 6 significant digits in fixed form
// for a decimal exponent X (of the value rounded to 6 digits) in [-4, 6),
// which every value here has: the digits after the point are 5 - X, the
// trailing zeros dropped, and the point too when no digit follows it.
char* WriteUnitScore(char* out, double value) {
  const auto bits = std::bit_cast<uint64_t>(value);
  const uint64_t mantissa = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int exponent = static_cast<int>(bits >> 52) - 1075;
  // A guess of X (the double constants are within an ulp of 10^-k), made
  // exact by the digit count below.
  int decimal_exponent = value >= 1.0     ? 0
                         : value >= 0.1   ? -1
                         : value >= 0.01  ? -2
                         : value >= 0.001 ? -3
                                          : -4;
  unsigned __int128 scaled = 0;
  uint64_t digits = 0;
  int shift = 0;
  for (;;) {
    const int power = 5 - decimal_exponent;
    NEARDUP_DCHECK(power >= 5 && power <= 9) << value;
    scaled = static_cast<unsigned __int128>(mantissa) * kPowersOfFive[power];
    shift = -(exponent + power);
    digits = static_cast<uint64_t>(scaled >> shift);
    if (digits < 100000) {
      --decimal_exponent;
    } else if (digits >= 1000000) {
      ++decimal_exponent;
    } else {
      break;
    }
  }
  // Round half to even on the exact remainder, as printf does.
  const unsigned __int128 one = 1;
  const unsigned __int128 rest = scaled & ((one << shift) - 1);
  const unsigned __int128 half = one << (shift - 1);
  if (rest > half || (rest == half && (digits & 1) != 0)) ++digits;
  if (digits == 1000000) {  // 0.9999996 rounds up to 1.00000: the next decade
    digits = 100000;
    ++decimal_exponent;
  }
  char text[6];
  for (int i = 5; i >= 0; --i) {
    text[i] = static_cast<char>('0' + digits % 10);
    digits /= 10;
  }
  int length = 6;
  while (length > 1 && text[length - 1] == '0') --length;
  if (decimal_exponent == 0) {
    *out++ = text[0];
    if (length > 1) {
      *out++ = '.';
      std::memcpy(out, text + 1, length - 1);
      out += length - 1;
    }
    return out;
  }
  *out++ = '0';
  *out++ = '.';
  for (int i = 1; i < -decimal_exponent; ++i) *out++ = '0';
  std::memcpy(out, text, length);
  return out + length;
}

}  // namespace

char* WriteJsonDouble(char* out, double value) {
  if (value >= 0x1p-13 && value <= 1.0) return WriteUnitScore(out, value);
  NEARDUP_CHECK(std::isfinite(value)) << "JSON cannot hold " << value;
  if (value == 0 && !std::signbit(value)) {
    *out = '0';
    return out + 1;
  }
  // to_chars with a precision prints what printf("%.6g") prints (the
  // standard defines it so), without printf's format parsing and locale.
  const std::to_chars_result end =
      std::to_chars(out, out + kMaxJsonDoubleChars, value, std::chars_format::general, 6);
  NEARDUP_CHECK(end.ec == std::errc()) << "cannot print " << value;
  return end.ptr;
}

size_t VerbatimJsonPrefix(std::string_view value) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  size_t at = 0;
  for (; at + 8 <= value.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, value.data() + at, 8);
    // A byte needs care when its high bit ends up set in `found`. `| word`
    // sets it for every byte >= 0x80. A zero byte of v sets it in
    // (v - kOnes) & ~v, and a byte < 0x20 sets it in word - 0x20 per byte.
    // A borrow into the next byte (which could set its high bit wrongly)
    // only starts at a byte below the subtrahend, itself a real hit, so a
    // word without a hit is exact; a word with one is left to the byte loop,
    // which finds where.
    const uint64_t quote = word ^ (kOnes * '"');
    const uint64_t backslash = word ^ (kOnes * '\\');
    const uint64_t found = (word - kOnes * 0x20) | ((quote - kOnes) & ~quote) |
                           ((backslash - kOnes) & ~backslash) | word;
    if ((found & kHigh) != 0) break;
  }
  for (; at < value.size(); ++at) {
    const auto byte = static_cast<unsigned char>(value[at]);
    if (byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\') break;
  }
  return at;
}

}  // namespace internal
}  // namespace neardup
