// UTF-8 validation, decoding and repair: the first defence against outside
// bytes. Everything after the normalizer may assume valid UTF-8.
//
// Valid means well-formed per the Unicode Standard, ch. 3, Table 3-7: no
// overlong forms (C0, C1, E0 80..9F, F0 80..8F), no surrogates (ED A0..BF),
// nothing above U+10FFFF (F4 90.., F5..FF), no truncated sequences and no lone
// continuation bytes.
//
// Repair replaces each *maximal subpart* of an ill-formed sequence with one
// U+FFFD (the "substitution of maximal subparts" practice recommended by
// Unicode ch. 3 and used by the WHATWG Encoding Standard): a maximal subpart is
// the longest prefix of a well-formed sequence, or a single byte if no
// well-formed sequence starts with it. So "E1 80 41" (truncated 3-byte form)
// gives U+FFFD "A", while "ED A0 80" (a surrogate) gives three U+FFFD, since no
// well-formed sequence starts "ED A0".
//
// Cost: O(bytes); IsAscii reads 32 bytes per step. Thread safety: pure
// functions.
#ifndef NEARDUP_TEXT_UTF8_H_
#define NEARDUP_TEXT_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::internal {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;
// U+FFFD in UTF-8.
inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

// True when every byte is < 0x80.
bool IsAscii(std::string_view bytes);

// Index of the first byte >= 0x80 in bytes[from, size), or bytes.size().
// REQUIRES: from <= bytes.size().
size_t FindFirstNonAscii(std::string_view bytes, size_t from);

// True when `bytes` is well-formed UTF-8 (see above).
bool IsValidUtf8(std::string_view bytes);

struct DecodedCodePoint {
  char32_t code_point;  // kReplacementCharacter when !valid
  uint32_t length;      // bytes consumed, >= 1: the sequence or the maximal subpart
  bool valid;
};

// Decodes the code point starting at `p`. REQUIRES: p < end.
inline DecodedCodePoint DecodeUtf8(const char* p, const char* end) {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  const size_t available = static_cast<size_t>(end - p);
  const unsigned lead = s[0];
  if (lead < 0x80) return {lead, 1, true};
  // Length and the allowed range of the second byte (Table 3-7).
  uint32_t length;
  unsigned low = 0x80, high = 0xBF;
  char32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return {kReplacementCharacter, 1, false};  // 80..C1, F5..FF
  }
  if (available < 2 || s[1] < low || s[1] > high) return {kReplacementCharacter, 1, false};
  cp = (cp << 6) | (s[1] & 0x3F);
  for (uint32_t i = 2; i < length; ++i) {
    if (i >= available || (s[i] & 0xC0) != 0x80) return {kReplacementCharacter, i, false};
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  return {cp, length, true};
}

// Replaces `*out` with `bytes`, each maximal invalid subpart replaced by
// U+FFFD. Returns the number of replacements (0 iff `bytes` is valid).
// Reuses *out's capacity.
uint64_t SanitizeUtf8(std::string_view bytes, std::string* out);

// Writes the UTF-8 form of `code_point` to out[0..4) and returns its
// length. REQUIRES: a Unicode scalar value (<= U+10FFFF, not a surrogate).
inline size_t WriteUtf8(char32_t code_point, char* out) {
  if (code_point < 0x80) {
    out[0] = static_cast<char>(code_point);
    return 1;
  }
  if (code_point < 0x800) {
    out[0] = static_cast<char>(0xC0 | (code_point >> 6));
    out[1] = static_cast<char>(0x80 | (code_point & 0x3F));
    return 2;
  }
  if (code_point < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (code_point >> 12));
    out[1] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (code_point & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (code_point >> 18));
  out[1] = static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (code_point & 0x3F));
  return 4;
}

// Appends the UTF-8 form of `code_point`. REQUIRES: as WriteUtf8.
inline void AppendUtf8(char32_t code_point, std::string* out) {
  char buf[4];
  out->append(buf, WriteUtf8(code_point, buf));
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_UTF8_H_
