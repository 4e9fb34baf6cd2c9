#include "store/segment_file.h"
#include "support/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace neardup::internal {
namespace {

using neardup::test_support::ReadFileBytes;
using neardup::test_support::WriteFileBytes;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class SegmentFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

TEST_F(SegmentFileTest, RoundTripsRowsAndTexts) {
  std::vector<uint32_t> a = {1, 5, 9}, b = {}, c = {7};
  std::string long_text(100000, 'z');
  std::vector<SegmentRow> rows = {
      {10, a, 0x1234, "first text", {}}, {11, b, 0, "", {}}, {15, c, ~0ull, long_text, {}}};
  Result<uint64_t> bytes = WriteSegmentFile(Path("s.nds"), rows, true);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Result<std::unique_ptr<SegmentReader>> r = SegmentReader::Open(Path("s.nds"));
  ASSERT_TRUE(r.ok()) << r.status();
  const SegmentReader& s = **r;
  EXPECT_EQ(s.file_bytes(), *bytes);
  ASSERT_EQ(s.num_docs(), 3u);
  EXPECT_EQ(s.doc(2), 15u);
  EXPECT_THAT(s.chunks(0), ElementsAre(1, 5, 9));
  EXPECT_TRUE(s.chunks(1).empty());
  EXPECT_EQ(s.simhash(2), ~0ull);
  EXPECT_EQ(*s.Text(0), "first text");
  EXPECT_EQ(*s.Text(1), "");
  EXPECT_EQ(*s.Text(2), long_text);
  EXPECT_LT(s.compressed_text(2).size(), 1000u);  // compressed
  EXPECT_TRUE(s.VerifyChecksum().ok());

  // Copying compressed frames (compaction) gives the same texts.
  std::vector<SegmentRow> copied = {{15, s.chunks(2), s.simhash(2), {}, s.compressed_text(2)}};
  ASSERT_TRUE(WriteSegmentFile(Path("t.nds"), copied, false).ok());
  Result<std::unique_ptr<SegmentReader>> t = SegmentReader::Open(Path("t.nds"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*(*t)->Text(0), long_text);
}

TEST_F(SegmentFileTest, WithoutTextsTextIsNotFound) {
  std::vector<uint32_t> a = {1};
  std::vector<SegmentRow> rows = {{0, a, 1, "some text", {}}};
  ASSERT_TRUE(WriteSegmentFile(Path("s.nds"), rows, false).ok());
  Result<std::unique_ptr<SegmentReader>> r = SegmentReader::Open(Path("s.nds"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->Text(0).status().code(), StatusCode::kNotFound);
}

TEST_F(SegmentFileTest, DamageIsDetected) {
  std::vector<uint32_t> a = {1, 2, 3};
  std::vector<SegmentRow> rows = {{0, a, 1, "text one", {}}, {1, a, 2, "text two", {}}};
  ASSERT_TRUE(WriteSegmentFile(Path("s.nds"), rows, true).ok());
  const std::string good = ReadFileBytes(Path("s.nds"));

  WriteFileBytes(Path("t.nds"), good.substr(0, good.size() - 1));
  EXPECT_THAT(SegmentReader::Open(Path("t.nds")).status().message(), HasSubstr("truncated"));
  WriteFileBytes(Path("h.nds"), good.substr(0, 10));
  EXPECT_EQ(SegmentReader::Open(Path("h.nds")).status().code(), StatusCode::kDataLoss);

  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x40;  // inside the last zstd frame
  WriteFileBytes(Path("f.nds"), flipped);
  Result<std::unique_ptr<SegmentReader>> f = SegmentReader::Open(Path("f.nds"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->VerifyChecksum().code(), StatusCode::kDataLoss);

  std::string header = good;
  header[16] ^= 1;
  WriteFileBytes(Path("c.nds"), header);
  EXPECT_THAT(SegmentReader::Open(Path("c.nds")).status().message(), HasSubstr("corrupt header"));
  EXPECT_EQ(SegmentReader::Open(Path("none.nds")).status().code(), StatusCode::kNotFound);
}

// A text frame whose header declares an impossible decompressed size (here
// 2^39 bytes from a frame of a few dozen) is DataLoss, not an allocation of
// that size (store_file_fuzz).
TEST_F(SegmentFileTest, ImpossibleTextSizeIsDataLoss) {
  std::vector<uint32_t> a = {1, 2, 3};
  const std::string text = "a text long enough for a frame of some twenty bytes or more";
  std::vector<SegmentRow> rows = {{0, a, 1, text, {}}};
  ASSERT_TRUE(WriteSegmentFile(Path("s.nds"), rows, true).ok());
  std::string bytes = ReadFileBytes(Path("s.nds"));
  const size_t magic = bytes.find("\x28\xB5\x2F\xFD");
  ASSERT_NE(magic, std::string::npos);
  ASSERT_LT(magic + 13, bytes.size());
  // Frame header descriptor: 8-byte content size, single segment.
  bytes[magic + 4] = static_cast<char>(0xE0);
  const uint64_t declared = uint64_t{1} << 39;
  for (int i = 0; i < 8; ++i) bytes[magic + 5 + i] = static_cast<char>(declared >> (8 * i));
  WriteFileBytes(Path("big.nds"), bytes);
  Result<std::unique_ptr<SegmentReader>> segment = SegmentReader::Open(Path("big.nds"));
  ASSERT_TRUE(segment.ok()) << segment.status();
  EXPECT_EQ((*segment)->Text(0).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace neardup::internal
