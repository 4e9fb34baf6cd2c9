#include "neardup/json_writer.h"

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
  NEARDUP_CHECK(std::isfinite(value)) << "JSON cannot hold " << value;
  // to_chars with a precision prints what printf("%.6g") prints (the
  // standard defines it so), without printf's format parsing and locale
  // (session 13: printf was ~1.7% of a batch POST's server CPU, one
  // similarity an answer).
  char buffer[32];
  const std::to_chars_result end =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, 6);
  NEARDUP_CHECK(end.ec == std::errc()) << "cannot print " << value;
  out->append(buffer, end.ptr);
}

namespace internal {

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
