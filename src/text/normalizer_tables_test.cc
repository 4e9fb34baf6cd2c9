// BuildContextFreeTable's shortcut (code points that utf8proc maps to
// themselves, read from their properties without its calls) against the
// build that asks utf8proc for every code point: the same tables, for every
// option set the normalizer builds.
#include "text/normalizer_tables.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace neardup::internal {
namespace {

void ExpectSameBlockTable(const BlockTable& got, const BlockTable& want) {
  ASSERT_EQ(got.entries.size(), want.entries.size());
  for (size_t cp = 0; cp < want.entries.size(); ++cp) {
    ASSERT_EQ(got.entries[cp], want.entries[cp]) << "U+" << std::hex << cp;
  }
  EXPECT_EQ(got.identity_low, want.identity_low);
  EXPECT_EQ(got.identity_pages, want.identity_pages);
  EXPECT_EQ(got.special_unchanged, want.special_unchanged);
  EXPECT_EQ(got.special_removed, want.special_removed);
}

TEST(NormalizerTablesTest, ShortcutBuildsTheSameTables) {
  for (const bool nfkc : {true, false}) {
    for (const bool case_fold : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "nfkc " << nfkc << " case_fold " << case_fold);
      const utf8proc_option_t flags = Utf8procOptions({nfkc, case_fold});
      const ContextFreeTable want =
          BuildContextFreeTable(flags, TableBuild::kUtf8procEveryCodePoint);
      const ContextFreeTable got = BuildContextFreeTable(flags, TableBuild::kShortcut);
      ASSERT_EQ(got.entries.size(), 0x10000u);
      size_t context_free = 0;
      for (size_t cp = 0; cp < 0x10000; ++cp) {
        ASSERT_EQ(got.entries[cp], want.entries[cp]) << "U+" << std::hex << cp;
        context_free += (want.entries[cp] & kContextFree) != 0;
      }
      EXPECT_EQ(got.bytes, want.bytes);
      ExpectSameBlockTable(got.block[0], want.block[0]);
      ExpectSameBlockTable(got.block[1], want.block[1]);
      // Most of the BMP is context-free (so the comparison covers the
      // shortcut's cases), but not all of it (nor the others').
      EXPECT_GT(context_free, 40000u);
      EXPECT_LT(context_free, 0xF800u);
    }
  }
}

// Known code points have their outputs: the cases the shortcut must leave to
// utf8proc, one of each kind, and two it may take.
TEST(NormalizerTablesTest, KnownCodePointsHaveTheirOutputs) {
  const ContextFreeTable table =
      BuildContextFreeTable(Utf8procOptions({true, true}), TableBuild::kShortcut);
  auto output = [&](char32_t cp) {
    const uint32_t entry = table.entries[cp];
    return std::string(table.bytes, entry & kOffsetMask, (entry >> kLengthShift) & 15);
  };
  // Left to utf8proc.
  EXPECT_EQ(output(0xC9), "\xC3\xA9");  // É: case folded to é
  EXPECT_EQ(output(0xFB01), "fi");      // ﬁ: compatibility decomposition
  // Soft hyphen: ignorable, so not context-free (entry 0): left to the code
  // point loop, which removes it.
  EXPECT_EQ(table.entries[0xAD], 0u);
  // 가 (decomposed and composed again: itself either way) and 一 (the
  // shortcut's case) are themselves.
  EXPECT_EQ(output(0xAC00), "\xEA\xB0\x80");
  EXPECT_EQ(output(0x4E00), "\xE4\xB8\x80");
}

}  // namespace
}  // namespace neardup::internal
