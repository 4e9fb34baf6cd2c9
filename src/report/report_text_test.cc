#include "report/report_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace neardup::internal {
namespace {

std::string Html(std::string_view text) {
  std::string out;
  AppendHtmlEscaped(&out, text);
  return out;
}

std::string Json(std::string_view text) {
  std::string out;
  AppendScriptJsonString(&out, text);
  return out;
}

TEST(ReportTextTest, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(Html("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(Html("\"onload=\"x' & y"), "&quot;onload=&quot;x&#39; &amp; y");
  EXPECT_EQ(Html("caf\xC3\xA9"), "caf\xC3\xA9");
  // Invalid UTF-8 never reaches the page as raw bytes.
  EXPECT_EQ(Html("a\xFF"
                 "b"),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(ReportTextTest, ScriptJsonCannotCloseTheElement) {
  const std::string json = Json("</script><script>alert(1)</script><!-- & -->");
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  EXPECT_EQ(json.find('&'), std::string::npos);
  EXPECT_EQ(json,
            "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u003c!-- "
            "\\u0026 --\\u003e\"");
  EXPECT_EQ(Json("say \"hi\"\\\n\t\x01"), "\"say \\\"hi\\\"\\\\\\n\\t\\u0001\"");
  // U+2028 and U+2029 end a line in older JavaScript; invalid bytes become U+FFFD.
  EXPECT_EQ(Json("a\xE2\x80\xA8"
                 "b\xE2\x80\xA9"),
            "\"a\\u2028b\\u2029\"");
  EXPECT_EQ(Json("\xC3(\xF0\x9F\x98\x80"), "\"\\ufffd(\xF0\x9F\x98\x80\"");
}

TEST(ReportTextTest, CutsAtCharacterBoundaries) {
  const std::string text =
      "a\xC3\xA9"
      "b\xF0\x9F\x98\x80"
      "c";  // a é b 😀 c: 1+2+1+4+1 bytes
  EXPECT_EQ(CutAtCharacterBoundary(text, 100), text.size());
  EXPECT_EQ(CutAtCharacterBoundary(text, 0), 0u);
  EXPECT_EQ(CutAtCharacterBoundary(text, 1), 1u);
  EXPECT_EQ(CutAtCharacterBoundary(text, 2), 1u);  // inside é
  EXPECT_EQ(CutAtCharacterBoundary(text, 3), 3u);
  for (size_t max = 4; max < 8; ++max) EXPECT_EQ(CutAtCharacterBoundary(text, max), 4u) << max;
  EXPECT_EQ(CutAtCharacterBoundary(text, 8), 8u);
  // An ill-formed byte stands alone.
  EXPECT_EQ(CutAtCharacterBoundary("a\xFF\xFF"
                                   "b",
                                   2),
            2u);
}

TEST(ReportTextTest, Utf16OffsetsOfMultiByteText) {
  const std::string text =
      "a\xC3\xA9"
      "b\xF0\x9F\x98\x80"
      "c";
  // Bytes 0 1 3 4 8 9 are character starts: units 0 1 2 3 5 6.
  EXPECT_THAT(Utf16Offsets(text, {9, 0, 4, 8, 3, 1}), testing::ElementsAre(6, 0, 3, 5, 2, 1));
  // Inside a character: the character is before the offset.
  EXPECT_THAT(Utf16Offsets(text, {2, 5}), testing::ElementsAre(2, 5));
  // Each ill-formed byte is one U+FFFD, as the JSON escaping writes it.
  EXPECT_THAT(Utf16Offsets("\xFF\xFEx", {3}), testing::ElementsAre(3));
}

// Oracle: for valid UTF-8, the UTF-16 length of a prefix is its count of
// non-continuation bytes plus one more per 4-byte lead.
TEST(ReportTextTest, Utf16OffsetsMatchACountingOracle) {
  const char* pieces[] = {"a", " ", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "\n"};
  auto oracle = [](std::string_view text, uint32_t offset) {
    uint32_t units = 0;
    for (uint32_t i = 0; i < offset; ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      units += (c & 0xC0) != 0x80;
      units += c >= 0xF0;
    }
    return units;
  };
  std::mt19937 random(17);
  for (int round = 0; round < 50; ++round) {
    std::string text;
    std::vector<uint32_t> starts;
    for (int i = 0; i < 40; ++i) {
      starts.push_back(static_cast<uint32_t>(text.size()));
      text += pieces[random() % 6];
    }
    starts.push_back(static_cast<uint32_t>(text.size()));
    std::shuffle(starts.begin(), starts.end(), random);
    const std::vector<uint32_t> got = Utf16Offsets(text, starts);
    for (size_t i = 0; i < starts.size(); ++i) {
      ASSERT_EQ(got[i], oracle(text, starts[i])) << "round " << round << " offset " << starts[i];
    }
  }
}

}  // namespace
}  // namespace neardup::internal
