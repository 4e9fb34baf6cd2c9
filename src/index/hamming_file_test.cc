
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "index/hamming_test_util.h"
#include "neardup/hamming_index.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using neardup::test_support::ReadFileBytes;
using neardup::test_support::WriteFileBytes;

using ::testing::HasSubstr;

class HammingFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  HammingIndex MakeIndex(std::set<HammingEntry>* truth) {
    std::vector<uint64_t> fps = testing::MakeFingerprints(3000, true, 3, 42);
    std::vector<HammingEntry> entries;
    for (size_t i = 0; i < fps.size(); ++i) entries.push_back({fps[i], i % 2900});
    auto built = HammingIndex::Build({.num_blocks = 5, .max_distance = 3}, entries);
    NEARDUP_CHECK(built.ok());
    HammingIndex index = std::move(built).value();
    NEARDUP_CHECK(index.Insert({123, 456}).ok());
    index.Remove(entries[5]);
    *truth = std::set<HammingEntry>(entries.begin(), entries.end());
    truth->insert({123, 456});
    truth->erase(entries[5]);
    return index;
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

TEST_F(HammingFileTest, RoundTripAnswersTheSame) {
  std::set<HammingEntry> truth;
  HammingIndex index = MakeIndex(&truth);
  const std::string path = Path("index.ndh");
  ASSERT_TRUE(index.Save(path).ok());
  for (bool verify : {false, true}) {
    auto opened = HammingIndex::Open(path, {.verify_data = verify});
    ASSERT_TRUE(opened.ok()) << opened.status();
    EXPECT_EQ(opened->size(), truth.size());
    EXPECT_EQ(opened->options().num_blocks, 5);
    EXPECT_EQ(opened->options().max_distance, 3);
    internal::SplitMix64 rng(9);
    for (int i = 0; i < 300; ++i) {
      const HammingEntry& e = *std::next(truth.begin(), rng.Next() % truth.size());
      uint64_t q = testing::FlipBits(e.fingerprint, static_cast<int>(rng.Next() % 5), rng);
      ASSERT_EQ(opened->FindAll(q), testing::BruteFindAll(truth, q, 3));
    }
    EXPECT_EQ(opened->SelfJoin(), index.SelfJoin());
  }
  // A mapped index can be changed; the change is saved to a new file.
  auto opened = HammingIndex::Open(path);
  ASSERT_TRUE(opened.ok());
  ASSERT_TRUE(opened->Insert({777, 1}).ok());
  EXPECT_TRUE(opened->Remove({123, 456}));
  truth.insert({777, 1});
  truth.erase({123, 456});
  EXPECT_EQ(opened->FindAll(777), testing::BruteFindAll(truth, 777, 3));
  ASSERT_TRUE(opened->Save(Path("second.ndh")).ok());
  auto second = HammingIndex::Open(Path("second.ndh"), {.verify_data = true});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->size(), truth.size());
  EXPECT_TRUE(second->Contains({777, 1}));
  EXPECT_FALSE(second->Contains({123, 456}));
}

TEST_F(HammingFileTest, EmptyIndexRoundTrips) {
  auto created = HammingIndex::Create({.num_blocks = 6, .max_distance = 2});
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(created->Save(Path("empty.ndh")).ok());
  auto opened = HammingIndex::Open(Path("empty.ndh"), {.verify_data = true});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->size(), 0u);
  EXPECT_EQ(opened->options().num_blocks, 6);
  EXPECT_TRUE(opened->FindAll(0).empty());
}

TEST_F(HammingFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(HammingIndex::Open(Path("absent")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(HammingIndex::Open(Path("no/such/dir")).status().code(), StatusCode::kNotFound);
  std::set<HammingEntry> truth;
  EXPECT_EQ(MakeIndex(&truth).Save(Path("no/such/dir/x")).code(), StatusCode::kIoError);
}

TEST_F(HammingFileTest, TruncatedOrExtendedFileIsDataLoss) {
  std::set<HammingEntry> truth;
  ASSERT_TRUE(MakeIndex(&truth).Save(Path("index.ndh")).ok());
  const std::string bytes = ReadFileBytes(Path("index.ndh"));
  for (size_t size : {size_t{0}, size_t{1}, size_t{64}, size_t{127}, size_t{128}, size_t{200},
                      bytes.size() / 2, bytes.size() - 64, bytes.size() - 1}) {
    WriteFileBytes(Path("cut.ndh"), bytes.substr(0, size));
    auto opened = HammingIndex::Open(Path("cut.ndh"));
    ASSERT_EQ(opened.status().code(), StatusCode::kDataLoss) << size;
    EXPECT_THAT(opened.status().message(), HasSubstr("cut.ndh"));
  }
  WriteFileBytes(Path("long.ndh"), bytes + std::string(64, '\0'));
  EXPECT_EQ(HammingIndex::Open(Path("long.ndh")).status().code(), StatusCode::kDataLoss);
}

TEST_F(HammingFileTest, EveryHeaderByteFlipIsDataLoss) {
  std::set<HammingEntry> truth;
  ASSERT_TRUE(MakeIndex(&truth).Save(Path("index.ndh")).ok());
  const std::string bytes = ReadFileBytes(Path("index.ndh"));
  for (size_t pos = 0; pos < 128; ++pos) {
    std::string bad = bytes;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    WriteFileBytes(Path("bad.ndh"), bad);
    EXPECT_EQ(HammingIndex::Open(Path("bad.ndh")).status().code(), StatusCode::kDataLoss) << pos;
  }
}

TEST_F(HammingFileTest, BodyCorruptionIsDetectedOnVerifyAndNeverCrashes) {
  std::set<HammingEntry> truth;
  ASSERT_TRUE(MakeIndex(&truth).Save(Path("index.ndh")).ok());
  const std::string bytes = ReadFileBytes(Path("index.ndh"));
  internal::SplitMix64 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    std::string bad = bytes;
    // Smash several bytes with random values (also large directory and
    // offset values).
    for (int i = 0; i < 8; ++i) {
      bad[128 + rng.Next() % (bad.size() - 128)] = static_cast<char>(rng.Next());
    }
    if (trial % 4 == 0) {  // a whole garbage stretch
      size_t at = 128 + rng.Next() % (bad.size() - 1200);
      for (size_t i = 0; i < 1024; ++i) bad[at + i] = static_cast<char>(0xff);
    }
    WriteFileBytes(Path("bad.ndh"), bad);
    auto verified = HammingIndex::Open(Path("bad.ndh"), {.verify_data = true});
    EXPECT_EQ(verified.status().code(), StatusCode::kDataLoss);
    // Without verification the answers may be wrong, but nothing crashes.
    auto opened = HammingIndex::Open(Path("bad.ndh"));
    ASSERT_TRUE(opened.ok());
    for (int q = 0; q < 50; ++q) (void)opened->FindAll(rng.Next());
    (void)opened->FindAll(truth.begin()->fingerprint);
    if (trial % 8 == 0) {  // garbage id ranges can make the join output large
      (void)opened->SelfJoin();
      (void)opened->Clusters();
    }
    (void)opened->Insert({1, 2});
    (void)opened->Remove(*truth.begin());
    opened->Compact();
    (void)opened->FindAll(1);
  }
}

// The seeds of fuzz/hamming_file_fuzz.cc: small valid indexes of the current
// format and truncations of them. Fails when the committed seeds are stale
// (e.g. after a format change); NEARDUP_WRITE_FUZZ_SEEDS=1 rewrites them.
TEST_F(HammingFileTest, FuzzSeedsAreCurrent) {
  const std::filesystem::path corpus =
      std::filesystem::path(NEARDUP_SOURCE_DIR) / "fuzz" / "corpus" / "hamming_file_fuzz";
  if (!std::filesystem::is_directory(corpus)) GTEST_SKIP() << "no source tree at " << corpus;
  const bool write = std::getenv("NEARDUP_WRITE_FUZZ_SEEDS") != nullptr;
  struct Seed {
    std::string name;
    int num_blocks, max_distance;
    size_t count;
    bool clustered;
  };
  const std::vector<Seed> seeds = {{"empty_m2_k1", 2, 1, 0, false},
                                   {"three_m6_k3", 6, 3, 3, false},
                                   {"clustered_m4_k2", 4, 2, 60, true},
                                   {"clustered_m3_k1", 3, 1, 200, true}};
  for (const Seed& seed : seeds) {
    SCOPED_TRACE(seed.name);
    std::vector<uint64_t> fps = testing::MakeFingerprints(seed.count, seed.clustered, 2, 7);
    std::vector<HammingEntry> entries;
    for (size_t i = 0; i < fps.size(); ++i) entries.push_back({fps[i], i % 50});
    auto index = HammingIndex::Build(
        {.num_blocks = seed.num_blocks, .max_distance = seed.max_distance}, entries);
    ASSERT_TRUE(index.ok());
    ASSERT_TRUE(index->Save(Path("seed.ndh")).ok());
    const std::string bytes = ReadFileBytes(Path("seed.ndh"));
    std::vector<std::pair<std::string, std::string>> files = {{seed.name + ".ndh", bytes}};
    if (seed.count == 60) {  // truncations: inside the header, after it, one byte short
      for (size_t size : {size_t{100}, size_t{192}, bytes.size() - 1}) {
        files.push_back(
            {seed.name + "_cut" + std::to_string(size) + ".ndh", bytes.substr(0, size)});
      }
    }
    for (const auto& [name, content] : files) {
      const std::string path = (corpus / name).string();
      if (write) WriteFileBytes(path, content);
      EXPECT_EQ(ReadFileBytes(path), content)
          << path << " is stale: rerun with NEARDUP_WRITE_FUZZ_SEEDS=1";
    }
    auto opened =
        HammingIndex::Open((corpus / (seed.name + ".ndh")).string(), {.verify_data = true});
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(opened->size(), index->size());
  }
}

}  // namespace
}  // namespace neardup
