#include "neardup/document_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/byte_stream.h"
#include "io/io_test_util.h"

namespace neardup {
namespace {

using internal::testing::Gzip;
using internal::testing::Ids;
using internal::testing::RandomBytes;
using internal::testing::ReadAll;
using internal::testing::ReadOutcome;
using internal::testing::ReadStream;
using internal::testing::Texts;
using internal::testing::Zstd;
using test_support::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const char kThreeRecords[] =
    "{\"id\": \"a\", \"text\": \"alpha\"}\n"
    "{\"id\": \"b\", \"text\": \"beta\"}\n"
    "{\"id\": \"c\", \"text\": \"gamma\"}\n";

TEST(DocumentReaderTest, PlainJsonl) {
  TempDir dir;
  ReadOutcome out = ReadAll({dir.Write("x.jsonl", kThreeRecords)});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Texts(out), ElementsAre("alpha", "beta", "gamma"));
  EXPECT_THAT(out.skipped, IsEmpty());
}

TEST(DocumentReaderTest, CrLfBlankLinesAndNoFinalNewline) {
  TempDir dir;
  std::string path = dir.Write(
      "x.ndjson",
      "\xEF\xBB\xBF{\"id\": \"a\", \"text\": \"alpha\"}\r\n\r\n   \n\t\r\n"
      "{\"id\": \"b\", \"text\": \"beta\\r\\n\"}\r\n\n{\"id\": \"c\", \"text\": \"gamma\"}");
  ReadOutcome out = ReadAll({path});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Texts(out), ElementsAre("alpha", "beta\r\n", "gamma"));
  EXPECT_THAT(out.skipped, IsEmpty());
}

TEST(DocumentReaderTest, RawRecordsAreKeptVerbatimOnlyWhenAsked) {
  TempDir dir;
  std::string jsonl = dir.Write("x.jsonl",
                                "\xEF\xBB\xBF{\"id\": \"a\",  \"text\": \"al\\u0070ha\"}\r\n\n"
                                "{\"text\": \"beta\", \"extra\": [1, 2]}");
  std::string text = dir.Write("t.txt", "plain text");
  InputOptions options;
  options.keep_raw_records = true;
  ReadOutcome out = ReadAll({jsonl, text}, options);
  ASSERT_TRUE(out.status.ok()) << out.status;
  ASSERT_EQ(out.documents.size(), 3u);
  EXPECT_EQ(out.documents[0].raw_record, "{\"id\": \"a\",  \"text\": \"al\\u0070ha\"}");
  EXPECT_EQ(out.documents[0].text, "alpha");
  EXPECT_EQ(out.documents[1].raw_record, "{\"text\": \"beta\", \"extra\": [1, 2]}");
  EXPECT_EQ(out.documents[2].raw_record, "");
  ReadOutcome plain = ReadAll({jsonl});
  ASSERT_EQ(plain.documents.size(), 2u);
  EXPECT_EQ(plain.documents[0].raw_record, "");
}

TEST(DocumentReaderTest, NumericAndAbsentIdsFallBackToNameAndLine) {
  TempDir dir;
  std::string path = dir.Write("n.jsonl",
                               "{\"id\": 42, \"text\": \"a\"}\n"
                               "\n"
                               "{\"text\": \"b\"}\n"
                               "{\"id\": 1.5e3, \"text\": \"c\"}\n"
                               "{\"id\": null, \"text\": \"d\"}\n");
  ReadOutcome out = ReadAll({path});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("42", path + ":3", "1.5e3", path + ":5"));
}

TEST(DocumentReaderTest, CustomTextAndIdFields) {
  TempDir dir;
  InputOptions options;
  options.text_field = "content";
  options.id_field = "url";
  ReadOutcome out = ReadAll({dir.Write("c.jsonl",
                                       "{\"url\": \"u1\", \"content\": \"one\", \"text\": \"no\"}\n"
                                       "{\"id\": \"x\", \"content\": \"two\"}\n")},
                            options);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("u1", dir.Path("c.jsonl") + ":2"));
  EXPECT_THAT(Texts(out), ElementsAre("one", "two"));
}

TEST(DocumentReaderTest, InvalidRecordsAreSkippedReportedAndReadingGoesOn) {
  TempDir dir;
  std::string path = dir.Write("bad.jsonl",
                               "{\"id\": \"a\", \"text\": \"alpha\"}\n"
                               "{\"id\": \"b\", \"text\": \"beta\"\n"  // unclosed
                               "{\"id\": \"c\", \"text\": 7}\n"
                               "[1, 2]\n"
                               "{\"id\": \"e\"}\n"
                               "{\"id\": \"f\", \"text\": \"phi\"}\n");
  ReadOutcome out = ReadAll({path});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a", "f"));
  ASSERT_EQ(out.skipped.size(), 4u);
  EXPECT_EQ(out.skipped[0].source, path);
  EXPECT_EQ(out.skipped[0].line, 2u);
  EXPECT_THAT(out.skipped[0].reason, HasSubstr("invalid JSON"));
  EXPECT_EQ(out.skipped[1].line, 3u);
  EXPECT_EQ(out.skipped[1].id, "c");
  EXPECT_EQ(out.skipped[1].reason, "text field \"text\" is a number, not a string");
  EXPECT_EQ(out.skipped[2].line, 4u);
  EXPECT_THAT(out.skipped[2].reason, HasSubstr("not a JSON object"));
  EXPECT_EQ(out.skipped[3].line, 5u);
  EXPECT_EQ(out.skipped[3].id, "e");
  EXPECT_EQ(out.skipped[3].reason, "text field \"text\" is missing");
}

TEST(DocumentReaderTest, CompressedJsonlRoundTrips) {
  TempDir dir;
  std::string half1 = "{\"id\": \"a\", \"text\": \"alpha\"}\n{\"id\": \"b\", ";
  std::string half2 = "\"text\": \"beta\"}\n{\"id\": \"c\", \"text\": \"gamma\"}\n";
  // A record split across gzip members and zstd frames reads as one.
  std::vector<std::string> paths = {
      dir.Write("g.jsonl.gz", Gzip(kThreeRecords)),
      dir.Write("m.jsonl.gz", Gzip(half1) + Gzip(half2)),
      dir.Write("z.jsonl.zst", Zstd(kThreeRecords)),
      dir.Write("f.ndjson.zst", Zstd(half1) + Zstd(half2)),
  };
  for (const std::string& path : paths) {
    ReadOutcome out = ReadAll({path});
    EXPECT_TRUE(out.status.ok()) << path << ": " << out.status;
    EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c")) << path;
    EXPECT_THAT(Texts(out), ElementsAre("alpha", "beta", "gamma")) << path;
  }
}

TEST(DocumentReaderTest, CompressionIsDetectedByContentNotName) {
  TempDir dir;
  // Named like plain text, compressed anyway: decompressed, read as text.
  ReadOutcome out = ReadAll({dir.Write("a.txt", Gzip("hello")), dir.Write("b.gz", Zstd("zz"))});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Texts(out), ElementsAre("hello", "zz"));
  // Named .gz but not compressed: read as is.
  out = ReadAll({dir.Write("c.jsonl.gz", kThreeRecords)});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
}

// Many records, so the damage lies well after some complete records.
std::string ManyRecords(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += "{\"id\": " + std::to_string(i) + ", \"text\": \"record " +
           std::to_string(static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull) + " " +
           std::string(i % 50, 'x') + "\"}\n";
  }
  return out;
}

void ExpectTruncatedAfterIntactRecords(const std::string& path, const std::string& kind,
                                       size_t compressed_size, int total_records) {
  ReadOutcome out = ReadAll({path});
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss) << out.status;
  EXPECT_THAT(out.status.message(),
              HasSubstr(path + ": truncated " + kind + " stream at compressed byte " +
                        std::to_string(compressed_size)));
  ASSERT_GT(out.documents.size(), 0u);
  EXPECT_LT(out.documents.size(), static_cast<size_t>(total_records));
  for (size_t i = 0; i < out.documents.size(); ++i) {
    EXPECT_EQ(out.documents[i].id, std::to_string(i));
  }
  EXPECT_THAT(out.skipped, IsEmpty());  // the cut record is not reported as bad JSON
}

TEST(DocumentReaderTest, TruncatedGzipGivesDataLossAfterIntactDocuments) {
  TempDir dir;
  std::string data = ManyRecords(20000);
  std::string compressed = Gzip(data);
  std::string cut = compressed.substr(0, compressed.size() * 2 / 3);
  ExpectTruncatedAfterIntactRecords(dir.Write("t.jsonl.gz", cut), "gzip", cut.size(), 20000);
}

TEST(DocumentReaderTest, TruncatedZstdGivesDataLossAfterIntactDocuments) {
  TempDir dir;
  std::string data = ManyRecords(20000);
  std::string compressed = Zstd(data);
  std::string cut = compressed.substr(0, compressed.size() * 2 / 3);
  ExpectTruncatedAfterIntactRecords(dir.Write("t.jsonl.zst", cut), "zstd", cut.size(), 20000);
}

TEST(DocumentReaderTest, ErrorIsFinal) {
  TempDir dir;
  std::string compressed = Gzip(kThreeRecords);
  Result<std::unique_ptr<DocumentReader>> reader =
      DocumentReader::Open({dir.Write("t.txt.gz", compressed.substr(0, compressed.size() - 4)),
                            dir.Write("after.txt", "never read")},
                           {});
  ASSERT_TRUE(reader.ok());
  Document doc;
  Result<bool> first = (*reader)->Next(&doc);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kDataLoss);
  Result<bool> second = (*reader)->Next(&doc);
  EXPECT_EQ(second.status(), first.status());
  EXPECT_EQ((*reader)->documents_read(), 0u);
}

TEST(DocumentReaderTest, DirectoryTreeInSortedOrderWithRelativeIds) {
  TempDir dir;
  dir.Write("corpus/b.txt", "bee");
  dir.Write("corpus/a/z.txt", "zed");
  dir.Write("corpus/a.txt", "ay");
  dir.Write("corpus/a/records.jsonl", "{\"id\": \"r1\", \"text\": \"one\"}\n{\"text\": \"two\"}\n");
  dir.Write("corpus/a/b/deep.txt.gz", Gzip("deep"));
  dir.Write("corpus/c.jsonl.zst", Zstd("{\"id\": \"r3\", \"text\": \"three\"}\n"));
  std::filesystem::create_symlink(dir.Path("corpus/b.txt"), dir.Path("corpus/d-link.txt"));
  std::filesystem::create_directory_symlink(dir.Path("corpus/a"), dir.Path("corpus/e-dirlink"));
  ReadOutcome out = ReadAll({dir.Path("corpus")});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a.txt", "a/b/deep.txt.gz", "r1", "a/records.jsonl:2",
                                    "a/z.txt", "b.txt", "r3", "d-link.txt"));
  EXPECT_THAT(Texts(out), ElementsAre("ay", "deep", "one", "two", "zed", "bee", "three", "bee"));
}

TEST(DocumentReaderTest, FormatOptionOverridesNames) {
  TempDir dir;
  std::string jsonl_named = dir.Write("d/x.jsonl", kThreeRecords);
  InputOptions text;
  text.format = InputFormat::kText;
  ReadOutcome out = ReadAll({dir.Path("d")}, text);
  EXPECT_THAT(Texts(out), ElementsAre(kThreeRecords));
  EXPECT_THAT(Ids(out), ElementsAre("x.jsonl"));
  InputOptions jsonl;
  jsonl.format = InputFormat::kJsonl;
  out = ReadAll({dir.Write("records.txt", kThreeRecords)}, jsonl);
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
}

TEST(DocumentReaderTest, InputsInTheOrderGivenAndFileIdIsThePathAsGiven) {
  TempDir dir;
  std::string z = dir.Write("z.txt", "last letter");
  std::string a = dir.Write("a.txt", "first letter");
  ReadOutcome out = ReadAll({z, a, z});
  EXPECT_THAT(Ids(out), ElementsAre(z, a, z));
  EXPECT_THAT(Texts(out), ElementsAre("last letter", "first letter", "last letter"));
}

TEST(DocumentReaderTest, EmptyFiles) {
  TempDir dir;
  ReadOutcome out = ReadAll({dir.Write("empty.txt", ""), dir.Write("empty.jsonl", ""),
                             dir.Write("blank.jsonl", "\n\r\n \n")});
  EXPECT_TRUE(out.status.ok()) << out.status;
  ASSERT_EQ(out.documents.size(), 1u);
  EXPECT_EQ(out.documents[0].id, dir.Path("empty.txt"));
  EXPECT_EQ(out.documents[0].text, "");
}

TEST(DocumentReaderTest, BinaryBytesPassThroughUnchanged) {
  TempDir dir;
  std::string binary = RandomBytes(300000, 9);
  binary[0] = 'B';  // not a compression magic
  std::string invalid_utf8 = "caf\xc3 \xff\xfe \xed\xa0\x80 \0 end";
  ReadOutcome out = ReadAll({dir.Write("blob.bin", binary), dir.Write("bad.txt", invalid_utf8)});
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Texts(out), ElementsAre(binary, invalid_utf8));
}

// Both at 100 MB, in one test to keep the suite fast.
TEST(DocumentReaderTest, HundredMegabyteLineAndFile) {
  constexpr size_t kSize = size_t{100} << 20;
  TempDir dir;
  std::string text(kSize, 'w');
  for (size_t i = 0; i < kSize; i += 4099) text[i] = ' ';
  std::string line =
      "{\"id\": \"big\", \"text\": \"" + text + "\"}\n{\"id\": \"after\", \"text\": \"x\"}";
  std::string jsonl = dir.Write("big.jsonl", line);
  line = std::string();
  std::string txt = dir.Write("big.txt", text);
  ReadOutcome out = ReadAll({jsonl, txt});
  EXPECT_TRUE(out.status.ok()) << out.status;
  ASSERT_EQ(out.documents.size(), 3u);
  EXPECT_EQ(out.documents[0].id, "big");
  EXPECT_TRUE(out.documents[0].text == text);  // no 100 MB diff on failure
  EXPECT_EQ(out.documents[1].id, "after");
  EXPECT_EQ(out.documents[2].id, txt);
  EXPECT_TRUE(out.documents[2].text == text);
}

TEST(DocumentReaderTest, MissingInputIsNotFoundNamingIt) {
  TempDir dir;
  std::string present = dir.Write("here.txt", "x");
  std::string missing = dir.Path("not/here.txt");
  ReadOutcome out = ReadAll({present, missing});
  EXPECT_EQ(out.status.code(), StatusCode::kNotFound);
  EXPECT_THAT(out.status.message(), HasSubstr(missing));
  EXPECT_THAT(out.documents, IsEmpty());  // checked before reading anything
  Result<std::unique_ptr<DocumentReader>> none = DocumentReader::Open({}, {});
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
}

TEST(DocumentReaderTest, UnreadableFileIsIoErrorWithReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  TempDir dir;
  std::string path = dir.Write("secret.txt", "x");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  ReadOutcome out = ReadAll({path});
  EXPECT_EQ(out.status.code(), StatusCode::kIoError);
  EXPECT_THAT(out.status.message(), HasSubstr(path));
  EXPECT_THAT(out.status.message(), HasSubstr("Permission denied"));
}

TEST(DocumentReaderTest, ReadFailureIsIoErrorWithReason) {
  // Reading offset 0 of a process's own memory fails with EIO (page 0 is
  // never mapped), also for root.
  ReadOutcome out = ReadAll({"/proc/self/mem"});
  EXPECT_EQ(out.status.code(), StatusCode::kIoError);
  EXPECT_THAT(out.status.message(), HasSubstr("/proc/self/mem: read failed: Input/output error"));
}

TEST(DocumentReaderTest, MaxDocumentBytesSkipsAndReports) {
  TempDir dir;
  InputOptions options;
  options.max_document_bytes = 40;
  std::string small = dir.Write("small.txt", std::string(40, 's'));
  std::string large = dir.Write("large.txt", std::string(41, 'l'));
  std::string large_gz = dir.Write("large.txt.gz", Gzip(std::string(1000, 'g')));
  std::string too_long = "{\"id\": \"no\", \"text\": \"" + std::string(100, 'n') + "\"}";
  std::string jsonl = dir.Write("r.jsonl", "{\"id\": \"ok\", \"text\": \"fits\"}\n" + too_long +
                                               "\r\n{\"id\": \"ok2\", \"text\": \"fits too\"}\n");
  ReadOutcome out = ReadAll({small, large, large_gz, jsonl}, options);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre(small, "ok", "ok2"));
  ASSERT_EQ(out.skipped.size(), 3u);
  EXPECT_EQ(out.skipped[0].source, large);
  EXPECT_EQ(out.skipped[0].line, 0u);
  EXPECT_EQ(out.skipped[0].id, large);
  EXPECT_EQ(out.skipped[0].reason, "document of 41 bytes exceeds max_document_bytes (40)");
  EXPECT_EQ(out.skipped[1].reason, "document of 1000 bytes exceeds max_document_bytes (40)");
  EXPECT_EQ(out.skipped[2].source, jsonl);
  EXPECT_EQ(out.skipped[2].line, 2u);
  EXPECT_EQ(out.skipped[2].reason, "record of " + std::to_string(too_long.size()) +
                                       " bytes exceeds max_document_bytes (40)");
}

TEST(DocumentReaderTest, FromStreamTextAndJsonl) {
  ReadOutcome out = ReadStream(internal::MakeStringStream("stdin text"), "-", InputFormat::kAuto);
  EXPECT_TRUE(out.status.ok());
  EXPECT_THAT(Ids(out), ElementsAre("-"));
  EXPECT_THAT(Texts(out), ElementsAre("stdin text"));
  out = ReadStream(internal::MakeStringStream(Zstd("{\"text\": \"t\"}")), "-", InputFormat::kJsonl);
  EXPECT_TRUE(out.status.ok());
  EXPECT_THAT(Ids(out), ElementsAre("-:1"));
  out = ReadStream(internal::MakeStringStream(Gzip(kThreeRecords)), "s.jsonl", InputFormat::kAuto);
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
}

TEST(DocumentReaderTest, StdinIsReadAsDash) {
  TempDir dir;
  std::string path = dir.Write("in.jsonl.gz", Gzip(kThreeRecords));
  // Put the file on file descriptor 0 for this test only.
  int saved = ::dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  FILE* in = std::freopen(path.c_str(), "rb", stdin);
  ASSERT_NE(in, nullptr);
  InputOptions jsonl;
  jsonl.format = InputFormat::kJsonl;
  ReadOutcome out = ReadAll({"-"}, jsonl);
  ASSERT_EQ(::dup2(saved, STDIN_FILENO), STDIN_FILENO);
  ::close(saved);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a", "b", "c"));
}

// A stream that starts inside a file (a byte range of a split JSONL file)
// numbers its lines from first_line_number: ids without a field and skip
// reports name the file's lines, and a byte order mark counts only on line 1.
TEST(DocumentReaderTest, FirstLineNumberNumbersAStreamThatStartsInsideAFile) {
  InputOptions options;
  options.first_line_number = 41;
  ReadOutcome out = ReadStream(
      internal::MakeStringStream("{\"text\": \"a\"}\n\nnot json\n\xEF\xBB\xBF{\"text\": \"b\"}\n"),
      "big.jsonl", InputFormat::kAuto, options);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_THAT(Ids(out), ElementsAre("big.jsonl:41"));
  ASSERT_EQ(out.skipped.size(), 2u);
  EXPECT_EQ(out.skipped[0].line, 43u);
  EXPECT_EQ(out.skipped[1].line, 44u);
}

}  // namespace
}  // namespace neardup
