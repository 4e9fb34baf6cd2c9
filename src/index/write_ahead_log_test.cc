#include "neardup/write_ahead_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace neardup {
namespace {

using test_support::ReadFileBytes;
using test_support::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WriteAheadLogTest, RecordsRoundTripAndAppendContinuesAfterReopen) {
  TempDir dir;
  const std::string path = dir.Path("log");
  {
    auto log = std::move(WriteAheadLog::Open(path, 0)).value();
    EXPECT_EQ(*log->Append("one"), kLogRecordHeaderBytes + 3);
    ASSERT_TRUE(log->Append("").ok());
    const uint64_t lsn = *log->Append(std::string(1000, 'x'));
    EXPECT_TRUE(log->SyncTo(lsn).ok());
    EXPECT_EQ(log->size(), 3 * kLogRecordHeaderBytes + 1003);
  }
  LogContents contents = *ReadLogFile(path);
  EXPECT_THAT(contents.records, ElementsAre("one", "", std::string(1000, 'x')));
  EXPECT_EQ(contents.tail_error, "");
  {
    auto log = std::move(WriteAheadLog::Open(path, contents.valid_bytes)).value();
    ASSERT_TRUE(log->Append("four").ok());
  }
  EXPECT_EQ(ReadLogFile(path)->records.size(), 4u);
}

TEST(WriteAheadLogTest, EveryTruncationAndEveryFlippedByteIsDetected) {
  TempDir dir;
  const std::string path = dir.Path("log");
  {
    auto log = std::move(WriteAheadLog::Open(path, 0)).value();
    ASSERT_TRUE(log->Append("first record").ok());
    ASSERT_TRUE(log->Append("second record").ok());
  }
  const std::string bytes = ReadFileBytes(path);
  const size_t first = kLogRecordHeaderBytes + 12;
  for (size_t length = 0; length < bytes.size(); ++length) {
    dir.Write("cut", bytes.substr(0, length));
    LogContents contents = *ReadLogFile(dir.Path("cut"));
    EXPECT_EQ(contents.records.size(), length >= first ? 1u : 0u) << length;
    EXPECT_EQ(contents.valid_bytes, length >= first ? first : 0u);
    EXPECT_EQ(contents.tail_error.empty(), length == 0 || length == first) << length;
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    dir.Write("flip", damaged);
    LogContents contents = *ReadLogFile(dir.Path("flip"));
    EXPECT_FALSE(contents.tail_error.empty()) << at;
    EXPECT_EQ(contents.records.size(), at >= first ? 1u : 0u) << at;
  }
}

TEST(WriteAheadLogTest, OpenCutsABadTailAndRefusesAShortFile) {
  TempDir dir;
  const std::string path = dir.Write("log", std::string(30, 'z'));
  LogContents contents = *ReadLogFile(path);
  EXPECT_THAT(contents.tail_error, HasSubstr("record at offset 0"));
  ASSERT_TRUE(WriteAheadLog::Open(path, contents.valid_bytes).ok());
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  EXPECT_EQ(WriteAheadLog::Open(path, 5).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ReadLogFile(dir.Path("missing")).status().code(), StatusCode::kIoError);
}

TEST(WriteAheadLogTest, ConcurrentWaitersShareSyncs) {
  TempDir dir;
  auto log = std::move(WriteAheadLog::Open(dir.Path("log"), 0)).value();
  std::mutex append_mutex;
  constexpr int kThreads = 8;
  constexpr int kRecords = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRecords; ++i) {
        uint64_t lsn;
        {
          std::lock_guard<std::mutex> lock(append_mutex);
          lsn = *log->Append("record");
        }
        EXPECT_TRUE(log->SyncTo(lsn).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(log->syncs(), uint64_t{kThreads * kRecords});
  EXPECT_GE(log->syncs(), 1u);
  EXPECT_EQ(ReadLogFile(dir.Path("log"))->records.size(), size_t{kThreads * kRecords});
}

}  // namespace
}  // namespace neardup
