// `neardup` over the same text as .txt, .pdf, .docx, .odt and .html, a
// multi-record .warc.gz, damaged files and a scanned PDF (issue 21). The
// fixtures are made here (src/extract/extract_test_util.h).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli_test_util.h"
#include "extract/extract_test_util.h"
#include "gmock/gmock.h"
#include "io/io_test_util.h"
#include "neardup/document_extractor.h"

namespace neardup::testing {
namespace {

using ::testing::HasSubstr;
using namespace neardup::internal::testing;  // fixtures

class InputFormatsCliTest : public CliTestBase {
 protected:
  // The same text in every format, and an unrelated text.
  std::string WriteSameTextFolder() {
    Write("same/a.txt", SampleText());
    Write("same/b.pdf", SamplePdf());
    Write("same/c.docx", SampleDocx());
    Write("same/d.odt", SampleOdt());
    Write("same/e.html", SampleHtml());
    Write("same/f.txt", "an unrelated note about the weather on a sunny afternoon by the sea\n");
    return (dir_ / "same").string();
  }

  // id -> the value of `field` in each line of `fingerprint` output.
  static std::map<std::string, std::string> Field(const std::string& out,
                                                  const std::string& field) {
    // The lines are the CLI's own compact JSON: a string value ends at the
    // next quote (no escapes in these ids and hex values), an array at `]`.
    std::map<std::string, std::string> values;
    const std::string id_key = "\"id\":\"";
    const std::string value_key = "\"" + field + "\":";
    for (const std::string& line : Lines(out)) {
      size_t id = line.find(id_key);
      size_t value = line.find(value_key);
      if (id == std::string::npos || value == std::string::npos) continue;
      id += id_key.size();
      value += value_key.size();
      if (value >= line.size()) continue;
      size_t value_end = line[value] == '"'   ? line.find('"', value + 1)
                         : line[value] == '[' ? line.find(']', value)
                                              : std::string::npos;
      size_t id_end = line.find('"', id);
      if (value_end == std::string::npos || id_end == std::string::npos) continue;
      values[line.substr(id, id_end - id)] = line.substr(value, value_end + 1 - value);
    }
    return values;
  }
};

TEST_F(InputFormatsCliTest, SameTextInEveryFormatHasTheSameFingerprints) {
  std::string folder = WriteSameTextFolder();
  CommandResult run = Neardup("fingerprint --simhash --minhash " + folder);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("4 documents extracted"));
  for (const std::string field : {"simhash", "minhash"}) {
    std::map<std::string, std::string> values = Field(run.out, field);
    ASSERT_EQ(values.size(), 6u) << run.out;
    for (const char* name : {"b.pdf", "c.docx", "d.odt", "e.html"}) {
      EXPECT_EQ(values[name], values["a.txt"]) << field << " of " << name;
    }
    EXPECT_NE(values["f.txt"], values["a.txt"]);
  }
  // Forcing text reads the bytes as they are: the HTML's tags become words.
  CommandResult raw = Neardup("fingerprint -q --input-format text " + folder + "/e.html");
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(Field(raw.out, "simhash").begin()->second, Field(run.out, "simhash")["a.txt"]);
}

TEST_F(InputFormatsCliTest, PairsOverTheFolderFindsEveryFormat) {
  std::string folder = WriteSameTextFolder();
  for (const std::string method : {"--method simhash --max-distance 3", "--threshold 0.9"}) {
    CommandResult run = Neardup("pairs -q " + method + " " + folder);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> pairs = Lines(run.out);
    EXPECT_EQ(pairs.size(), 10u) << run.out;  // all 5 choose 2
    EXPECT_THAT(run.out, ::testing::Not(HasSubstr("f.txt")));
  }
}

TEST_F(InputFormatsCliTest, WarcGzipOneMemberPerRecordGivesADocumentPerRecord) {
  std::string warc = Gzip(WarcRecord("warcinfo", "", "2024-05-01T00:00:00Z",
                                     "application/warc-fields", "software: test\r\n")) +
                     Gzip(WarcRecord("response", "https://x.example/a", "2024-05-01T10:00:00Z",
                                     "application/http; msgtype=response",
                                     HttpResponse("text/html", SampleHtml()))) +
                     Gzip(WarcRecord("conversion", "https://x.example/b", "2024-05-02T10:00:00Z",
                                     "text/plain", SampleText()));
  std::string path = Write("crawl.warc.gz", warc);
  CommandResult run = Neardup("fingerprint --simhash " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, std::string> simhash = Field(run.out, "simhash");
  ASSERT_EQ(simhash.size(), 2u) << run.out;
  EXPECT_EQ(simhash["https://x.example/a"], simhash["https://x.example/b"]);
  CommandResult pairs = Neardup("pairs -q --method simhash " + path);
  EXPECT_THAT(pairs.out, HasSubstr("https://x.example/a"));
}

TEST_F(InputFormatsCliTest, DamagedFilesAreSkippedCountedAndNamed) {
  Write("bad/good.txt", SampleText());
  Write("bad/broken.pdf", "%PDF-1.4\nnot really a pdf\n");
  std::string docx = SampleDocx();
  Write("bad/truncated.docx", docx.substr(0, docx.size() / 2));
  Write("bad/bad.warc", "WARC/1.0\r\nContent-Length: 999\r\n\r\nshort");
  std::string folder = (dir_ / "bad").string();
  CommandResult run = Neardup("fingerprint " + folder);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(run.out).size(), 1u);
  EXPECT_THAT(run.err, HasSubstr("broken.pdf"));
  EXPECT_THAT(run.err, HasSubstr("truncated.docx"));
  EXPECT_THAT(run.err, HasSubstr("bad.warc"));
  EXPECT_THAT(run.err, HasSubstr("3 records skipped"));
  EXPECT_EQ(Neardup("fingerprint -q --strict " + folder).exit_code, 5);
}

TEST_F(InputFormatsCliTest, ForcedFormatAndUnknownFormat) {
  std::string path = Write("page.txt", SampleHtml());
  CommandResult auto_run = Neardup("fingerprint -q " + path);
  CommandResult forced = Neardup("fingerprint -q --input-format html " + path);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  std::string txt = Write("same.txt", SampleText());
  CommandResult plain = Neardup("fingerprint -q " + txt);
  EXPECT_EQ(Field(forced.out, "simhash").begin()->second,
            Field(plain.out, "simhash").begin()->second);
  // By content ("<!DOCTYPE html"), a .txt holding a page is HTML too.
  EXPECT_EQ(Field(auto_run.out, "simhash").begin()->second,
            Field(plain.out, "simhash").begin()->second);
  EXPECT_EQ(Neardup("fingerprint -q --input-format rtf " + path).exit_code, 2);
}

TEST_F(InputFormatsCliTest, ScannedPdfIsReportedAndReadWithOcr) {
  const std::string text = "Optical character recognition reads scanned theses";
  std::string scanned = ScannedPdf(MakeTextPdf({Wrap(text, 30)}, 22, 420, 110), 200);
  std::string path = Write("scan.pdf", scanned);
  CommandResult without = Neardup("fingerprint " + path);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_THAT(without.err, HasSubstr("scan.pdf: page 1 of 1 has no text"));
  EXPECT_THAT(without.out, HasSubstr("\"tokens\":0"));
  CommandResult with = Neardup("fingerprint --ocr " + path);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_THAT(with.err, HasSubstr("1 pages read by OCR"));
  CommandResult plain = Neardup("fingerprint -q " + Write("scan.txt", text));
  EXPECT_EQ(Field(with.out, "simhash").begin()->second,
            Field(plain.out, "simhash").begin()->second);
}

// The collection stores the extracted text and passages are offsets into it:
// a passage of the indexed HTML page slices its visible text, not its markup.
TEST_F(InputFormatsCliTest, IndexedPassagesReferToTheExtractedText) {
  Write("archive/e.html", SampleHtml());
  Write("archive/b.pdf", SamplePdf());
  std::string collection = (dir_ / "coll").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  CommandResult add = Neardup("index add -q " + collection + " " + (dir_ / "archive").string());
  ASSERT_EQ(add.exit_code, 0) << add.err;
  CommandResult query = Neardup("query " + collection + " " + Write("q.txt", SampleText()));
  ASSERT_EQ(query.exit_code, 0) << query.err;
  Result<ExtractionResult> html =
      ExtractDocuments(SampleHtml(), "e.html", DocumentFormat::kHtml, {});
  ASSERT_TRUE(html.ok());
  const std::string& text = html->documents[0].text;
  // The first passage of the line about e.html: "match":[begin,end].
  size_t at = query.out.find("\"b\":\"e.html\"");
  ASSERT_NE(at, std::string::npos) << query.out;
  at = query.out.find("\"match\":[", at);
  ASSERT_NE(at, std::string::npos) << query.out;
  at += std::string("\"match\":[").size();
  size_t comma = query.out.find(',', at);
  ASSERT_NE(comma, std::string::npos) << query.out;
  size_t begin = std::stoul(query.out.substr(at, comma - at));
  size_t end = std::stoul(query.out.substr(comma + 1));
  ASSERT_LE(end, text.size());
  ASSERT_LT(begin, end);
  auto squeeze = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      bool space = c == ' ' || c == '\n' || c == '\t';
      if (!space)
        out += c;
      else if (!out.empty() && out.back() != ' ')
        out += ' ';
    }
    return out;
  };
  std::string passage = squeeze(text.substr(begin, end - begin));
  EXPECT_GT(passage.size(), 100u);
  EXPECT_NE(squeeze(SampleText()).find(passage), std::string::npos) << passage;
}

// The catalog keeps each document's original file and format (a WARC
// record's file, not its URI), shown by `index list` and by `query`.
TEST_F(InputFormatsCliTest, CatalogKeepsTheOriginalFileNameAndFormat) {
  Write("archive/e.html", SampleHtml());
  Write("archive/b.pdf", SamplePdf());
  Write("archive/g.txt", "an unrelated note about the weather on a sunny afternoon by the sea\n");
  Write("archive/crawl.warc.gz",
        Gzip(WarcRecord("response", "https://x.example/a", "2024-05-01T10:00:00Z",
                        "application/http; msgtype=response",
                        HttpResponse("text/html", SampleHtml()))));
  std::string collection = (dir_ / "coll").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  CommandResult add = Neardup("index add -q " + collection + " " + (dir_ / "archive").string());
  ASSERT_EQ(add.exit_code, 0) << add.err;
  CommandResult list = Neardup("index list " + collection);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, std::string> names = Field(list.out, "name");
  std::map<std::string, std::string> formats = Field(list.out, "format");
  ASSERT_EQ(names.size(), 4u) << list.out;
  EXPECT_EQ(names["https://x.example/a"], "\"crawl.warc.gz\"");
  EXPECT_EQ(formats["https://x.example/a"], "\"warc\"");
  EXPECT_EQ(names["b.pdf"], "\"b.pdf\"");
  EXPECT_EQ(formats["b.pdf"], "\"pdf\"");
  EXPECT_EQ(formats["e.html"], "\"html\"");
  EXPECT_EQ(names["g.txt"], "\"g.txt\"");
  EXPECT_EQ(formats["g.txt"], "\"\"");

  CommandResult query =
      Neardup("query --passages 0 " + collection + " " + Write("q.txt", SampleText()));
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_THAT(query.out, HasSubstr("\"b_format\":\"warc\",\"b_name\":\"crawl.warc.gz\""));
  EXPECT_THAT(query.out, HasSubstr("\"b\":\"b.pdf\""));
  EXPECT_THAT(query.out, HasSubstr("\"b_format\":\"pdf\"}"));  // its name is its id
}

// `neardup` loads the format libraries (poppler, Tesseract, libzip,
// libxml2, gumbo) with the module neardup_extract.so on its first
// extraction, not at start (src/extract/extract_backend.h): a JSONL run
// never maps them. Without the module, the files it would extract are
// skipped and named with the reason; plain text is read as before.
TEST_F(InputFormatsCliTest, TheFormatLibrariesAreLoadedOnlyToExtract) {
#ifndef NEARDUP_CLI_LOADS_EXTRACT_MODULE
  GTEST_SKIP() << "this build links the format libraries into neardup";
#else
  // What the dynamic loader maps at start (ldd's own way: the loader lists
  // the objects and exits).
  CommandResult start = NeardupWithEnv("LD_TRACE_LOADED_OBJECTS=1", "--version");
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_THAT(start.out, HasSubstr("libtbb"));
  for (const char* library : {"libpoppler", "libtesseract", "libzip", "libxml2", "libgumbo"}) {
    EXPECT_THAT(start.out, ::testing::Not(HasSubstr(library)));
  }
#ifdef NEARDUP_CLI_LOADS_POSTGRES_MODULE
  // libpq too: the PostgreSQL sink is the module neardup_postgres.so
  // (postgres_sink_test writes through it).
  EXPECT_THAT(start.out, ::testing::Not(HasSubstr("libpq")));
#endif
  // The build's own binary extracts (the module lies next to it).
  std::string folder = WriteSameTextFolder();
  CommandResult with = Neardup("fingerprint " + folder);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_THAT(with.err, HasSubstr("4 documents extracted"));

  if (std::filesystem::exists(NEARDUP_EXTRACT_MODULE_INSTALLED)) {
    GTEST_SKIP() << "an installed " << NEARDUP_EXTRACT_MODULE_INSTALLED
                 << " would serve a copy of neardup too";
  }
  // A copy of the binary in `name`/ (a copy, not a link: the module is
  // looked for next to the file that runs), with `module` beside it as
  // neardup_extract.so when given; runs `fingerprint` on the folder.
  struct CopyRun {
    int status;
    std::string out;
    std::string err;
    std::string module_path;
  };
  auto run_copy = [&](const std::string& name, const std::string& module) {
    std::filesystem::path copy = dir_ / name / "neardup";
    std::filesystem::create_directories(copy.parent_path());
    std::filesystem::copy_file(NEARDUP_CLI, copy);
    const std::filesystem::path module_path = copy.parent_path() / "neardup_extract.so";
    if (!module.empty()) std::filesystem::copy_file(module, module_path);
    const std::string out = (dir_ / (name + ".out")).string();
    const std::string err = (dir_ / (name + ".err")).string();
    const int status =
        std::system((copy.string() + " fingerprint " + folder + " >" + out + " 2>" + err).c_str());
    return CopyRun{status, Read(out), Read(err), module_path.string()};
  };
  auto expect_rich_files_skipped = [&](const CopyRun& run) {
    ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.err;
    EXPECT_EQ(Lines(run.out).size(), 2u) << run.out;  // a.txt and f.txt
    for (const char* name : {"b.pdf", "c.docx", "d.odt", "e.html"}) {
      EXPECT_THAT(run.err, HasSubstr(std::string("skipped ") + folder + "/" + name));
    }
    EXPECT_THAT(run.err, HasSubstr("4 records skipped"));
  };

  // No module beside it.
  const CopyRun lonely = run_copy("lonely", "");
  expect_rich_files_skipped(lonely);
  EXPECT_THAT(lonely.err, HasSubstr("with the module neardup_extract.so, which is not installed"));

  // A zip from standard input (no name to go by): a skip naming the
  // module, not its bytes read as text.
  {
    const std::string lonely_neardup = (dir_ / "lonely" / "neardup").string();
    const std::string out = (dir_ / "stdin.out").string();
    const std::string err = (dir_ / "stdin.err").string();
    const int status = std::system(
        (lonely_neardup + " fingerprint - <" + folder + "/c.docx >" + out + " 2>" + err).c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Read(err);
    EXPECT_EQ(Read(out), "");
    EXPECT_THAT(Read(err), HasSubstr("with the module neardup_extract.so, which is not installed"));
  }

  // A file that is no shared object: a skip naming it, no abort.
  const std::string garbage = (dir_ / "garbage.so").string();
  {
    std::ofstream file(garbage, std::ios::binary);
    file << "not an ELF file!";  // 16 bytes
  }
  const CopyRun broken = run_copy("broken", garbage);
  expect_rich_files_skipped(broken);
  EXPECT_THAT(broken.err, HasSubstr("cannot load the module " + broken.module_path + ": "));

  // A module of another build (tests/other_build_module.cc): refused,
  // naming it and both build ids.
  const CopyRun other = run_copy("other", NEARDUP_OTHER_BUILD_MODULE);
  expect_rich_files_skipped(other);
  EXPECT_THAT(other.err, HasSubstr("the module " + other.module_path +
                                   " is of another neardup build (build id 0.0.0-another, "
                                   "this neardup "));
#ifdef NEARDUP_CLI_LOADS_POSTGRES_MODULE
  if (std::filesystem::exists(NEARDUP_POSTGRES_MODULE_INSTALLED)) {
    GTEST_SKIP() << "an installed " << NEARDUP_POSTGRES_MODULE_INSTALLED
                 << " would serve a copy of neardup too";
  }
  // Nor can the lonely copy open a PostgreSQL sink (before connecting to
  // anything).
  const std::string lonely_neardup = (dir_ / "lonely" / "neardup").string();
  const std::string out = (dir_ / "sink.out").string();
  const std::string err = (dir_ / "sink.err").string();
  const int status = std::system((lonely_neardup + " pairs -q --sink postgresql://localhost:1/x " +
                                  folder + " >" + out + " 2>" + err)
                                     .c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_THAT(Read(err), HasSubstr("writes to PostgreSQL with the module neardup_postgres.so, "
                                   "which is not installed"));
#endif
#endif
}

}  // namespace
}  // namespace neardup::testing
