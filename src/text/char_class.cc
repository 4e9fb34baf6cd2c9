#include "text/char_class.h"

#include <utf8proc.h>

#include <array>
#include <cstdint>

namespace neardup::internal {
namespace {

bool CategoryIsWord(utf8proc_category_t category) {
  return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_NO;
}

bool CategoryIsPunctuation(utf8proc_category_t category) {
  return category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_PO;
}

// The two categories of every BMP code point as bitsets (16 KB), built once
// from utf8proc: the tokenizer and the normalizer ask per non-ASCII code
// point, and a bit test is several times cheaper than utf8proc_category
// (a call through the PLT and a two-level property lookup). Code points
// above the BMP still ask utf8proc.
struct BmpCategories {
  std::array<uint64_t, 0x10000 / 64> word{};
  std::array<uint64_t, 0x10000 / 64> punctuation{};

  BmpCategories() {
    for (utf8proc_int32_t c = 0; c < 0x10000; ++c) {
      const utf8proc_category_t category = utf8proc_category(c);
      word[c / 64] |= static_cast<uint64_t>(CategoryIsWord(category)) << (c % 64);
      punctuation[c / 64] |= static_cast<uint64_t>(CategoryIsPunctuation(category)) << (c % 64);
    }
  }
};

const BmpCategories& Bmp() {
  static const BmpCategories categories;
  return categories;
}

}  // namespace

bool IsNonAsciiWordCodePoint(char32_t c) {
  if (c < 0x10000) return (Bmp().word[c / 64] >> (c % 64)) & 1;
  return CategoryIsWord(utf8proc_category(static_cast<utf8proc_int32_t>(c)));
}

const uint64_t* BmpWordBitset() { return Bmp().word.data(); }

bool IsNonAsciiPunctuation(char32_t c) {
  if (c < 0x10000) return (Bmp().punctuation[c / 64] >> (c % 64)) & 1;
  return CategoryIsPunctuation(utf8proc_category(static_cast<utf8proc_int32_t>(c)));
}

}  // namespace neardup::internal
