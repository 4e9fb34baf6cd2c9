// Files split into frames (zstd) or members (gzip) and decoded on several
// threads must give what the one-thread streaming decoder gives: the same
// bytes, and on damage the same error after the same bytes.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/byte_stream.h"
#include "io/compressed_frames.h"
#include "io/decompressing_stream.h"
#include "io/io_test_util.h"
#include "io/parallel_frame_stream.h"

namespace neardup::internal {
namespace {

using testing::Drain;
using testing::Drained;
using testing::Gzip;
using testing::RandomBytes;
using testing::ScriptedStream;
using testing::Zstd;

// A source like a pipe: no known end, so nothing is read ahead and the
// streaming decoders (zlib, libzstd) decode it. The reference.
class PipeLikeStream final : public ScriptedStream {
 public:
  using ScriptedStream::ScriptedStream;
  bool HasEnd() const override { return false; }
};

// Decodes `compressed` with `threads` threads (0: as a pipe, the streaming
// decoder), reading `request` bytes at a time from a source that serves
// `piece` bytes at a time.
Drained Decode(const std::string& compressed, int threads, size_t piece, size_t request) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::max(threads, 1));
  std::unique_ptr<ByteStream> source;
  if (threads == 0) {
    source = std::make_unique<PipeLikeStream>(compressed, piece);
  } else {
    source = std::make_unique<ScriptedStream>(compressed, piece);
  }
  Result<std::unique_ptr<ByteStream>> stream = OpenDecompressed(std::move(source), "in.z");
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

// Same bytes and status as the streaming decoder, on 1, 2 and 4 threads,
// with the source's bytes served whole and in small pieces.
void ExpectSameAsStreaming(const std::string& compressed) {
  const Drained streaming = Decode(compressed, 0, 1 << 20, 4096);
  for (int threads : {1, 2, 4}) {
    for (size_t piece : {size_t{100}, size_t{1} << 20}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, pieces of " + std::to_string(piece));
      const Drained split = Decode(compressed, threads, piece, 5000);
      EXPECT_EQ(split.status.ToString(), streaming.status.ToString());
      EXPECT_TRUE(split.bytes == streaming.bytes)
          << split.bytes.size() << " vs " << streaming.bytes.size() << " bytes";
    }
  }
}

TEST(ParallelFrameStreamTest, ManyZstdFramesDecodeInOrder) {
  std::string compressed, expected;
  for (const std::string& piece : Pieces()) {
    compressed += Zstd(piece, 1);
    expected += piece;
  }
  EXPECT_EQ(Decode(compressed, 4, 1 << 20, 4096).bytes, expected);
  ExpectSameAsStreaming(compressed);
}

TEST(ParallelFrameStreamTest, SkippableFramesFirstAndBetween) {
  std::string compressed, expected;
  for (const std::string& piece : Pieces()) {
    const std::string frame = Zstd(piece, 1);
    compressed += SkippableFrame(static_cast<uint32_t>(frame.size())) + frame;
    expected += piece;
  }
  const Drained out = Decode(compressed, 4, 1 << 20, 4096);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes, expected);
  ExpectSameAsStreaming(compressed);
}

TEST(ParallelFrameStreamTest, CorruptMiddleZstdFrameFailsAsTheStreamingDecoder) {
  std::string compressed;
  std::vector<std::string> pieces = Pieces();
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string frame = Zstd(pieces[i], 1);
    if (i == 4) frame[4] |= 0x08;  // a reserved bit of the frame header descriptor
    compressed += frame;
  }
  ExpectSameAsStreaming(compressed);
  EXPECT_FALSE(Decode(compressed, 4, 1 << 20, 4096).status.ok());
}

TEST(ParallelFrameStreamTest, TruncatedLastZstdFrameFailsAsTheStreamingDecoder) {
  std::string compressed;
  for (const std::string& piece : Pieces()) compressed += Zstd(piece, 1);
  compressed += Zstd(RandomBytes(50000, 99), 1).substr(0, 20000);
  ExpectSameAsStreaming(compressed);
  EXPECT_EQ(Decode(compressed, 4, 1 << 20, 4096).status.code(), StatusCode::kDataLoss);
}

TEST(ParallelFrameStreamTest, GarbageAfterTheZstdFramesFailsAsTheStreamingDecoder) {
  std::string compressed = Zstd("one frame", 1) + Zstd("two frames", 1) + "not zstd at all";
  ExpectSameAsStreaming(compressed);
}

// A gzip member with the optional header fields (RFC 1952 2.3.1): an extra
// field (as bgzip writes), a file name, a comment, and if asked a header CRC.
std::string GzipWithHeader(const std::string& data, bool header_crc = false) {
  gz_header header;
  std::memset(&header, 0, sizeof(header));
  static unsigned char extra[] = {'B', 'C', 2, 0, 0x12, 0x34};
  static unsigned char name[] = "records.jsonl";
  static unsigned char comment[] = "made by a test";
  header.extra = extra;
  header.extra_len = sizeof(extra);
  header.name = name;
  header.comment = comment;
  header.hcrc = header_crc ? 1 : 0;
  return Gzip(data, 6, &header);
}

// Members of `pieces` at levels 1, 6 and 9 in turn (and each fourth with
// the optional header fields).
std::string GzipMembers(const std::vector<std::string>& pieces, std::string* expected) {
  std::string compressed;
  for (size_t i = 0; i < pieces.size(); ++i) {
    static constexpr int kLevels[] = {1, 6, 9};
    compressed += i % 4 == 3 ? GzipWithHeader(pieces[i]) : Gzip(pieces[i], kLevels[i % 3]);
    *expected += pieces[i];
  }
  return compressed;
}

TEST(ParallelFrameStreamTest, GzipMembersRoundTrip) {
  std::string expected;
  const std::string compressed = GzipMembers(Pieces(), &expected);
  const Drained out = Decode(compressed, 4, 1 << 20, 4096);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(out.bytes == expected) << out.bytes.size() << " vs " << expected.size();
  ExpectSameAsStreaming(compressed);
  // One member alone, and an empty member alone.
  ExpectSameAsStreaming(Gzip(Pieces()[1]));
  ExpectSameAsStreaming(Gzip(""));
  EXPECT_EQ(Decode(Gzip(""), 2, 1 << 20, 4096).bytes, "");
}

TEST(ParallelFrameStreamTest, DamagedGzipMembersFailAsTheStreamingDecoder) {
  const std::vector<std::string> pieces = Pieces();
  // Each damage in member 4 of 10; the members before it are served first.
  const auto damaged = [&](auto damage) {
    std::string compressed;
    for (size_t i = 0; i < pieces.size(); ++i) {
      std::string member = Gzip(pieces[i], 6);
      if (i == 4) damage(&member);
      compressed += member;
    }
    return compressed;
  };
  for (int kind = 0; kind < 4; ++kind) {
    SCOPED_TRACE("damage " + std::to_string(kind));
    const std::string compressed = damaged([&](std::string* member) {
      switch (kind) {
        case 0:
          (*member)[member->size() / 2] ^= 0x55;  // deflate data
          break;
        case 1:
          (*member)[member->size() - 6] ^= 0x01;  // CRC-32
          break;
        case 2:
          (*member)[member->size() - 4] ^= 0x01;  // ISIZE: a byte too few or many
          break;
        default:
          (*member)[3] = static_cast<char>(0xe0);  // reserved flag bits
          break;
      }
    });
    ExpectSameAsStreaming(compressed);
    // Garbage after them is handed over before the damaged job fails: the
    // damaged job's bytes then go in front of what was handed over.
    ExpectSameAsStreaming(compressed + "trailing garbage");
    const Drained out = Decode(compressed, 2, 1 << 20, 4096);
    EXPECT_EQ(out.status.code(), StatusCode::kDataLoss) << out.status;
    std::string before;
    for (size_t i = 0; i < 4; ++i) before += pieces[i];
    EXPECT_TRUE(out.bytes.substr(0, before.size()) == before);
  }
}

TEST(ParallelFrameStreamTest, GzipHeaderCrcIsCheckedAsTheStreamingDecoderDoes) {
  // libdeflate skips a header CRC; zlib checks it: such members are zlib's.
  const std::string good = GzipWithHeader("with a header crc\n", true);
  std::string bad = good;
  bad[10 + 2 + 6 + 14 + 15] ^= 0x01;  // the CRC after extra (2 + 6), name, comment
  for (const std::string& third : {good, bad}) {
    const std::string compressed = Gzip("one\n") + Gzip("two\n") + third + Gzip("four\n");
    ExpectSameAsStreaming(compressed);
  }
  EXPECT_EQ(Decode(Gzip("one\n") + good, 2, 1 << 20, 4096).bytes, "one\nwith a header crc\n");
  EXPECT_EQ(Decode(Gzip("one\n") + bad, 2, 1 << 20, 4096).status.code(), StatusCode::kDataLoss);
}

TEST(ParallelFrameStreamTest, TruncatedGzipFailsAsTheStreamingDecoder) {
  std::string expected;
  const std::string compressed = GzipMembers(Pieces(), &expected);
  for (size_t cut : {size_t{2}, size_t{3}, size_t{15}, compressed.size() / 2, compressed.size() - 9,
                     compressed.size() - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    ExpectSameAsStreaming(compressed.substr(0, cut));
    const Drained out = Decode(compressed.substr(0, cut), 2, 1 << 20, 4096);
    EXPECT_EQ(out.status.code(), StatusCode::kDataLoss) << out.status;
    EXPECT_TRUE(out.bytes == expected.substr(0, out.bytes.size()));
  }
  ExpectSameAsStreaming(compressed + "garbage after the members");
  ExpectSameAsStreaming(compressed + std::string(1, '\x1f'));
}

TEST(ParallelFrameStreamTest, GzipMagicInsideAMemberOnlyCostsSpeed) {
  // Stored (level 0) deflate blocks keep the bytes as they are: a member
  // start is guessed inside the first member, whose decode then fails and
  // is done again by the streaming decoder.
  std::string data;
  for (int i = 0; i < 50; ++i) data += RandomBytes(1000, i) + std::string("\x1f\x8b\x08\x00", 4);
  const std::string compressed = Gzip(data, 0) + Gzip("second member", 6) + Gzip(data, 0);
  const Drained out = Decode(compressed, 2, 1 << 20, 4096);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(out.bytes == data + "second member" + data);
  ExpectSameAsStreaming(compressed);
  // A wrong guess preceded by a small "ISIZE" makes a job that fails after
  // the garbage at the end was handed over: the job's bytes go in front of
  // the handed-over ones, and zlib decodes through both.
  const std::string tricky =
      RandomBytes(1000, 1) + std::string("\x10\0\0\0\x1f\x8b\x08\0", 8) + RandomBytes(1000, 2);
  ExpectSameAsStreaming(Gzip(tricky, 0) + Gzip("second member", 6) + "trailing garbage");
  ExpectSameAsStreaming(Gzip(tricky, 0) + Gzip("second member", 6));
}

// Any stream, read as a pipe (no known end).
class NoEndStream final : public ByteStream {
 public:
  explicit NoEndStream(std::unique_ptr<ByteStream> inner) : inner_(std::move(inner)) {}
  Result<size_t> Read(char* buffer, size_t size) override { return inner_->Read(buffer, size); }
  bool HasEnd() const override { return false; }

 private:
  std::unique_ptr<ByteStream> inner_;
};

// Decodes `compressed` split into frames of `format`, recording where the
// streaming decoder was handed the rest.
Drained DecodeSplit(const std::string& compressed, std::unique_ptr<const FrameFormat> format,
                    std::vector<uint64_t>* hand_overs) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
  ParallelFrameOptions options;
  options.jobs_in_flight = 4;
  std::unique_ptr<ByteStream> stream = MakeParallelFrameStream(
      std::make_unique<ScriptedStream>(compressed, 1 << 16), std::move(format),
      [hand_overs](std::unique_ptr<ByteStream> raw, uint64_t offset) {
        hand_overs->push_back(offset);
        Result<std::unique_ptr<ByteStream>> serial =
            OpenDecompressed(std::make_unique<NoEndStream>(std::move(raw)), "rest");
        EXPECT_TRUE(serial.ok());
        return std::move(serial).value();
      },
      options);
  return Drain(stream.get(), 1 << 16);
}

TEST(ParallelFrameStreamTest, WholeFramesNeverReachTheStreamingDecoder) {
  std::string expected;
  std::vector<uint64_t> hand_overs;
  const std::string gzip = GzipMembers(Pieces(), &expected);
  Drained out = DecodeSplit(gzip, MakeGzipMemberFormat(), &hand_overs);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(out.bytes == expected);
  EXPECT_TRUE(hand_overs.empty()) << hand_overs[0];

  std::string zstd;
  for (const std::string& piece : Pieces()) zstd += Zstd(piece, 1);
  out = DecodeSplit(zstd, MakeZstdFrameFormat(), &hand_overs);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(out.bytes == expected);
  EXPECT_TRUE(hand_overs.empty()) << hand_overs[0];

  // A member over the 64 MiB limit is handed over at its first byte, and
  // the rest with it.
  const std::string first = Gzip("first\n"), big = Gzip(std::string(size_t{65} << 20, 'b'), 1);
  out = DecodeSplit(first + big + Gzip("last\n"), MakeGzipMemberFormat(), &hand_overs);
  EXPECT_TRUE(out.status.ok()) << out.status;
  EXPECT_EQ(out.bytes.size(), 6 + (size_t{65} << 20) + 5);
  EXPECT_EQ(hand_overs, std::vector<uint64_t>{first.size()});
}

TEST(ParallelFrameStreamTest, ManySmallGzipMembersShareJobs) {
  // bgzip's layout: members of at most 64 KiB; here 1,500 of 0.5-3 KB.
  std::vector<std::string> pieces;
  for (int i = 0; i < 1500; ++i) {
    pieces.push_back(RandomBytes(200 + i % 7 * 50, i) + std::string(300 + i % 2500, 'x'));
  }
  std::string expected;
  const std::string compressed = GzipMembers(pieces, &expected);
  EXPECT_TRUE(Decode(compressed, 2, 1 << 20, 65536).bytes == expected);
  ExpectSameAsStreaming(compressed);
  // Every member is found and decoded by the parallel path: none is handed
  // to the streaming decoder (a missed member end would be, from there on).
  std::vector<uint64_t> hand_overs;
  const Drained split = DecodeSplit(compressed, MakeGzipMemberFormat(), &hand_overs);
  EXPECT_TRUE(split.status.ok()) << split.status;
  EXPECT_TRUE(split.bytes == expected);
  EXPECT_TRUE(hand_overs.empty()) << hand_overs[0];
}

}  // namespace
}  // namespace neardup::internal
