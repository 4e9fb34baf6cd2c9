// Character classes used by the normalizer and the tokenizers, from the
// Unicode Character Database as shipped in utf8proc:
// - white space: the White_Space property (PropList.txt);
// - word characters: general categories L* (letters), M* (marks), N* (numbers);
// - punctuation: general categories P* (Pc Pd Ps Pe Pi Pf Po).
// ASCII answers come from constexpr tables (checked against utf8proc in
// char_class_test.cc); other code points call utf8proc_category.
//
// Frozen with kRecipeFormatVersion: a new Unicode version in utf8proc that
// moved a code point between these classes would change tokens.
// Cost: O(1). Thread safety: pure functions.
#ifndef NEARDUP_TEXT_CHAR_CLASS_H_
#define NEARDUP_TEXT_CHAR_CLASS_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace neardup::internal {

// Bits of kAsciiClass.
inline constexpr uint8_t kAsciiWordBit = 1;         // [0-9A-Za-z]
inline constexpr uint8_t kAsciiWhiteSpaceBit = 2;   // \t \n \v \f \r space
inline constexpr uint8_t kAsciiPunctuationBit = 4;  // P*: !"#%&'()*,-./:;?@[\]_{}

inline constexpr std::array<uint8_t, 128> kAsciiClass = [] {
  std::array<uint8_t, 128> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] |= kAsciiWordBit;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] |= kAsciiWordBit;
  for (int c = 'a'; c <= 'z'; ++c) table[c] |= kAsciiWordBit;
  for (int c : {'\t', '\n', '\v', '\f', '\r', ' '}) table[c] |= kAsciiWhiteSpaceBit;
  // $ + < = > ^ ` | ~ are symbols (Sc, Sm, Sk), not punctuation.
  for (char c : std::string_view("!\"#%&'()*,-./:;?@[\\]_{}")) {
    table[static_cast<unsigned char>(c)] |= kAsciiPunctuationBit;
  }
  return table;
}();

// The Unicode White_Space property.
constexpr bool IsUnicodeWhiteSpace(char32_t c) {
  if (c < 0x80) return (kAsciiClass[c] & kAsciiWhiteSpaceBit) != 0;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// General category L*, M* or N*, for code points >= 0x80.
bool IsNonAsciiWordCodePoint(char32_t c);
// General category P*, for code points >= 0x80.
bool IsNonAsciiPunctuation(char32_t c);

// IsNonAsciiWordCodePoint of every BMP code point c (ASCII included, as
// IsWordCodePoint) as a bitset: bit c % 64 of word c / 64, 1024 words (8 KB),
// built on first use. For kernels that look up many code points at once (and
// read it as 2048 little-endian 32-bit words, bit c % 32 of word c / 32).
const uint64_t* BmpWordBitset();

inline bool IsWordCodePoint(char32_t c) {
  if (c < 0x80) return (kAsciiClass[c] & kAsciiWordBit) != 0;
  return IsNonAsciiWordCodePoint(c);
}

inline bool IsPunctuation(char32_t c) {
  if (c < 0x80) return (kAsciiClass[c] & kAsciiPunctuationBit) != 0;
  return IsNonAsciiPunctuation(c);
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_CHAR_CLASS_H_
