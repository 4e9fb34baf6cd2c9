#include "io/line_reader.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/io_test_util.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;
using testing::ScriptedStream;

// "#<length>!" (built by appending: GCC 12 warns falsely on "#" + s + "!").
std::string TooLong(uint64_t length) {
  std::string out = "#";
  out += std::to_string(length);
  out += '!';
  return out;
}

struct Collected {
  std::vector<std::string> lines;  // "#<length>!" for a too-long line
  std::vector<uint64_t> numbers;
  Status status;
};

Collected Collect(const std::string& data, uint64_t max_line_bytes = 1 << 30,
                  size_t piece = 1 << 20, Status error = Status::Ok()) {
  ScriptedStream stream(data, piece, error);
  LineReader reader(&stream, max_line_bytes);
  Collected out;
  Line line;
  while (true) {
    Result<bool> next = reader.Next(&line);
    if (!next.ok()) {
      out.status = next.status();
      break;
    }
    if (!*next) break;
    out.lines.push_back(line.too_long ? TooLong(line.length) : std::string(line.text));
    out.numbers.push_back(line.number);
    if (!line.too_long) {
      EXPECT_EQ(line.length, line.text.size());
      // The padding promise: these bytes must be readable (ASan checks).
      volatile char sink = 0;
      for (size_t i = 0; i < kLinePaddingBytes; ++i)
        sink = sink + line.text.data()[line.text.size() + i];
    }
  }
  return out;
}

TEST(LineReaderTest, SplitsOnNewlineAndCrLf) {
  Collected out = Collect("a\nbb\r\n\nccc\r\n\r\nd");
  EXPECT_TRUE(out.status.ok());
  EXPECT_THAT(out.lines, ElementsAre("a", "bb", "", "ccc", "", "d"));
  EXPECT_THAT(out.numbers, ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(LineReaderTest, EmptyStreamHasNoLines) {
  EXPECT_TRUE(Collect("").lines.empty());
  EXPECT_THAT(Collect("\n").lines, ElementsAre(""));
}

TEST(LineReaderTest, LoneCarriageReturnInsideALineIsKept) {
  EXPECT_THAT(Collect("a\rb\nc\r").lines, ElementsAre("a\rb", "c"));
}

TEST(LineReaderTest, LinesLongerThanTheBufferAndServedInPieces) {
  std::string big(3 * LineReader::kBlockBytes + 12345, 'x');
  Collected out = Collect("s\n" + big + "\r\nt", 1 << 30, 65537);
  EXPECT_TRUE(out.status.ok());
  ASSERT_EQ(out.lines.size(), 3u);
  EXPECT_EQ(out.lines[0], "s");
  EXPECT_EQ(out.lines[1], big);
  EXPECT_EQ(out.lines[2], "t");
}

TEST(LineReaderTest, OverLongLinesArePassedOverWithTheirLength) {
  std::string long_line(2 * LineReader::kBlockBytes + 10, 'y');
  Collected out = Collect("12345\n123456\r\n" + long_line + "\nok\n" + long_line, 5, 4096);
  EXPECT_TRUE(out.status.ok());
  EXPECT_THAT(out.lines, ElementsAre("12345", "#6!", TooLong(long_line.size()), "ok",
                                     TooLong(long_line.size())));
  EXPECT_THAT(out.numbers, ElementsAre(1, 2, 3, 4, 5));
}

TEST(LineReaderTest, ErrorComesAfterTheCompleteLinesAndDropsThePartialOne) {
  Collected out = Collect("one\ntwo\nthr", 1 << 30, 3, IoError("boom"));
  EXPECT_THAT(out.lines, ElementsAre("one", "two"));
  EXPECT_EQ(out.status, IoError("boom"));
}

}  // namespace
}  // namespace neardup::internal
