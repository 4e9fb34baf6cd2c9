#include "neardup/document_extractor.h"

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "extract/extract_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace neardup {
namespace {

using internal::testing::DocxXml;
using internal::testing::HttpResponse;
using internal::testing::MakeDocx;
using internal::testing::MakeOdt;
using internal::testing::MakeTextPdf;
using internal::testing::OdtXml;
using internal::testing::SampleDocx;
using internal::testing::SampleHtml;
using internal::testing::SampleOdt;
using internal::testing::SamplePdf;
using internal::testing::SampleText;
using internal::testing::ScannedPdf;
using internal::testing::WarcRecord;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

ExtractionResult Extract(const std::string& bytes, DocumentFormat format,
                         const ExtractOptions& options = {}) {
  Result<ExtractionResult> result = ExtractDocuments(bytes, "fixture", format, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(result).value() : ExtractionResult{};
}

std::string OnlyText(const std::string& bytes, DocumentFormat format) {
  ExtractionResult result = Extract(bytes, format);
  EXPECT_EQ(result.documents.size(), 1u);
  return result.documents.empty() ? "" : result.documents[0].text;
}

TEST(DocumentFormatTest, NamesRoundTrip) {
  for (DocumentFormat f : {DocumentFormat::kText, DocumentFormat::kPdf, DocumentFormat::kDocx,
                           DocumentFormat::kOdt, DocumentFormat::kHtml, DocumentFormat::kWarc}) {
    Result<DocumentFormat> parsed = ParseDocumentFormat(DocumentFormatName(f));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_THAT(ParseDocumentFormat("rtf").status().message(), HasSubstr("\"rtf\""));
}

TEST(DetectDocumentFormatTest, ContentFirstThenNameThenMarkup) {
  EXPECT_EQ(DetectDocumentFormat(SamplePdf(), "thesis.txt"), DocumentFormat::kPdf);
  EXPECT_EQ(DetectDocumentFormat("junk\n" + SamplePdf(), "x"), DocumentFormat::kPdf);
  EXPECT_EQ(DetectDocumentFormat(SampleDocx(), "no-extension"), DocumentFormat::kDocx);
  EXPECT_EQ(DetectDocumentFormat(SampleOdt(), "no-extension"), DocumentFormat::kOdt);
  EXPECT_EQ(DetectDocumentFormat("WARC/1.0\r\n", "crawl"), DocumentFormat::kWarc);
  // A zip that is neither goes by its name, else is text.
  std::string zip = internal::testing::MakeZip({{"a.txt", "hello"}});
  EXPECT_EQ(DetectDocumentFormat(zip, "archive.zip"), DocumentFormat::kText);
  EXPECT_EQ(DetectDocumentFormat(zip, "broken.docx"), DocumentFormat::kDocx);
  // Names, less the compression suffix, any letter case.
  EXPECT_EQ(DetectDocumentFormat("x", "a/B.PDF"), DocumentFormat::kPdf);
  EXPECT_EQ(DetectDocumentFormat("x", "crawl.warc.gz"), DocumentFormat::kWarc);
  EXPECT_EQ(DetectDocumentFormat("x", "crawl.warc.wet.zst"), DocumentFormat::kWarc);
  EXPECT_EQ(DetectDocumentFormat("x", "page.htm"), DocumentFormat::kHtml);
  EXPECT_EQ(DetectDocumentFormat("x", "notes.txt"), DocumentFormat::kText);
  EXPECT_EQ(DetectDocumentFormat("\xEF\xBB\xBF \n<!DOCTYPE HTML><p>x", "page"),
            DocumentFormat::kHtml);
  EXPECT_EQ(DetectDocumentFormat("<p>a fragment", "page"), DocumentFormat::kText);
}

TEST(PdfExtractorTest, CompressedMultiPageTextInReadingOrder) {
  ExtractionResult result = Extract(SamplePdf(), DocumentFormat::kPdf);
  EXPECT_EQ(result.format, DocumentFormat::kPdf);
  EXPECT_EQ(result.pages, 2u);
  EXPECT_TRUE(result.pages_without_text.empty());
  ASSERT_EQ(result.documents.size(), 1u);
  EXPECT_EQ(Words(result.documents[0].text), Words(SampleText()));
}

TEST(PdfExtractorTest, ImageOnlyPageIsReportedWithoutOcr) {
  std::string scanned = ScannedPdf(MakeTextPdf({{"Scanned words"}}, 20, 300, 100), 100);
  ExtractionResult result = Extract(scanned, DocumentFormat::kPdf);
  EXPECT_EQ(result.pages, 1u);
  EXPECT_EQ(result.pages_without_text, std::vector<uint32_t>{1});
  EXPECT_EQ(result.pages_read_by_ocr, 0u);
  ASSERT_EQ(result.documents.size(), 1u);
  EXPECT_THAT(Words(result.documents[0].text), ::testing::IsEmpty());
}

TEST(PdfExtractorTest, OcrReadsAScannedPage) {
  const std::string lines[] = {"Optical character recognition", "reads scanned theses"};
  std::string scanned = ScannedPdf(MakeTextPdf({{lines[0], lines[1]}}, 22, 420, 110), 200);
  ExtractOptions options;
  options.ocr = true;
  options.ocr_dpi = 200;
  ExtractionResult result = Extract(scanned, DocumentFormat::kPdf, options);
  EXPECT_EQ(result.pages_read_by_ocr, 1u);
  EXPECT_TRUE(result.pages_without_text.empty());
  ASSERT_EQ(result.documents.size(), 1u);
  EXPECT_EQ(Words(result.documents[0].text), Words(lines[0] + " " + lines[1]));
}

// Real encrypted files (src/extract/testdata/README.md: made by qpdf): a
// user password locks the text, whatever the cipher; an owner password
// alone does not.
TEST(PdfExtractorTest, RealEncryptedPdfs) {
  auto read = [](const std::string& file) {
    std::ifstream in(std::string(NEARDUP_SOURCE_DIR) + "/src/extract/testdata/" + file,
                     std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_FALSE(bytes.str().empty()) << file;
    return bytes.str();
  };
  for (const char* locked : {"rc4_user.pdf", "aes256_user.pdf"}) {
    Result<ExtractionResult> result =
        ExtractDocuments(read(locked), locked, DocumentFormat::kPdf, {});
    ASSERT_FALSE(result.ok()) << locked;
    EXPECT_THAT(result.status().message(), HasSubstr("encrypted with a password")) << locked;
    EXPECT_THAT(result.status().message(), HasSubstr(locked));
  }
  Result<ExtractionResult> open =
      ExtractDocuments(read("aes128_owner_only.pdf"), "o.pdf", DocumentFormat::kPdf, {});
  ASSERT_TRUE(open.ok()) << open.status();
  ASSERT_EQ(open->documents.size(), 1u);
  EXPECT_THAT(open->documents[0].text,
              HasSubstr("The archive keeps every thesis as it was handed in."));
}

TEST(PdfExtractorTest, DamagedAndEncryptedPdfsAreErrorsNamingTheFile) {
  Result<ExtractionResult> garbage =
      ExtractDocuments("%PDF-1.4\nthis is not a pdf at all", "bad.pdf", DocumentFormat::kPdf, {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.status().message(), HasSubstr("bad.pdf"));
  // An /Encrypt dictionary whose empty user password does not check out:
  // the file needs a password.
  std::string pdf = MakeTextPdf({{"secret"}});
  size_t trailer = pdf.find("/Root");
  pdf.insert(trailer, "/Encrypt << /Filter /Standard /V 1 /R 2 /P -4 /O (" + std::string(32, 'o') +
                          ") /U (" + std::string(32, 'u') +
                          ") >> /ID [(0123456789abcdef) (0123456789abcdef)] ");
  Result<ExtractionResult> locked = ExtractDocuments(pdf, "locked.pdf", DocumentFormat::kPdf, {});
  ASSERT_FALSE(locked.ok());
  EXPECT_THAT(locked.status().message(), HasSubstr("locked.pdf"));
  EXPECT_THAT(locked.status().message(), HasSubstr("encrypted"));
  // Every truncation of a PDF is an error or a result, never a crash.
  std::string whole = SamplePdf();
  for (size_t cut = 0; cut < whole.size(); cut += whole.size() / 23 + 1) {
    ExtractDocuments(whole.substr(0, cut), "cut.pdf", DocumentFormat::kPdf, {})
        .status()
        .IgnoreError();
  }
}

TEST(OfficeExtractorTest, DocxParagraphsAndTableInOrder) {
  std::string text = OnlyText(SampleDocx(), DocumentFormat::kDocx);
  EXPECT_EQ(Words(text), Words(SampleText()));
  EXPECT_THAT(text, Not(HasSubstr("deleted")));
  EXPECT_THAT(text, HasSubstr("\nDepartment of history\ntwelve theses\n"));
}

TEST(OfficeExtractorTest, OdtParagraphsAndTableInOrder) {
  std::string text = OnlyText(SampleOdt(), DocumentFormat::kOdt);
  EXPECT_EQ(Words(text), Words(SampleText()));
  EXPECT_THAT(text, Not(HasSubstr("comment")));
  // Pretty-printing white space inside a paragraph is one space.
  EXPECT_THAT(text, HasSubstr("optical character recognition so"));
}

TEST(OfficeExtractorTest, OdtSpacesTabsAndLineBreaks) {
  std::string odt =
      MakeOdt(OdtXml("<text:p>a<text:s text:c=\"3\"/>b<text:tab/>c<text:line-break/>d<text:s "
                     "text:c=\"99999999999\"/>e</text:p>"));
  std::string text = OnlyText(odt, DocumentFormat::kOdt);
  EXPECT_EQ(text, "a   b\tc\nd" + std::string(1024, ' ') + "e\n");
}

TEST(OfficeExtractorTest, ZipBombIsCappedWithoutTrustingTheHeader) {
  std::string body = "<w:p><w:r><w:t>" + std::string(4 << 20, 'a') + "</w:t></w:r></w:p>";
  std::string docx = MakeDocx(DocxXml(body));
  ASSERT_LT(docx.size(), 64u << 10);  // 4 MiB of XML in a few KiB
  ExtractOptions options;
  options.max_uncompressed_bytes = 1 << 20;
  Result<ExtractionResult> result =
      ExtractDocuments(docx, "bomb.docx", DocumentFormat::kDocx, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(result.status().message(), HasSubstr("bomb.docx"));
  EXPECT_THAT(result.status().message(), HasSubstr("word/document.xml"));
}

TEST(OfficeExtractorTest, EntityExpansionAndExternalEntitiesAreNotFollowed) {
  std::string laughs =
      "<?xml version=\"1.0\"?><!DOCTYPE w:document [<!ENTITY a \"aaaaaaaaaa\">"
      "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
      "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\"><!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">"
      "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\"><!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">"
      "<!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\"><!ENTITY i \"&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;\">"
      "<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:body><w:p><w:r><w:t>start &i; &x; end</w:t></w:r></w:p></w:body></w:document>";
  auto begin = std::chrono::steady_clock::now();
  Result<ExtractionResult> result =
      ExtractDocuments(MakeDocx(laughs), "laughs.docx", DocumentFormat::kDocx, {});
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(2));
  if (result.ok()) {
    ASSERT_EQ(result->documents.size(), 1u);
    EXPECT_LT(result->documents[0].text.size(), 100u);
    EXPECT_THAT(result->documents[0].text, Not(HasSubstr("root:")));
  }
}

TEST(OfficeExtractorTest, CorruptZipAndBadXmlAreErrorsNamingTheFile) {
  std::string docx = SampleDocx();
  for (size_t i = docx.size() / 3; i < docx.size() / 3 + 40; ++i)
    docx[i] = static_cast<char>(~docx[i]);
  Result<ExtractionResult> corrupt =
      ExtractDocuments(docx, "corrupt.docx", DocumentFormat::kDocx, {});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_THAT(corrupt.status().message(), HasSubstr("corrupt.docx"));
  Result<ExtractionResult> not_zip =
      ExtractDocuments("hello", "plain.docx", DocumentFormat::kDocx, {});
  ASSERT_FALSE(not_zip.ok());
  EXPECT_THAT(not_zip.status().message(), HasSubstr("plain.docx"));
  Result<ExtractionResult> bad_xml =
      ExtractDocuments(MakeDocx("<w:document><w:body>"), "bad.docx", DocumentFormat::kDocx, {});
  ASSERT_FALSE(bad_xml.ok());
  EXPECT_THAT(bad_xml.status().message(), HasSubstr("not well-formed XML"));
  Result<ExtractionResult> no_content = ExtractDocuments(internal::testing::MakeZip({{"a", "b"}}),
                                                         "empty.odt", DocumentFormat::kOdt, {});
  ASSERT_FALSE(no_content.ok());
  EXPECT_THAT(no_content.status().message(), HasSubstr("content.xml"));
}

TEST(HtmlExtractorTest, VisibleTextWithTitleApart) {
  ExtractionResult result = Extract(SampleHtml(), DocumentFormat::kHtml);
  ASSERT_EQ(result.documents.size(), 1u);
  const ExtractedDocument& doc = result.documents[0];
  EXPECT_EQ(doc.title, "Archive & theses");
  EXPECT_EQ(Words(doc.text), Words(SampleText()));
  EXPECT_THAT(doc.text, Not(HasSubstr("script")));
  EXPECT_THAT(doc.text, Not(HasSubstr("color")));
  EXPECT_THAT(doc.text, Not(HasSubstr("Home")));
  EXPECT_THAT(doc.text, HasSubstr("Department of history\ttwelve theses\nDepartment of physics"));
  EXPECT_THAT(doc.text, HasSubstr("to plain text before"));
}

TEST(HtmlExtractorTest, PreformattedTextAndBreaks) {
  std::string text =
      OnlyText("<html><body><pre>a  b\n c</pre>x<br>y  z</body></html>", DocumentFormat::kHtml);
  EXPECT_EQ(text, "a  b\n c\nx\ny z\n");
}

TEST(HtmlExtractorTest, OversizedAndDeeplyNestedPagesAreRefused) {
  ExtractOptions options;
  options.max_markup_bytes = 1000;
  Result<ExtractionResult> big =
      ExtractDocuments(std::string(1001, 'x'), "big.html", DocumentFormat::kHtml, options);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("big.html"));
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "<div>";
  Result<ExtractionResult> nested = ExtractDocuments(deep, "deep.html", DocumentFormat::kHtml, {});
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.status().message(), HasSubstr("deep"));
  // Many unclosed paragraphs do not nest: an old page is read.
  std::string flat;
  for (int i = 0; i < 20000; ++i) flat += "<p>w";
  EXPECT_EQ(Words(OnlyText(flat, DocumentFormat::kHtml)).size(), 20000u);
}

std::string SampleWarc() {
  using internal::testing::HttpResponse;
  std::string chunked =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
      "6\r\nchunke\r\n7\r\nd words\r\n0\r\n\r\n";
  return WarcRecord("warcinfo", "", "2024-01-01T00:00:00Z", "application/warc-fields",
                    "software: test\r\n") +
         WarcRecord("request", "http://a.example/", "2024-01-01T00:00:01Z",
                    "application/http; msgtype=request", "GET / HTTP/1.1\r\n\r\n") +
         WarcRecord("response", "http://a.example/", "2024-01-01T00:00:02Z",
                    "application/http; msgtype=response",
                    HttpResponse("text/html; charset=utf-8", SampleHtml())) +
         WarcRecord("response", "http://a.example/logo.png", "2024-01-01T00:00:03Z",
                    "application/http; msgtype=response", HttpResponse("image/png", "\x89PNG")) +
         WarcRecord("response", "http://b.example/", "2024-01-02T00:00:00Z",
                    "application/http; msgtype=response", chunked) +
         WarcRecord("conversion", "http://c.example/", "2024-01-03T00:00:00Z", "text/plain",
                    SampleText());
}

TEST(WarcExtractorTest, OneDocumentPerTextRecordWithUriAndDate) {
  ExtractionResult result = Extract(SampleWarc(), DocumentFormat::kWarc);
  ASSERT_EQ(result.documents.size(), 3u);
  EXPECT_EQ(result.records_passed_over, 3u);  // warcinfo, request, image
  EXPECT_TRUE(result.problems.empty());
  EXPECT_EQ(result.documents[0].id, "http://a.example/");
  EXPECT_EQ(result.documents[0].date, "2024-01-01T00:00:02Z");
  EXPECT_EQ(result.documents[0].title, "Archive & theses");
  EXPECT_EQ(Words(result.documents[0].text), Words(SampleText()));
  EXPECT_EQ(result.documents[1].id, "http://b.example/");
  EXPECT_EQ(result.documents[1].text, "chunked words");
  EXPECT_EQ(result.documents[2].id, "http://c.example/");
  EXPECT_EQ(result.documents[2].text, SampleText());
}

TEST(WarcExtractorTest, DamageKeepsTheRecordsBeforeIt) {
  std::string warc = SampleWarc();
  std::string truncated = warc.substr(0, warc.size() - 40);
  ExtractionResult result = Extract(truncated, DocumentFormat::kWarc);
  EXPECT_EQ(result.documents.size(), 2u);
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_THAT(result.problems[0].reason, HasSubstr("truncated"));
  Result<ExtractionResult> not_warc =
      ExtractDocuments("hello world", "bad.warc", DocumentFormat::kWarc, {});
  ASSERT_FALSE(not_warc.ok());
  EXPECT_THAT(not_warc.status().message(), HasSubstr("bad.warc"));
  Result<ExtractionResult> bad_length = ExtractDocuments("WARC/1.0\r\nContent-Length: 12x\r\n\r\n",
                                                         "len.warc", DocumentFormat::kWarc, {});
  ASSERT_FALSE(bad_length.ok());
  EXPECT_THAT(bad_length.status().message(), HasSubstr("Content-Length"));
}

// Random damage to every fixture: an error or a result, never a crash (the
// fuzz target goes further; this runs in every test build).
TEST(DocumentExtractorTest, MutatedFixturesNeverCrash) {
  std::mt19937_64 rng(21);
  const std::pair<std::string, DocumentFormat> fixtures[] = {
      {SamplePdf(), DocumentFormat::kPdf},   {SampleDocx(), DocumentFormat::kDocx},
      {SampleOdt(), DocumentFormat::kOdt},   {SampleHtml(), DocumentFormat::kHtml},
      {SampleWarc(), DocumentFormat::kWarc},
  };
  for (const auto& [bytes, format] : fixtures) {
    for (int round = 0; round < 30; ++round) {
      std::string mutated = bytes;
      for (int k = 0; k < 1 + round % 8; ++k) {
        mutated[rng() % mutated.size()] = static_cast<char>(rng());
      }
      ExtractDocuments(mutated, "m", format, {}).status().IgnoreError();
    }
  }
}

}  // namespace
}  // namespace neardup
