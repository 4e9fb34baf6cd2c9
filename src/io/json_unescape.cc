#include "io/json_unescape.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"
#include "io/json_unescape_avx512bw_inl.h"

namespace neardup::internal {
namespace {

// The byte a short escape stands for, by the ASCII byte after the
// backslash; 0: not a short escape (`u` included). simdjson's escape_map.
constexpr std::array<uint8_t, 128> kShortEscapes = [] {
  std::array<uint8_t, 128> table{};
  table['"'] = '"';
  table['\\'] = '\\';
  table['/'] = '/';
  table['b'] = '\b';
  table['f'] = '\f';
  table['n'] = '\n';
  table['r'] = '\r';
  table['t'] = '\t';
  return table;
}();

// Four hex digits, or 0xFFFFFFFF when one is not a hex digit (as simdjson's
// hex_to_u32_nocheck: every later test then fails).
uint32_t HexValue(const char* digits) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned char c = static_cast<unsigned char>(digits[i]);
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return 0xFFFFFFFF;
    }
    value = value << 4 | digit;
  }
  return value;
}

// simdjson's codepoint_to_utf8: 0 bytes (a refusal) beyond U+10FFFF;
// surrogate code points are written as three bytes, as it does.
size_t CodePointToUtf8(uint32_t code_point, char* out) {
  auto put = [&](int i, uint32_t byte) { out[i] = static_cast<char>(static_cast<uint8_t>(byte)); };
  if (code_point <= 0x7F) {
    put(0, code_point);
    return 1;
  }
  if (code_point <= 0x7FF) {
    put(0, (code_point >> 6) + 192);
    put(1, (code_point & 63) + 128);
    return 2;
  }
  if (code_point <= 0xFFFF) {
    put(0, (code_point >> 12) + 224);
    put(1, ((code_point >> 6) & 63) + 128);
    put(2, (code_point & 63) + 128);
    return 3;
  }
  if (code_point <= 0x10FFFF) {
    put(0, (code_point >> 18) + 240);
    put(1, ((code_point >> 12) & 63) + 128);
    put(2, ((code_point >> 6) & 63) + 128);
    put(3, (code_point & 63) + 128);
    return 4;
  }
  return 0;
}

}  // namespace

bool DecodeJsonEscape(const char** src, char** out) {
  const char* s = *src;
  const unsigned char c = static_cast<unsigned char>(s[1]);
  if (c != 'u') {
    const uint8_t value = c < 128 ? kShortEscapes[c] : 0;
    if (value == 0) return false;
    **out = static_cast<char>(value);
    ++*out;
    *src = s + 2;
    return true;
  }
  uint32_t code_point = HexValue(s + 2);
  s += 6;
  if (code_point >= 0xd800 && code_point < 0xdc00) {
    if (s[0] != '\\' || s[1] != 'u') return false;
    const uint32_t low_bits = HexValue(s + 2) - 0xdc00;  // wraps for a non-hex one
    if (low_bits >> 10) return false;
    code_point = (((code_point - 0xd800) << 10) | low_bits) + 0x10000;
    s += 6;
  } else if (code_point >= 0xdc00 && code_point <= 0xdfff) {
    return false;  // a low surrogate alone
  }
  const size_t written = CodePointToUtf8(code_point, *out);
  *out += written;
  *src = s;
  return written > 0;
}

const uint8_t* JsonShortEscapeTable() { return kShortEscapes.data(); }

namespace {

#define NEARDUP_UNESCAPE_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))

// Bit i set: byte i of the window is escaped (follows an escape's
// backslash), for a window that starts outside any escape. simdjson's
// stage-1 escape scanner (json_escape_scanner) without the carry in: a run
// of backslashes escapes the byte after it when its length is odd.
inline uint64_t EscapedBytes(uint64_t backslash) {
  constexpr uint64_t kEvenBits = 0x5555555555555555u;
  const uint64_t follows_escape = backslash << 1;
  const uint64_t odd_starts = backslash & ~kEvenBits & ~follows_escape;
  const uint64_t sequences_on_even = odd_starts + backslash;  // a carry out is never needed
  const uint64_t invert = sequences_on_even << 1;
  return (kEvenBits ^ invert) & follows_escape;
}

NEARDUP_UNESCAPE_TARGET std::optional<size_t> UnescapeAvx512(std::string_view body, char* dst) {
  const char* const src = body.data();
  const size_t size = body.size();
  const __m512i backslash = _mm512_set1_epi8('\\');
  const __m512i table_low = _mm512_loadu_si512(kShortEscapes.data());
  const __m512i table_high = _mm512_loadu_si512(kShortEscapes.data() + 64);
  char* out = dst;
  size_t pos = 0;
  while (pos < size) {
    const size_t available = size - pos;
    size_t length = available < 64 ? available : 64;
    const __m512i bytes = _mm512_maskz_loadu_epi8(LowBits(length), src + pos);
    const uint64_t backslashes = _mm512_mask_cmpeq_epi8_mask(LowBits(length), bytes, backslash);
    if (backslashes == 0) {
      _mm512_storeu_si512(out, bytes);
      out += length;
      pos += length;
      continue;
    }
    const uint64_t escaped = EscapedBytes(backslashes);
    uint64_t starts = backslashes & ~escaped;
    // An escape whose backslash ends the window finishes in the next one.
    if ((starts >> (length - 1)) & 1) {
      if (length == available) return std::nullopt;  // it would escape the closing quote
      --length;
      starts &= LowBits(length);
    }
    // Short escapes decode by one permute; a byte >= 0x80 or one with no
    // short meaning (`u`, or an invalid escape) stops the window there.
    const __m512i decoded = _mm512_permutex2var_epi8(table_low, bytes, table_high);
    const uint64_t not_short =
        _mm512_testn_epi8_mask(decoded, decoded) | _mm512_movepi8_mask(bytes);
    const uint64_t escaped_in = (starts << 1) & LowBits(length);
    const uint64_t stop = escaped_in & not_short;
    if (stop != 0) {
      length = static_cast<size_t>(std::countr_zero(stop)) - 1;  // the stopping escape's backslash
      starts &= LowBits(length);
    }
    const uint64_t keep = LowBits(length) & ~starts;
    const __m512i values = _mm512_mask_blend_epi8(starts << 1, bytes, decoded);
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(keep, values));
    out += std::popcount(keep);
    pos += length;
    if (stop != 0) {
      const char* at = src + pos;
      if (!DecodeJsonEscape(&at, &out)) return std::nullopt;
      pos = static_cast<size_t>(at - src);
    }
  }
  return static_cast<size_t>(out - dst);
}

// CPUs without VBMI/VBMI2 (json_unescape_avx512bw_inl.h): each window's
// backslashes by one compare, its runs copied by one 64-byte load and store
// each (masked: nothing past the body is read), its escapes decoded one at
// a time.
NEARDUP_UNESCAPE_BW_TARGET std::optional<size_t> UnescapeAvx512Bw(std::string_view body,
                                                                  char* dst) {
  const char* const begin = body.data();
  const size_t size = body.size();
  const __m512i backslash = _mm512_set1_epi8('\\');
  const char* src = begin;
  char* out = dst;
  uint64_t next_is_escaped = 0;
  for (size_t pos = 0; pos < size; pos += 64) {
    const size_t length = size - pos < 64 ? size - pos : 64;
    const char* const window_start = begin + pos;
    const __m512i bytes = _mm512_maskz_loadu_epi8(LowBits(length), window_start);
    const uint64_t backslashes = _mm512_cmpeq_epi8_mask(bytes, backslash);  // zeros past length
    uint64_t starts = 0;
    if ((backslashes | next_is_escaped) != 0) {
      AllEscapedBytes(backslashes, &next_is_escaped, &starts);
      // An escape that starts at the body's last byte would escape the closing
      // quote. A whole string body (REQUIRES) never ends so, since that quote
      // would not have ended it; this mirrors the portable loop's
      // `s + 1 == end` guard for a caller that breaks REQUIRES (no test can
      // reach it through simdjson).
      if (pos + length == size && ((starts >> (length - 1)) & 1) != 0) return std::nullopt;
    }
    if (!UnescapeWindowAvx512Bw<false>(window_start, bytes, starts, length, kShortEscapes.data(),
                                       &src, &out)) {
      return std::nullopt;
    }
  }
  return static_cast<size_t>(out - dst);
}

using UnescapeFunction = std::optional<size_t> (*)(std::string_view, char*);

UnescapeFunction ChooseUnescape() {
  if (DetectCpuPath() == CpuPath::kAvx512) {
    if (JsonUnescapeAvx512Supported()) return &UnescapeAvx512;
    if (JsonUnescapeAvx512BwSupported()) return &UnescapeAvx512Bw;
  }
  return &UnescapeJsonStringPortable;
}

}  // namespace

std::optional<size_t> UnescapeJsonStringPortable(std::string_view body, char* dst) {
  const char* s = body.data();
  const char* const end = s + body.size();
  char* out = dst;
  while (s < end) {
    const void* found = std::memchr(s, '\\', static_cast<size_t>(end - s));
    const char* escape = found != nullptr ? static_cast<const char*>(found) : end;
    std::memcpy(out, s, static_cast<size_t>(escape - s));
    out += escape - s;
    s = escape;
    if (s == end) break;
    if (s + 1 == end) return std::nullopt;  // it would escape the closing quote
    if (!DecodeJsonEscape(&s, &out)) return std::nullopt;
  }
  return static_cast<size_t>(out - dst);
}

std::optional<size_t> UnescapeJsonStringAvx512(std::string_view body, char* dst) {
  return UnescapeAvx512(body, dst);
}

std::optional<size_t> UnescapeJsonStringAvx512Bw(std::string_view body, char* dst) {
  return UnescapeAvx512Bw(body, dst);
}

bool JsonUnescapeAvx512BwSupported() {
  const CpuFeatures& features = HostCpuFeatures();
  // NEARDUP_UNESCAPE_BW_TARGET's extensions; its BMI1 comes with AVX-512F.
  return features.avx512f && features.avx512bw && features.bmi2;
}

bool JsonUnescapeAvx512Supported() {
  const CpuFeatures& features = HostCpuFeatures();
  return features.avx512f && features.avx512bw && features.avx512vbmi && features.avx512vbmi2 &&
         features.bmi2 && features.popcnt;
}

std::optional<size_t> UnescapeJsonString(std::string_view body, char* dst) {
  static const UnescapeFunction unescape = ChooseUnescape();
  return unescape(body, dst);
}

}  // namespace neardup::internal
