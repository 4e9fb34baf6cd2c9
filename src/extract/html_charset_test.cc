// HTML in other encodings than UTF-8 (issue 21): the encoding is found as a
// browser finds it and the page converted to UTF-8 before gumbo reads it.
// Fixtures are byte strings written here, each with its expected UTF-8 text.
#include "extract/html_charset.h"

#include <string>

#include "extract/extract_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "neardup/document_extractor.h"

namespace neardup::internal {
namespace {

using ::testing::HasSubstr;
using testing::HttpResponse;
using testing::WarcRecord;

// The visible text of `bytes` read as an .html file, less the line end
// that closes its last paragraph.
std::string HtmlText(const std::string& bytes) {
  Result<ExtractionResult> result = ExtractDocuments(bytes, "p.html", DocumentFormat::kHtml, {});
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok() || result->documents.size() != 1) return "";
  std::string text = result->documents[0].text;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string Page(const std::string& head, const std::string& body) {
  return "<!DOCTYPE html><html><head>" + head + "<title>t</title></head><body><p>" + body +
         "</p></body></html>";
}

TEST(HtmlCharsetTest, LabelsMapAsTheEncodingStandardSays) {
  EXPECT_EQ(EncodingForLabel(" ISO-8859-1 "), "WINDOWS-1252");
  EXPECT_EQ(EncodingForLabel("us-ascii"), "WINDOWS-1252");
  EXPECT_EQ(EncodingForLabel("Shift_JIS"), "CP932");
  EXPECT_EQ(EncodingForLabel("gb2312"), "GB18030");
  EXPECT_EQ(EncodingForLabel("euc-kr"), "CP949");
  EXPECT_EQ(EncodingForLabel("windows-1251"), "WINDOWS-1251");
  EXPECT_EQ(EncodingForLabel("iso-8859-2"), "ISO-8859-2");
  EXPECT_EQ(EncodingForLabel("utf8"), "UTF-8");
  EXPECT_EQ(EncodingForLabel(""), "");
  // Never an iconv suffix or a path.
  EXPECT_EQ(EncodingForLabel("latin2//TRANSLIT"), "");
  EXPECT_EQ(EncodingForLabel("../x"), "");
  EXPECT_EQ(CharsetOfContentType("text/html; charset=\"Windows-1252\""), "Windows-1252");
  EXPECT_EQ(CharsetOfContentType("text/html;charset=utf-8;q=1"), "utf-8");
  EXPECT_EQ(CharsetOfContentType("text/html"), "");
}

TEST(HtmlCharsetTest, DetectionOrderIsBomTransportMetaXml) {
  const std::string meta_1252 = Page("<meta charset=\"windows-1252\">", "x");
  EXPECT_EQ(DetectHtmlEncoding(meta_1252, "").name, "WINDOWS-1252");
  EXPECT_EQ(DetectHtmlEncoding(meta_1252, "koi8-r").name, "KOI8-R");  // transport first
  const HtmlEncoding bom = DetectHtmlEncoding("\xEF\xBB\xBF" + meta_1252, "koi8-r");
  EXPECT_EQ(bom.name, "UTF-8");
  EXPECT_EQ(bom.skip, 3u);
  EXPECT_EQ(DetectHtmlEncoding(Page("<meta http-equiv=\"Content-Type\" "
                                    "content=\"text/html; charset=Shift_JIS\">",
                                    "x"),
                               "")
                .name,
            "CP932");
  // content without http-equiv is not a declaration; a commented-out one
  // neither; a meta tag cannot declare UTF-16.
  EXPECT_EQ(DetectHtmlEncoding(Page("<meta content=\"text/html; charset=koi8-r\">", "x"), "").name,
            "UTF-8");
  EXPECT_EQ(DetectHtmlEncoding(Page("<!-- <meta charset=koi8-r> -->", "x"), "").name, "UTF-8");
  EXPECT_EQ(DetectHtmlEncoding(Page("<meta charset=utf-16>", "x"), "").name, "UTF-8");
  EXPECT_EQ(DetectHtmlEncoding("<?xml version=\"1.0\" encoding=\"ISO-8859-15\"?><html/>", "").name,
            "ISO-8859-15");
  // Past the first 1024 bytes, a declaration is not seen.
  EXPECT_EQ(
      DetectHtmlEncoding(Page(std::string(1100, ' ') + "<meta charset=koi8-r>", "x"), "").name,
      "UTF-8");
}

TEST(HtmlCharsetTest, PagesInOtherEncodingsBecomeUtf8) {
  // windows-1252: é, curly quotes and the euro sign.
  EXPECT_EQ(HtmlText(Page("<meta charset=\"windows-1252\">", "caf\xE9 \x93quoted\x94 \x80 5")),
            "caf\xC3\xA9 \xE2\x80\x9Cquoted\xE2\x80\x9D \xE2\x82\xAC 5");
  // iso-8859-1 is read as windows-1252 (as browsers do).
  EXPECT_EQ(HtmlText(Page("<meta charset=iso-8859-1>", "na\xEFve \x93x\x94")),
            "na\xC3\xAFve \xE2\x80\x9Cx\xE2\x80\x9D");
  // ISO-8859-5 (Cyrillic): "Привет".
  EXPECT_EQ(HtmlText(Page("<meta charset=iso-8859-5>", "\xBF\xE0\xD8\xD2\xD5\xE2")),
            "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82");
  // Shift_JIS: "日本語" from the http-equiv form.
  EXPECT_EQ(HtmlText(Page("<meta http-equiv=content-type content='text/html;charset=shift_jis'>",
                          "\x93\xFA\x96\x7B\x8C\xEA")),
            "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E");
  // GB18030 (declared gb2312): "中文".
  EXPECT_EQ(HtmlText(Page("<meta charset=gb2312>", "\xD6\xD0\xCE\xC4")),
            "\xE4\xB8\xAD\xE6\x96\x87");
  // UTF-16LE with its byte-order mark: "<p>é</p>".
  const char kUtf16[] = "\xFF\xFE<\0p\0>\0\xE9\0<\0/\0p\0>\0";
  EXPECT_EQ(HtmlText(std::string(kUtf16, sizeof(kUtf16) - 1)), "\xC3\xA9");
  // XHTML's XML declaration.
  EXPECT_EQ(HtmlText("<?xml version=\"1.0\" encoding=\"ISO-8859-15\"?>"
                     "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>\xA4 5</p></body>"
                     "</html>"),
            "\xE2\x82\xAC 5");
  // No declaration: UTF-8, as before.
  EXPECT_EQ(HtmlText(Page("", "caf\xC3\xA9")), "caf\xC3\xA9");
}

TEST(HtmlCharsetTest, InvalidBytesBecomeReplacementCharacters) {
  // 0x85 0x20: not a Shift_JIS pair (the second byte is out of range); the
  // text around it survives.
  EXPECT_EQ(HtmlText(Page("<meta charset=shift_jis>", "a\x85 b \x93\xFA")),
            "a\xEF\xBF\xBD b \xE6\x97\xA5");
  // A page cut inside a GB18030 pair.
  bool converted = false;
  EXPECT_EQ(ConvertToUtf8("\xD6\xD0\xCE", "GB18030", &converted), "\xE4\xB8\xAD\xEF\xBF\xBD");
  EXPECT_TRUE(converted);
  // An encoding iconv does not know is no declaration: the next one counts.
  EXPECT_EQ(HtmlText(Page("<meta charset=x-no-such-encoding>", "caf\xC3\xA9")), "caf\xC3\xA9");
  EXPECT_EQ(DetectHtmlEncoding(Page("<meta charset=x-no-such-encoding><meta charset=koi8-r>", "x"),
                               "x-no-such-encoding")
                .name,
            "KOI8-R");
}

TEST(HtmlCharsetTest, WarcPayloadsUseTheirHttpCharset) {
  // windows-1251 "Мир" declared only by the HTTP header, for HTML and for
  // plain text.
  const std::string html_1251 = "<html><body><p>\xCC\xE8\xF0</p></body></html>";
  const std::string warc =
      WarcRecord("response", "https://x.example/a", "2024-05-01T10:00:00Z",
                 "application/http; msgtype=response",
                 HttpResponse("text/html; charset=windows-1251", html_1251)) +
      WarcRecord("response", "https://x.example/b", "2024-05-01T10:00:00Z",
                 "application/http; msgtype=response",
                 HttpResponse("text/plain; charset=windows-1251", "\xCC\xE8\xF0"));
  Result<ExtractionResult> result = ExtractDocuments(warc, "c.warc", DocumentFormat::kWarc, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->documents.size(), 2u);
  EXPECT_EQ(result->documents[0].text, "\xD0\x9C\xD0\xB8\xD1\x80\n");
  EXPECT_EQ(result->documents[1].text, "\xD0\x9C\xD0\xB8\xD1\x80");
}

}  // namespace
}  // namespace neardup::internal
