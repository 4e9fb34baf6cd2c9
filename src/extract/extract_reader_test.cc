// DocumentReader over rich formats (the io hook, io/extracted_documents.h):
// files are extracted in parallel batches, yet documents, skips and errors
// come in reading order.
#include <vector>

#include "extract/extract_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "neardup/document_reader.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using internal::testing::HttpResponse;
using internal::testing::SampleHtml;
using internal::testing::SamplePdf;
using internal::testing::SampleText;
using internal::testing::WarcRecord;
using test_support::TempDir;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct ReadAll {
  std::vector<std::string> ids;
  std::vector<Document> docs;
  std::vector<SkippedRecord> skips;
  std::vector<std::string> notices;
  Status status;
};

ReadAll Read(std::vector<std::string> inputs, InputOptions options = {}) {
  ReadAll all;
  options.on_skip = [&all](const SkippedRecord& r) { all.skips.push_back(r); };
  options.on_notice = [&all](const std::string& source, const std::string& message) {
    all.notices.push_back(source + ": " + message);
  };
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open(std::move(inputs), options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return all;
  Document doc;
  while (true) {
    Result<bool> got = (*reader)->Next(&doc);
    if (!got.ok()) {
      all.status = got.status();
      break;
    }
    if (!*got) break;
    all.ids.push_back(doc.id);
    all.docs.push_back(doc);
  }
  return all;
}

TEST(ExtractReaderTest, MixedFolderKeepsReadingOrderAcrossBatches) {
  TempDir dir;
  std::vector<std::string> expected;
  // More files than a batch holds (twice the threads), of every kind,
  // interleaved: extraction in parallel must not reorder them.
  for (int i = 0; i < 30; ++i) {
    std::string n = std::to_string(100 + i);
    switch (i % 5) {
      case 0:
        dir.Write("d/" + n + ".txt", "plain " + n);
        expected.push_back(n + ".txt");
        break;
      case 1:
        dir.Write("d/" + n + ".html", "<title>t" + n + "</title><p>page " + n);
        expected.push_back(n + ".html");
        break;
      case 2:
        dir.Write("d/" + n + ".jsonl", "{\"id\":\"j" + n + "a\",\"text\":\"x\"}\n{\"id\":\"j" + n +
                                           "b\",\"text\":\"y\"}\n");
        expected.push_back("j" + n + "a");
        expected.push_back("j" + n + "b");
        break;
      case 3:
        dir.Write("d/" + n + ".pdf", SamplePdf());
        expected.push_back(n + ".pdf");
        break;
      case 4:
        dir.Write("d/" + n + ".warc",
                  WarcRecord("response", "http://" + n + "/a", "2024-01-01T00:00:00Z",
                             "application/http; msgtype=response",
                             HttpResponse("text/html", "<p>a " + n)) +
                      WarcRecord("conversion", "http://" + n + "/b", "2024-01-02T00:00:00Z",
                                 "text/plain", "b " + n));
        expected.push_back("http://" + n + "/a");
        expected.push_back("http://" + n + "/b");
        break;
    }
  }
  dir.Write("d/999.pdf", "%PDF-1.4 damaged");
  ReadAll all = Read({dir.Path("d")});
  ASSERT_TRUE(all.status.ok()) << all.status;
  EXPECT_THAT(all.ids, ElementsAreArray(expected));
  ASSERT_EQ(all.skips.size(), 1u);
  EXPECT_THAT(all.skips[0].source, HasSubstr("999.pdf"));
  EXPECT_THAT(all.skips[0].reason, HasSubstr("not a readable PDF"));
  for (const Document& doc : all.docs) {
    if (doc.id == "101.html") {
      EXPECT_EQ(doc.text, "page 101\n");
      EXPECT_EQ(doc.title, "t101");
      EXPECT_EQ(doc.format, "html");
    }
    if (doc.id == "http://104/b") {
      EXPECT_EQ(doc.date, "2024-01-02T00:00:00Z");
      EXPECT_EQ(doc.format, "warc");
    }
    if (doc.id == "100.txt") {
      EXPECT_EQ(doc.format, "");
    }
  }
}

TEST(ExtractReaderTest, ErrorComesAfterTheFilesReadBeforeIt) {
  TempDir dir;
  dir.Write("a/1.html", "<p>one");
  dir.Write("a/2.html", "<p>two");
  std::string corrupt = dir.Write("b.txt.gz", std::string("\x1f\x8b\x08\x00garbage garbage", 19));
  ReadAll all = Read({dir.Path("a"), corrupt});
  EXPECT_THAT(all.ids, ElementsAreArray({"1.html", "2.html"}));
  EXPECT_FALSE(all.status.ok());
  EXPECT_THAT(all.status.message(), HasSubstr("b.txt.gz"));
}

TEST(ExtractReaderTest, ForcedFormatsAndText) {
  TempDir dir;
  std::string page = dir.Write("page.txt", SampleHtml());
  InputOptions text;
  text.format = InputFormat::kText;
  ReadAll raw = Read({page}, text);
  ASSERT_EQ(raw.docs.size(), 1u);
  EXPECT_EQ(raw.docs[0].text, SampleHtml());
  InputOptions html;
  html.format = InputFormat::kHtml;
  ReadAll extracted = Read({page}, html);
  ASSERT_EQ(extracted.docs.size(), 1u);
  EXPECT_EQ(extracted.docs[0].title, "Archive & theses");
  InputOptions pdf;
  pdf.format = InputFormat::kPdf;
  ReadAll wrong = Read({page}, pdf);
  EXPECT_TRUE(wrong.docs.empty());
  ASSERT_EQ(wrong.skips.size(), 1u);
  EXPECT_THAT(wrong.skips[0].reason, HasSubstr("PDF"));
}

TEST(ExtractReaderTest, PagesWithoutTextAreNoticedAndCounted) {
  TempDir dir;
  std::string scanned = dir.Write(
      "scan.pdf",
      internal::testing::ScannedPdf(internal::testing::MakeTextPdf({{"words"}}, 20, 200, 80), 72));
  ReadAll all = Read({scanned});
  ASSERT_EQ(all.docs.size(), 1u);
  EXPECT_EQ(all.docs[0].text, "");
  ASSERT_EQ(all.notices.size(), 1u);
  EXPECT_THAT(all.notices[0], HasSubstr("page 1 of 1 has no text"));
}

}  // namespace
}  // namespace neardup
