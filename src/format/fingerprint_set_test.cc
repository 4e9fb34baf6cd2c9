#include "neardup/format/fingerprint_set.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "index/chunk_index_io.h"
#include "neardup/format/checksummed_file.h"
#include "support/temp_dir.h"

namespace neardup::format {
namespace {

using test_support::TempDir;

// Three documents that use every field: a 128-bit SimHash, a wide one,
// both MinHash kinds (one empty), chunk sets of 0..3 ids, bytes 0 and 0xff
// in ids and records.
FingerprintedCorpus ThreeDocuments(bool raw) {
  FingerprintedCorpus corpus;
  for (uint64_t i = 0; i < 3; ++i) {
    corpus.ids.push_back(i == 1 ? std::string("") : "doc-" + std::to_string(i) + '\0' + "\xff");
    corpus.lengths.push_back(1000 * i + 7);
    corpus.is_jsonl.push_back(i != 2);
    if (raw) corpus.raw_records.push_back("{\"id\":" + std::to_string(i) + "}");
    Fingerprint f;
    f.simhash = 0x0123456789abcdefULL * (i + 1);
    f.simhash128 = {0xfedcba9876543210ULL ^ i, 42 + i};
    if (i == 2) {
      f.simhash_wide.bits = 256;
      f.simhash_wide.words = {1, 2, 3, ~uint64_t{0}};
    }
    f.num_shingles = 5 * i;
    f.minhash.k = 4;
    for (uint64_t v = 0; v < i + 1; ++v) f.minhash.values.push_back(v * 0x9e3779b97f4a7c15ULL);
    f.kvalue_minhash.empty = i == 1;
    if (i != 1) f.kvalue_minhash.values = {i, i + 1, ~uint64_t{0}, 0};
    for (uint32_t c = 0; c < i + (i == 2 ? 1 : 0); ++c) f.chunks.push_back(0xfffffff0u + c);
    f.num_tokens = i == 1 ? 0 : 17 * i + 3;
    f.invalid_utf8_sequences = i;
    corpus.fingerprints.push_back(f);
  }
  return corpus;
}

void ExpectSame(const FingerprintedCorpus& a, const FingerprintedCorpus& b) {
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.lengths, b.lengths);
  EXPECT_EQ(a.is_jsonl, b.is_jsonl);
  EXPECT_EQ(a.raw_records, b.raw_records);
  ASSERT_EQ(a.fingerprints.size(), b.fingerprints.size());
  for (size_t i = 0; i < a.fingerprints.size(); ++i) {
    const Fingerprint& x = a.fingerprints[i];
    const Fingerprint& y = b.fingerprints[i];
    EXPECT_EQ(x.simhash, y.simhash) << i;
    EXPECT_EQ(x.simhash128, y.simhash128) << i;
    EXPECT_EQ(x.simhash_wide, y.simhash_wide) << i;
    EXPECT_EQ(x.num_shingles, y.num_shingles) << i;
    EXPECT_EQ(x.minhash, y.minhash) << i;
    EXPECT_EQ(x.kvalue_minhash, y.kvalue_minhash) << i;
    EXPECT_EQ(x.chunks, y.chunks) << i;
    EXPECT_EQ(x.num_tokens, y.num_tokens) << i;
    EXPECT_EQ(x.invalid_utf8_sequences, y.invalid_utf8_sequences) << i;
  }
}

TEST(FingerprintSetTest, RoundTripsEveryFieldWithAndWithoutRawRecords) {
  for (bool raw : {false, true}) {
    const FingerprintedCorpus corpus = ThreeDocuments(raw);
    std::string bytes;
    ASSERT_TRUE(EncodeFingerprintSet(corpus, &bytes).ok());
    FingerprintedCorpus back;
    ASSERT_TRUE(DecodeFingerprintSet(bytes, &back).ok());
    ExpectSame(corpus, back);
  }
  FingerprintedCorpus empty;
  std::string bytes;
  ASSERT_TRUE(EncodeFingerprintSet(empty, &bytes).ok());
  EXPECT_EQ(bytes.size(), 9u);  // u64 0 documents, u8 no raw records
  FingerprintedCorpus back = ThreeDocuments(false);
  ASSERT_TRUE(DecodeFingerprintSet(bytes, &back).ok());
  EXPECT_TRUE(back.ids.empty() && back.fingerprints.empty());
}

TEST(FingerprintSetTest, LayoutIsLittleEndianAsDocumented) {
  FingerprintedCorpus corpus;
  corpus.ids = {"ab"};
  corpus.lengths = {0x0102};
  corpus.is_jsonl = {true};
  corpus.fingerprints.emplace_back();
  corpus.fingerprints[0].simhash = 0x1122334455667788ULL;
  corpus.fingerprints[0].chunks = {0xa1b2c3d4u};
  std::string bytes;
  ASSERT_TRUE(EncodeFingerprintSet(corpus, &bytes).ok());
  // 8 + 1 header, 8 + 2 id, 8 length, 1 flag, then the fingerprint.
  ASSERT_EQ(bytes.size(), 9 + 10 + 8 + 1 + 130 - 17 + 4);
  EXPECT_EQ(bytes.substr(0, 9), std::string("\x01\0\0\0\0\0\0\0\0", 9));
  EXPECT_EQ(bytes.substr(9, 10), std::string("\x02\0\0\0\0\0\0\0ab", 10));
  EXPECT_EQ(bytes.substr(19, 9), std::string("\x02\x01\0\0\0\0\0\0\x01", 9));
  EXPECT_EQ(bytes.substr(28, 8), "\x88\x77\x66\x55\x44\x33\x22\x11");
  // chunks: count 1, then the id as 4 bytes, before num_tokens and the
  // invalid-UTF-8 count (16 bytes).
  EXPECT_EQ(bytes.substr(bytes.size() - 16 - 12, 12),
            std::string("\x01\0\0\0\0\0\0\0\xd4\xc3\xb2\xa1", 12));
}

TEST(FingerprintSetTest, RefusesMismatchedVectors) {
  FingerprintedCorpus corpus = ThreeDocuments(true);
  corpus.raw_records.pop_back();
  std::string bytes;
  EXPECT_EQ(EncodeFingerprintSet(corpus, &bytes).code(), StatusCode::kInvalidArgument);
  corpus = ThreeDocuments(false);
  corpus.lengths.push_back(1);
  EXPECT_EQ(EncodeFingerprintSet(corpus, &bytes).code(), StatusCode::kInvalidArgument);
}

TEST(FingerprintSetTest, EveryTruncationAndBadCountIsDataLoss) {
  std::string bytes;
  ASSERT_TRUE(EncodeFingerprintSet(ThreeDocuments(true), &bytes).ok());
  FingerprintedCorpus back;
  for (size_t size = 0; size < bytes.size(); ++size) {
    Status status = DecodeFingerprintSet(std::string_view(bytes).substr(0, size), &back);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << size;
    EXPECT_TRUE(back.ids.empty()) << size;
  }
  EXPECT_EQ(DecodeFingerprintSet(bytes + "x", &back).code(), StatusCode::kDataLoss);
  // A document count, then an id length, far beyond the bytes: refused
  // before anything that size is allocated.
  std::string huge = bytes;
  huge[7] = '\x7f';
  EXPECT_EQ(DecodeFingerprintSet(huge, &back).code(), StatusCode::kDataLoss);
  huge = bytes;
  huge[9 + 7] = '\x7f';
  EXPECT_EQ(DecodeFingerprintSet(huge, &back).code(), StatusCode::kDataLoss);
  std::string flag = bytes;
  flag[8] = 2;  // has_raw_records is 0 or 1
  EXPECT_EQ(DecodeFingerprintSet(flag, &back).code(), StatusCode::kDataLoss);
}

TEST(FingerprintSetTest, FileRoundTripKeepsMetadata) {
  TempDir dir;
  const std::string path = dir.Path("rank0.fps");
  const FingerprintedCorpus corpus = ThreeDocuments(true);
  const std::string metadata("skipped=3\0\x01", 11);
  ASSERT_TRUE(WriteFingerprintSetFile(path, corpus, metadata).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  FingerprintedCorpus back;
  std::string meta;
  ASSERT_TRUE(ReadFingerprintSetFile(path, &back, &meta).ok());
  EXPECT_EQ(meta, metadata);
  ExpectSame(corpus, back);
  // Rewriting replaces the file.
  ASSERT_TRUE(WriteFingerprintSetFile(path, FingerprintedCorpus{}, "").ok());
  ASSERT_TRUE(ReadFingerprintSetFile(path, &back, &meta).ok());
  EXPECT_TRUE(back.ids.empty());
  EXPECT_EQ(meta, "");
}

TEST(FingerprintSetTest, FileOfManyPiecesRoundTrips) {
  // Over 1 MiB, so the writer hands the encoding over in several pieces.
  FingerprintedCorpus corpus;
  for (uint64_t i = 0; i < 3000; ++i) {
    corpus.ids.push_back("d" + std::to_string(i));
    corpus.lengths.push_back(i);
    corpus.is_jsonl.push_back(i % 3 != 0);
    corpus.raw_records.push_back(std::string(400 + i % 7, static_cast<char>('a' + i % 26)));
    Fingerprint f;
    f.simhash = i * 0x9e3779b97f4a7c15ULL;
    f.minhash.k = 2;
    f.minhash.values = {i, i + 1};
    f.chunks = {static_cast<uint32_t>(i), static_cast<uint32_t>(i * 7)};
    f.num_tokens = i % 5;
    corpus.fingerprints.push_back(f);
  }
  TempDir dir;
  const std::string path = dir.Path("many");
  ASSERT_TRUE(WriteFingerprintSetFile(path, corpus, "m").ok());
  std::string bytes;
  ASSERT_TRUE(EncodeFingerprintSet(corpus, &bytes).ok());
  ASSERT_GT(bytes.size(), size_t{1} << 20);
  // The file's payload is the metadata (8 + 1 bytes) and the same encoding.
  EXPECT_EQ(test_support::ReadFileBytes(path).substr(kChecksummedFileHeaderBytes + 9), bytes);
  FingerprintedCorpus back;
  std::string meta;
  ASSERT_TRUE(ReadFingerprintSetFile(path, &back, &meta).ok());
  EXPECT_EQ(meta, "m");
  ExpectSame(corpus, back);
}

TEST(FingerprintSetTest, DamagedFilesAreReportedNeverUsed) {
  TempDir dir;
  const std::string path = dir.Path("rank1.fps");
  ASSERT_TRUE(WriteFingerprintSetFile(path, ThreeDocuments(false), "meta").ok());
  const std::string good = test_support::ReadFileBytes(path);
  FingerprintedCorpus back;
  std::string meta;
  // A flipped bit in every header byte and in every 5th payload byte.
  for (size_t i = 0; i < good.size(); i += i < kChecksummedFileHeaderBytes ? 1 : 5) {
    std::string bad = good;
    bad[i] ^= 0x20;
    dir.Write("rank1.fps", bad);
    Status status = ReadFingerprintSetFile(path, &back, &meta);
    EXPECT_FALSE(status.ok()) << i;
    EXPECT_NE(status.message().find(path), std::string::npos) << status.ToString();
  }
  for (size_t size : {size_t{0}, size_t{10}, kChecksummedFileHeaderBytes, good.size() - 1}) {
    dir.Write("rank1.fps", good.substr(0, size));
    Status status = ReadFingerprintSetFile(path, &back, &meta);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << size;
    EXPECT_NE(status.message().find("truncated"), std::string::npos) << status.ToString();
  }
  dir.Write("rank1.fps", good + "extra");
  EXPECT_EQ(ReadFingerprintSetFile(path, &back, &meta).code(), StatusCode::kDataLoss);
  std::string flipped = good;
  flipped[good.size() - 1] ^= 1;
  dir.Write("rank1.fps", flipped);
  Status status = ReadFingerprintSetFile(path, &back, &meta);
  EXPECT_NE(status.message().find("payload checksum mismatch"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(ReadFingerprintSetFile(dir.Path("missing"), &back, &meta).code(),
            StatusCode::kNotFound);
}

TEST(ChecksummedFileTest, UncommittedWriterLeavesNothing) {
  TempDir dir;
  const std::string path = dir.Path("file");
  {
    Result<std::unique_ptr<ChecksummedFileWriter>> writer =
        ChecksummedFileWriter::Create(path, "pairs");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("abc").ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(ChecksummedFileTest, KindAndVersionAreChecked) {
  TempDir dir;
  const std::string path = dir.Path("file");
  const std::array<std::string_view, 3> pieces = {"ab", "", "cde"};
  ASSERT_TRUE(WriteChecksummedFile(path, "pairs", pieces).ok());
  Result<std::string> read = ReadChecksummedFile(path, "pairs");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "abcde");
  EXPECT_EQ(test_support::ReadFileBytes(path).size(), kChecksummedFileHeaderBytes + 5);
  Result<std::string> other = ReadChecksummedFile(path, "fingerprint-set");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(other.status().message().find("holds 'pairs'"), std::string::npos);
  // Version 2 with a valid header checksum: refused as newer, not damaged.
  std::string newer = test_support::ReadFileBytes(path);
  newer[8] = 2;
  const uint64_t header_checksum =
      internal::StoredChecksum({reinterpret_cast<const uint8_t*>(newer.data()), size_t{48}});
  for (int i = 0; i < 8; ++i) newer[48 + i] = static_cast<char>(header_checksum >> (8 * i));
  test_support::WriteFileBytes(path, newer);
  Result<std::string> refused = ReadChecksummedFile(path, "pairs");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
      << refused.status().ToString();
  EXPECT_EQ(WriteChecksummedFile(path, "a-kind-longer-than-16", pieces).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteChecksummedFile(dir.Path("no/such/dir/file"), "pairs", pieces).code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace neardup::format
