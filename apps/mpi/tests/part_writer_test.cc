// PartWriter (part_writer.h) on a temporary file with a 64-byte buffer:
// many flushes, pieces larger than the buffer, and parts longer or shorter
// than planned (nothing written past the planned end; an error either way).
#include "part_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::mpi {
namespace {

constexpr size_t kBuffer = 64;
constexpr uint64_t kOffset = 7;
// The file before the part is written: the bytes around the part must stay.
const std::string kBefore(1000, '.');

class MpiPartWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/part_writer_test_XXXXXX";
    fd_ = ::mkstemp(name);
    ASSERT_GE(fd_, 0);
    path_ = name;
    ASSERT_EQ(::pwrite(fd_, kBefore.data(), kBefore.size(), 0),
              static_cast<ssize_t>(kBefore.size()));
  }
  void TearDown() override {
    ::close(fd_);
    std::remove(path_.c_str());
  }
  std::string Contents() const {
    std::string text(kBefore.size(), '\0');
    EXPECT_EQ(::pread(fd_, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    return text;
  }
  // kBefore with `part` at kOffset.
  static std::string With(const std::string& part) {
    std::string text = kBefore;
    text.replace(kOffset, part.size(), part);
    return text;
  }
  // Hands `pieces` to a writer planned for `bytes`; the first error.
  Status Write(const std::vector<std::string>& pieces, uint64_t bytes) {
    PartWriter writer(fd_, kOffset, bytes, path_, kBuffer);
    for (const std::string& piece : pieces) NEARDUP_RETURN_IF_ERROR(writer.Add(piece));
    return writer.Finish();
  }

  int fd_ = -1;
  std::string path_;
};

// Pieces of 0..29 bytes, 500 bytes in all: the buffer is written out many
// times, each at the end of the last.
TEST_F(MpiPartWriterTest, ManyFlushes) {
  std::vector<std::string> pieces;
  std::string part;
  for (size_t i = 0; part.size() < 500; ++i) {
    std::string piece(i % 30, static_cast<char>('a' + i % 26));
    piece = piece.substr(0, 500 - part.size());
    part += piece;
    pieces.push_back(piece);
  }
  ASSERT_TRUE(Write(pieces, part.size()).ok());
  EXPECT_EQ(Contents(), With(part));
}

// Pieces of the buffer's size and more, between small ones and one after
// another.
TEST_F(MpiPartWriterTest, PiecesLargerThanTheBuffer) {
  const std::vector<std::string> pieces = {
      std::string(10, 'a'), std::string(200, 'b'), std::string(5, 'c'), std::string(64, 'd'),
      std::string(65, 'e'), std::string(63, 'f'),  std::string(1, 'g'), std::string(130, 'h'),
      std::string(0, 'i'),  std::string(3, 'j')};
  std::string part;
  for (const std::string& piece : pieces) part += piece;
  ASSERT_TRUE(Write(pieces, part.size()).ok());
  EXPECT_EQ(Contents(), With(part));
}

TEST_F(MpiPartWriterTest, EmptyPart) {
  ASSERT_TRUE(Write({}, 0).ok());
  ASSERT_TRUE(Write({"", ""}, 0).ok());
  EXPECT_EQ(Contents(), kBefore);
}

// More bytes than planned: an error, and not one byte past the planned end,
// whether the excess comes in small pieces or in one large one.
TEST_F(MpiPartWriterTest, LongerPartWritesNothingPastItsEnd) {
  for (const std::vector<std::string>& pieces :
       {std::vector<std::string>(13, std::string(20, 'x')),
        std::vector<std::string>{std::string(90, 'x'), std::string(200, 'y')},
        std::vector<std::string>{std::string(101, 'x')}}) {
    const Status status = Write(pieces, 100);
    EXPECT_EQ(status.code(), StatusCode::kInternal);
    EXPECT_NE(status.message().find("bytes or more, not the 100 planned"), std::string::npos)
        << status.message();
    const std::string contents = Contents();
    EXPECT_EQ(contents.substr(kOffset + 100), kBefore.substr(kOffset + 100));
    EXPECT_EQ(contents.substr(0, kOffset), kBefore.substr(0, kOffset));
  }
}

// Fewer bytes than planned: Finish says how many came.
TEST_F(MpiPartWriterTest, ShorterPartFails) {
  const Status status = Write({std::string(30, 'x'), std::string(30, 'y')}, 100);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("is 60 bytes, not the 100 planned"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace neardup::mpi
