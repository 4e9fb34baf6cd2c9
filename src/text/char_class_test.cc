#include "text/char_class.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

namespace neardup::internal {
namespace {

bool CategoryIsWord(utf8proc_category_t c) {
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_NO;
}
bool CategoryIsPunctuation(utf8proc_category_t c) {
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

TEST(CharClassTest, AsciiTablesMatchUnicodeData) {
  for (char32_t c = 0; c < 0x80; ++c) {
    utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    EXPECT_EQ(IsWordCodePoint(c), CategoryIsWord(category)) << static_cast<int>(c);
    EXPECT_EQ(IsPunctuation(c), CategoryIsPunctuation(category)) << static_cast<int>(c);
  }
  EXPECT_TRUE(IsPunctuation('_'));   // Pc
  EXPECT_FALSE(IsPunctuation('$'));  // Sc
  EXPECT_FALSE(IsPunctuation('+'));  // Sm
}

TEST(CharClassTest, WhiteSpaceIsTheWhiteSpaceProperty) {
  // White_Space = Zs, Zl, Zp, plus the controls \t..\r and U+0085.
  int count = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    bool separator = category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL ||
                     category == UTF8PROC_CATEGORY_ZP;
    bool control_space = (c >= 0x09 && c <= 0x0D) || c == 0x85;
    ASSERT_EQ(IsUnicodeWhiteSpace(c), separator || control_space)
        << std::hex << static_cast<uint32_t>(c);
    count += IsUnicodeWhiteSpace(c);
  }
  EXPECT_EQ(count, 25);                       // PropList.txt
  EXPECT_FALSE(IsUnicodeWhiteSpace(0x200B));  // zero-width space is Cf
}

TEST(CharClassTest, NonAsciiCategories) {
  EXPECT_TRUE(IsWordCodePoint(0xE9));      // é Ll
  EXPECT_TRUE(IsWordCodePoint(0x301));     // combining acute Mn
  EXPECT_TRUE(IsWordCodePoint(0x6211));    // 我 Lo
  EXPECT_TRUE(IsWordCodePoint(0x0663));    // Arabic-Indic three Nd
  EXPECT_FALSE(IsWordCodePoint(0x1F355));  // pizza So
  EXPECT_TRUE(IsPunctuation(0x3002));      // ideographic full stop Po
  EXPECT_TRUE(IsPunctuation(0xAB));        // « Pi
  EXPECT_TRUE(IsPunctuation(0x2014));      // em dash Pd
  EXPECT_FALSE(IsPunctuation(0x20AC));     // € Sc
}

}  // namespace
}  // namespace neardup::internal

namespace neardup::internal {
namespace {

// The BMP bitsets against utf8proc_category for every code point (and a
// few above the BMP, which ask utf8proc directly).
TEST(CharClassTest, EveryCodePointMatchesUtf8procCategory) {
  for (char32_t c = 0x80; c < 0x110000; c += c < 0x10000 ? 1 : 97) {
    const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    ASSERT_EQ(IsNonAsciiWordCodePoint(c),
              category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_NO)
        << std::hex << static_cast<uint32_t>(c);
    ASSERT_EQ(IsNonAsciiPunctuation(c),
              category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_PO)
        << std::hex << static_cast<uint32_t>(c);
  }
}

}  // namespace
}  // namespace neardup::internal
