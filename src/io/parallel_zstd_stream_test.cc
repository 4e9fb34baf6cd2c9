// Multi-frame zstd decoded in parallel must give what the one-thread decoder
// gives: the same bytes, and on damage the same error after the same bytes.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <string>
#include <vector>

#include "io/byte_stream.h"
#include "io/decompressing_stream.h"
#include "io/io_test_util.h"

namespace neardup::internal {
namespace {

using testing::Drain;
using testing::Drained;
using testing::RandomBytes;
using testing::ScriptedStream;
using testing::Zstd;

// Decodes `compressed` with `threads` threads (1: the serial decoder; more:
// the parallel one), reading `request` bytes at a time from a source that
// serves `piece` bytes at a time.
Drained Decode(const std::string& compressed, int threads, size_t piece, size_t request) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  Result<std::unique_ptr<ByteStream>> stream =
      OpenDecompressed(std::make_unique<ScriptedStream>(compressed, piece), "in.zst");
  EXPECT_TRUE(stream.ok()) << stream.status();
  return Drain(stream->get(), request);
}

// pzstd's layout: before each frame a skippable frame holding its size.
std::string SkippableFrame(uint32_t value) {
  std::string frame = "\x50\x2a\x4d\x18";
  frame += std::string("\x04\x00\x00\x00", 4);
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>(value >> (8 * i)));
  return frame;
}

std::vector<std::string> Pieces() {
  std::vector<std::string> pieces;
  for (int i = 0; i < 9; ++i) {
    pieces.push_back(i % 3 == 0 ? RandomBytes(70000 + i, i) : std::string(200000 + i, 'a' + i));
  }
  pieces.push_back("");  // an empty frame
  return pieces;
}

void ExpectSameAsSerial(const std::string& compressed) {
  const Drained serial = Decode(compressed, 1, 1 << 20, 4096);
  for (int threads : {2, 4}) {
    for (size_t piece : {size_t{100}, size_t{1} << 20}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, pieces of " + std::to_string(piece));
      const Drained parallel = Decode(compressed, threads, piece, 5000);
      EXPECT_EQ(parallel.status.ToString(), serial.status.ToString());
      EXPECT_TRUE(parallel.bytes == serial.bytes)
          << parallel.bytes.size() << " vs " << serial.bytes.size() << " bytes";
    }
  }
}

TEST(ParallelZstdStreamTest, ManyFramesDecodeInOrder) {
  std::string compressed, expected;
  for (const std::string& piece : Pieces()) {
    compressed += Zstd(piece, 1);
    expected += piece;
  }
  EXPECT_EQ(Decode(compressed, 4, 1 << 20, 4096).bytes, expected);
  ExpectSameAsSerial(compressed);
}

TEST(ParallelZstdStreamTest, SkippableFramesFirstAndBetween) {
  std::string compressed, expected;
  for (const std::string& piece : Pieces()) {
    const std::string frame = Zstd(piece, 1);
    compressed += SkippableFrame(static_cast<uint32_t>(frame.size())) + frame;
    expected += piece;
  }
  const Drained out = Decode(compressed, 4, 1 << 20, 4096);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, expected);
  ExpectSameAsSerial(compressed);
}

TEST(ParallelZstdStreamTest, CorruptMiddleFrameFailsAsTheSerialDecoder) {
  std::string compressed;
  std::vector<std::string> pieces = Pieces();
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string frame = Zstd(pieces[i], 1);
    if (i == 4) frame[4] |= 0x08;  // a reserved bit of the frame header descriptor
    compressed += frame;
  }
  ExpectSameAsSerial(compressed);
  EXPECT_FALSE(Decode(compressed, 4, 1 << 20, 4096).status.ok());
}

TEST(ParallelZstdStreamTest, TruncatedLastFrameFailsAsTheSerialDecoder) {
  std::string compressed;
  for (const std::string& piece : Pieces()) compressed += Zstd(piece, 1);
  compressed += Zstd(RandomBytes(50000, 99), 1).substr(0, 20000);
  ExpectSameAsSerial(compressed);
  EXPECT_EQ(Decode(compressed, 4, 1 << 20, 4096).status.code(), StatusCode::kDataLoss);
}

TEST(ParallelZstdStreamTest, GarbageAfterTheFramesFailsAsTheSerialDecoder) {
  std::string compressed = Zstd("one frame", 1) + Zstd("two frames", 1) + "not zstd at all";
  ExpectSameAsSerial(compressed);
}

}  // namespace
}  // namespace neardup::internal
