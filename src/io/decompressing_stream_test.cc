#include "io/decompressing_stream.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/byte_stream.h"
#include "io/io_test_util.h"

namespace neardup::internal {
namespace {

using testing::Drain;
using testing::Drained;
using testing::Gzip;
using ::testing::HasSubstr;
using testing::RandomBytes;
using testing::ScriptedStream;
using testing::Zstd;

Drained Decompress(const std::string& compressed, Compression expected, size_t piece = 1 << 20,
                   size_t request = 4096) {
  Compression detected;
  Result<std::unique_ptr<ByteStream>> stream =
      OpenDecompressed(std::make_unique<ScriptedStream>(compressed, piece), "in.bin", &detected);
  EXPECT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ(detected, expected);
  return Drain(stream->get(), request);
}

TEST(DecompressingStreamTest, PassesThroughBytesWithoutMagic) {
  for (std::string data : {std::string(), std::string("\x1f"), std::string("plain text"),
                           std::string("\x28\xb5\x2f", 3), RandomBytes(10000, 1)}) {
    if (data.size() >= 2 && data[0] == '\x1f' && data[1] == '\x8b') data[1] = 'x';
    Drained out = Decompress(data, Compression::kNone);
    EXPECT_TRUE(out.status.ok()) << out.status;
    EXPECT_EQ(out.bytes, data);
  }
}

TEST(DecompressingStreamTest, GzipRoundTripInSmallPieces) {
  std::string data = RandomBytes(700000, 2) + std::string(500000, 'a');
  // Input served a few bytes at a time and output asked for in odd sizes
  // exercise every refill and flush path.
  Drained out = Decompress(Gzip(data), Compression::kGzip, 7, 1000);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, data);
}

TEST(DecompressingStreamTest, GzipMultiMember) {
  std::string a = "first member\n", b = RandomBytes(300000, 3), c = "third\n";
  Drained out = Decompress(Gzip(a) + Gzip(b, 1) + Gzip(c, 9), Compression::kGzip);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, a + b + c);
}

TEST(DecompressingStreamTest, GzipOfEmptyInput) {
  Drained out = Decompress(Gzip(""), Compression::kGzip);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, "");
}

TEST(DecompressingStreamTest, TruncatedGzipGivesDataLossAfterTheIntactPrefix) {
  std::string data = RandomBytes(400000, 4);
  std::string compressed = Gzip(data);
  std::string cut = compressed.substr(0, compressed.size() / 2);
  Drained out = Decompress(cut, Compression::kGzip);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(out.status.message(), HasSubstr("in.bin: truncated gzip stream at compressed byte " +
                                              std::to_string(cut.size())));
  // What was decoded is a true prefix, and most of what the cut kept.
  EXPECT_EQ(out.bytes, data.substr(0, out.bytes.size()));
  EXPECT_GT(out.bytes.size(), data.size() / 3);
}

TEST(DecompressingStreamTest, GzipCutInsideTheTrailerIsTruncated) {
  std::string compressed = Gzip("hello, world");
  Drained out = Decompress(compressed.substr(0, compressed.size() - 3), Compression::kGzip);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(out.status.message(), HasSubstr("truncated gzip stream"));
}

TEST(DecompressingStreamTest, CorruptGzipGivesDataLossWithOffset) {
  std::string data(100000, 'x');
  std::string compressed = Gzip(data);
  compressed[compressed.size() - 6] ^= 0x55;  // inside the CRC-32 of the trailer
  Drained out = Decompress(compressed, Compression::kGzip);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(out.status.message(), HasSubstr("in.bin: corrupt gzip stream at compressed byte"));
  EXPECT_THAT(out.status.message(), HasSubstr("incorrect data check"));
}

TEST(DecompressingStreamTest, TrailingGarbageAfterGzipIsDataLoss) {
  Drained out = Decompress(Gzip("abc") + "garbage!", Compression::kGzip);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(out.bytes, "abc");
}

TEST(DecompressingStreamTest, ZstdRoundTripMultiFrame) {
  std::string a = RandomBytes(500000, 5), b = std::string(2000000, 'z'), c = "tail";
  Drained out = Decompress(Zstd(a) + Zstd(b, 19) + Zstd(c), Compression::kZstd, 13, 777);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, a + b + c);
}

TEST(DecompressingStreamTest, TruncatedZstdGivesDataLossAfterTheIntactPrefix) {
  std::string data = RandomBytes(400000, 6);
  std::string compressed = Zstd(data);
  std::string cut = compressed.substr(0, compressed.size() - 1000);
  Drained out = Decompress(cut, Compression::kZstd);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(out.status.message(), HasSubstr("in.bin: truncated zstd stream at compressed byte " +
                                              std::to_string(cut.size())));
  EXPECT_EQ(out.bytes, data.substr(0, out.bytes.size()));
}

TEST(DecompressingStreamTest, CorruptZstdGivesDataLoss) {
  std::string compressed = Zstd("a small frame with a checksum?") + "\x01\x02\x03\x04\x05";
  Drained out = Decompress(compressed, Compression::kZstd);
  EXPECT_EQ(out.status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(out.status.message(), HasSubstr("corrupt zstd stream at compressed byte"));
}

TEST(DecompressingStreamTest, ReadErrorOfTheCompressedStreamComesAfterDecodedBytes) {
  std::string data = RandomBytes(300000, 7);
  std::string compressed = Gzip(data);
  Result<std::unique_ptr<ByteStream>> stream =
      OpenDecompressed(std::make_unique<ScriptedStream>(compressed.substr(0, compressed.size() / 2),
                                                        1 << 16, IoError("disk on fire")),
                       "in.bin");
  ASSERT_TRUE(stream.ok());
  Drained out = Drain(stream->get());
  EXPECT_EQ(out.status, IoError("disk on fire"));
  EXPECT_GT(out.bytes.size(), 0u);
  EXPECT_EQ(out.bytes, data.substr(0, out.bytes.size()));
}

}  // namespace
}  // namespace neardup::internal
