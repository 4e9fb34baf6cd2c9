#include "sink/copy_encoder.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup::internal {
namespace {

using namespace std::string_literals;

TEST(CopyEncoderTest, TextEscapesEverySpecialByteAndNothingElse) {
  CopyEncoder encoder(CopyFormat::kText);
  encoder.BeginRow(4);
  encoder.AddText("a\tb\nc\\d\re \"quoted\" 'single' \xC3\xA9\xE2\x82\xAC");
  encoder.AddFloat8(0.1);
  encoder.AddNull();
  encoder.AddInt8(-5);
  encoder.EndRow();
  encoder.Finish();
  EXPECT_EQ(encoder.buffer(),
            "a\\tb\\nc\\\\d\\re \"quoted\" 'single' \xC3\xA9\xE2\x82\xAC\t"
            "0.10000000000000001\t\\N\t-5\n");
}

TEST(CopyEncoderTest, TextHoldsABackslashBeforeN) {
  // "\N" as data must not read back as NULL.
  CopyEncoder encoder(CopyFormat::kText);
  encoder.BeginRow(1);
  encoder.AddText("\\N");
  encoder.EndRow();
  EXPECT_EQ(encoder.buffer(), "\\\\N\n");
}

TEST(CopyEncoderTest, BinaryHasTheDocumentedLayout) {
  CopyEncoder encoder(CopyFormat::kBinary);
  encoder.BeginRow(4);
  encoder.AddText("a\tb");
  encoder.AddInt4(7);
  encoder.AddFloat8(1.0);  // 0x3FF0000000000000
  encoder.AddNull();
  encoder.EndRow();
  encoder.Finish();
  const std::string expected = "PGCOPY\n\xff\r\n\0"s + "\0\0\0\0"s + "\0\0\0\0"s +  // header
                               "\0\4"s +                                            // 4 fields
                               "\0\0\0\3a\tb"s +                                    // text
                               "\0\0\0\4\0\0\0\7"s +                                // int4
                               "\0\0\0\x08\x3f\xf0\0\0\0\0\0\0"s +                  // float8
                               "\xff\xff\xff\xff"s +                                // NULL
                               "\xff\xff"s;                                         // trailer
  EXPECT_EQ(encoder.buffer(), expected);
}

TEST(StorableTextTest, ValidTextIsKeptAndInvalidBytesBecomeReplacementCharacters) {
  std::string scratch;
  Result<std::string_view> valid = StorableText("na\xC3\xAFve", "id", &scratch);
  ASSERT_TRUE(valid.ok());
  EXPECT_EQ(*valid, "na\xC3\xAFve");
  Result<std::string_view> invalid = StorableText(
      "a\xFF"
      "b",
      "id", &scratch);
  ASSERT_TRUE(invalid.ok());
  EXPECT_EQ(*invalid,
            "a\xEF\xBF\xBD"
            "b");
}

TEST(StorableTextTest, NulIsAClearError) {
  std::string scratch;
  Result<std::string_view> nul = StorableText("a\0b"s, "the id", &scratch);
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nul.status().message().find("the id holds a NUL byte"), std::string::npos);
}

}  // namespace
}  // namespace neardup::internal
