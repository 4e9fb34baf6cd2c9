// DocumentReader on careless or hostile inputs (issue 12): streams that never
// end, directories holding things that are not files, excluded directories,
// and JSONL lines with invalid UTF-8.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/io_test_util.h"
#include "neardup/document_reader.h"

namespace neardup {
namespace {

using internal::testing::Ids;
using internal::testing::ReadAll;
using internal::testing::ReadOutcome;
using internal::testing::ReadStream;
using internal::testing::Texts;
using test_support::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A hang is the failure these tests look for: SIGALRM ends the test binary
// instead of letting CTest wait out its timeout.
class NeverEndingInputTest : public ::testing::Test {
 protected:
  void SetUp() override { ::alarm(60); }
  void TearDown() override { ::alarm(0); }
};

// Serves one byte forever and says it may never end, like /dev/zero.
class EndlessStream : public ByteStream {
 public:
  explicit EndlessStream(char byte) : byte_(byte) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    std::memset(buffer, byte_, size);
    served_ += size;
    return size;
  }
  bool HasEnd() const override { return false; }
  uint64_t served() const { return served_; }

 private:
  char byte_;
  uint64_t served_ = 0;
};

TEST_F(NeverEndingInputTest, EndlessTextStreamIsSkippedAtTheLimit) {
  InputOptions options;
  options.max_document_bytes = 1 << 20;
  ReadOutcome out =
      ReadStream(std::make_unique<EndlessStream>('z'), "endless", InputFormat::kText, options);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(out.documents.empty());
  ASSERT_EQ(out.skipped.size(), 1u);
  EXPECT_THAT(out.skipped[0].reason, HasSubstr("may never end: the rest was not read"));
}

TEST_F(NeverEndingInputTest, EndlessJsonlLineEndsTheReaderWithAClearError) {
  InputOptions options;
  options.max_document_bytes = 1 << 20;
  ReadOutcome out =
      ReadStream(std::make_unique<EndlessStream>('x'), "endless", InputFormat::kJsonl, options);
  EXPECT_EQ(out.status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status.message(), HasSubstr("endless: line 1 is longer than max_document_bytes"));
}

TEST_F(NeverEndingInputTest, DevZeroAsTextAndAsJsonl) {
  InputOptions options;
  options.max_document_bytes = 1 << 20;
  ReadOutcome text = ReadAll({"/dev/zero"}, options);
  EXPECT_TRUE(text.status.ok()) << text.status;
  ASSERT_EQ(text.skipped.size(), 1u);
  EXPECT_EQ(text.skipped[0].source, "/dev/zero");
  options.format = InputFormat::kJsonl;
  ReadOutcome jsonl = ReadAll({"/dev/zero"}, options);
  EXPECT_EQ(jsonl.status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(jsonl.status.message(), HasSubstr("/dev/zero"));
}

// A FIFO whose writer never stops and never closes: reading must stop anyway.
TEST_F(NeverEndingInputTest, FifoThatNeverCloses) {
  ::signal(SIGPIPE, SIG_IGN);  // the writer learns of the reader's end by EPIPE
  TempDir dir;
  const std::string fifo = dir.Path("endless.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  for (InputFormat format : {InputFormat::kText, InputFormat::kJsonl}) {
    std::thread writer([&] {
      int fd = ::open(fifo.c_str(), O_WRONLY);
      if (fd < 0) return;
      std::string block = "{\"id\": \"first\", \"text\": \"fits\"}\n" + std::string(1 << 16, 'y');
      if (::write(fd, block.data(), block.size()) > 0) {
        std::string more(1 << 16, 'y');
        while (::write(fd, more.data(), more.size()) > 0) {
        }
      }
      ::close(fd);
    });
    InputOptions options;
    options.format = format;
    options.max_document_bytes = 1 << 20;
    ReadOutcome out = ReadAll({fifo}, options);
    writer.join();
    if (format == InputFormat::kText) {
      EXPECT_TRUE(out.status.ok()) << out.status;
      ASSERT_EQ(out.skipped.size(), 1u);
    } else {
      EXPECT_THAT(Ids(out), ElementsAre("first"));
      EXPECT_EQ(out.status.code(), StatusCode::kResourceExhausted);
      EXPECT_THAT(out.status.message(), HasSubstr("line 2 is longer"));
    }
  }
}

TEST(DocumentReaderInputsTest, OverLongLineInARegularFileIsStillPassedOver) {
  TempDir dir;
  std::string path = dir.Write("r.jsonl", "{\"text\": \"" + std::string(5000, 'l') +
                                              "\"}\n{\"id\": \"ok\", \"text\": \"fits\"}\n");
  InputOptions options;
  options.max_document_bytes = 100;
  ReadOutcome out = ReadAll({path}, options);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("ok"));
  ASSERT_EQ(out.skipped.size(), 1u);
}

TEST(DocumentReaderInputsTest, EntriesThatAreNotFilesAreSkippedAndCounted) {
  TempDir dir;
  namespace fs = std::filesystem;
  dir.Write("in/a.txt", "alpha");
  dir.Write("in/sub/b.txt", "beta");
  dir.Write("elsewhere/c.txt", "gamma");
  fs::create_symlink(dir.Path("in/loop1"), dir.Path("in/loop2"));
  fs::create_symlink(dir.Path("in/loop2"), dir.Path("in/loop1"));
  fs::create_directory_symlink(dir.Path("elsewhere"), dir.Path("in/dirlink"));
  fs::create_symlink(dir.Path("nowhere"), dir.Path("in/dangling"));
  ASSERT_EQ(::mkfifo(dir.Path("in/fifo").c_str(), 0600), 0);
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = dir.Path("in/socket");
  ASSERT_LT(socket_path.size(), sizeof(address.sun_path));
  std::strcpy(address.sun_path, socket_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);

  ReadOutcome out = ReadAll({dir.Path("in")});
  ::close(sock);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a.txt", "sub/b.txt"));
  std::vector<std::string> skipped;
  for (const SkippedRecord& r : out.skipped) skipped.push_back(r.id + ": " + r.reason);
  EXPECT_THAT(skipped, ElementsAre("dangling: dangling symbolic link",
                                   "dirlink: symbolic link to a directory (not followed)",
                                   "fifo: FIFO (not read inside a directory: it may never end)",
                                   "loop1: symbolic link loop", "loop2: symbolic link loop",
                                   "socket: socket (not a file)"));
}

TEST(DocumentReaderInputsTest, ExcludedDirectoriesAreSkippedAsInputAndInsideOne) {
  TempDir dir;
  dir.Write("corpus/a.txt", "alpha");
  dir.Write("corpus/coll/catalog", "not to be read");
  dir.Write("corpus/coll/data/x.txt", "not to be read either");
  dir.Write("corpus/z.txt", "zed");
  InputOptions options;
  // Another spelling of the same directory: compared by identity.
  options.excluded_directories = {{dir.Path("corpus/./coll/"), "the collection"}};
  ReadOutcome out = ReadAll({dir.Path("corpus"), dir.Path("corpus/coll")}, options);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(Ids(out), ElementsAre("a.txt", "z.txt"));
  ASSERT_EQ(out.skipped.size(), 2u);
  EXPECT_EQ(out.skipped[0].id, "coll");
  EXPECT_EQ(out.skipped[0].reason, "the collection");
  EXPECT_EQ(out.skipped[1].source, dir.Path("corpus/coll"));
}

TEST(DocumentReaderInputsTest, JsonlWithInvalidUtf8IsReplacedAndCountedNotSkipped) {
  TempDir dir;
  std::string path = dir.Write("u.jsonl",
                               "{\"id\": \"bad\", \"text\": \"caf\xe9 au lait\"}\n"
                               "{\"id\": \"good\", \"text\": \"caf\xc3\xa9\"}\n");
  InputOptions options;
  options.keep_raw_records = true;
  std::vector<SkippedRecord> skipped;
  options.on_skip = [&](const SkippedRecord& r) { skipped.push_back(r); };
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, options);
  ASSERT_TRUE(reader.ok());
  Document doc;
  ASSERT_TRUE(*(*reader)->Next(&doc));
  EXPECT_EQ(doc.id, "bad");
  EXPECT_EQ(doc.text, "caf\xEF\xBF\xBD au lait");
  EXPECT_EQ(doc.raw_record, "{\"id\": \"bad\", \"text\": \"caf\xe9 au lait\"}");  // verbatim
  ASSERT_TRUE(*(*reader)->Next(&doc));
  EXPECT_EQ(doc.text, "caf\xc3\xa9");
  EXPECT_FALSE(*(*reader)->Next(&doc));
  EXPECT_TRUE(skipped.empty());
  EXPECT_EQ((*reader)->documents_with_invalid_utf8(), 1u);
}

}  // namespace
}  // namespace neardup
