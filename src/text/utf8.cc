#include "text/utf8.h"

#include <bit>
#include <cstring>

namespace neardup::internal {
namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ULL;

uint64_t LoadWord(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// Length of the leading all-ASCII prefix of [p, end), rounded down to whole
// 8-byte words (the caller finishes byte by byte).
size_t AsciiWordPrefix(const char* p, const char* end) {
  const char* start = p;
  while (end - p >= 8 && (LoadWord(p) & kHighBits) == 0) p += 8;
  return static_cast<size_t>(p - start);
}

}  // namespace

bool IsAscii(std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  // Four words per step with one branch: the common all-ASCII case runs at
  // memory speed.
  while (end - p >= 32) {
    uint64_t any = LoadWord(p) | LoadWord(p + 8) | LoadWord(p + 16) | LoadWord(p + 24);
    if (any & kHighBits) return false;
    p += 32;
  }
  while (end - p >= 8) {
    if (LoadWord(p) & kHighBits) return false;
    p += 8;
  }
  unsigned char any = 0;
  for (; p < end; ++p) any |= static_cast<unsigned char>(*p);
  return (any & 0x80) == 0;
}

size_t FindFirstNonAscii(std::string_view bytes, size_t from) {
  size_t i = from;
  if constexpr (std::endian::native == std::endian::little) {
    // The lowest set high bit marks the first non-ASCII byte of the word.
    while (bytes.size() - i >= 8) {
      uint64_t high = LoadWord(bytes.data() + i) & kHighBits;
      if (high != 0) return i + static_cast<size_t>(std::countr_zero(high)) / 8;
      i += 8;
    }
  }
  for (; i < bytes.size(); ++i) {
    if (static_cast<unsigned char>(bytes[i]) >= 0x80) return i;
  }
  return bytes.size();
}

bool IsValidUtf8(std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  while (p < end) {
    p += AsciiWordPrefix(p, end);
    if (p == end) break;
    DecodedCodePoint d = DecodeUtf8(p, end);
    if (!d.valid) return false;
    p += d.length;
  }
  return true;
}

uint64_t SanitizeUtf8(std::string_view bytes, std::string* out) {
  out->clear();
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  uint64_t replacements = 0;
  while (p < end) {
    // Copy the longest valid run in one append.
    const char* run = p;
    while (p < end) {
      p += AsciiWordPrefix(p, end);
      if (p == end) break;
      DecodedCodePoint d = DecodeUtf8(p, end);
      if (!d.valid) break;
      p += d.length;
    }
    out->append(run, static_cast<size_t>(p - run));
    if (p == end) break;
    DecodedCodePoint d = DecodeUtf8(p, end);
    out->append(kReplacementUtf8);
    ++replacements;
    p += d.length;
  }
  return replacements;
}

}  // namespace neardup::internal
