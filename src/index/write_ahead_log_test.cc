#include "neardup/write_ahead_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/file_size_limit.h"
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
    ASSERT_TRUE(log->SyncTo(kLogRecordHeaderBytes + 3).ok());
    ASSERT_TRUE(log->Append("").ok());
    // synced_size: what SyncTo covered, not what was written since.
    EXPECT_EQ(log->synced_size(), kLogRecordHeaderBytes + 3);
    const uint64_t lsn = *log->Append(std::string(1000, 'x'));
    EXPECT_TRUE(log->SyncTo(lsn).ok());
    EXPECT_EQ(log->size(), 3 * kLogRecordHeaderBytes + 1003);
    EXPECT_EQ(log->synced_size(), log->size());
  }
  // A reopened log counts its valid bytes as durable, because Open synced
  // them (after a process crash they may be in the page cache only): one
  // fdatasync. None for an empty log, nor without sync.
  {
    auto log = std::move(WriteAheadLog::Open(path, 3 * kLogRecordHeaderBytes + 1003)).value();
    EXPECT_EQ(log->synced_size(), 3 * kLogRecordHeaderBytes + 1003);
    EXPECT_EQ(log->syncs(), 1u);
  }
  EXPECT_EQ(
      (*WriteAheadLog::Open(path, 3 * kLogRecordHeaderBytes + 1003, {.sync = false}))->syncs(), 0u);
  EXPECT_EQ((*WriteAheadLog::Open(dir.Path("empty"), 0))->syncs(), 0u);
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

TEST(WriteAheadLogTest, AppendBatchWritesItsRecordsInOneAppend) {
  TempDir dir;
  const std::string path = dir.Path("log");
  auto log = std::move(WriteAheadLog::Open(path, 0)).value();
  ASSERT_TRUE(log->Append("solo").ok());
  const std::vector<std::string> batch = {"one", "", std::string(5000, 'b'), "four"};
  size_t appended = 99;
  const uint64_t lsn = *log->AppendBatch(batch, &appended);
  EXPECT_EQ(appended, 4u);
  EXPECT_EQ(lsn, 5 * kLogRecordHeaderBytes + 4 + 3 + 5000 + 4);
  EXPECT_EQ(log->appends(), 2u);
  EXPECT_EQ(*log->AppendBatch({}, &appended), lsn);  // nothing to write
  EXPECT_EQ(appended, 0u);
  EXPECT_EQ(log->appends(), 2u);
  ASSERT_TRUE(log->SyncTo(lsn).ok());
  EXPECT_THAT(ReadLogFile(path)->records, ElementsAre("solo", "one", "", batch[2], "four"));
  // A record over the maximum is refused before anything is written.
  const std::vector<std::string> too_large = {"fine", std::string(kMaxLogRecordBytes + 1, 'x')};
  Result<uint64_t> refused = log->AppendBatch(too_large, &appended);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("record 1"));
  EXPECT_EQ(appended, 0u);
  EXPECT_EQ(log->size(), lsn);
  EXPECT_EQ(std::filesystem::file_size(path), lsn);
}

// A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG) in the middle of
// the batch's third record: the write stops there, the file is cut back to
// the end of the second, the caller learns that two made it, and appending
// goes on from there once there is room.
TEST(WriteAheadLogTest, AFailedAppendBatchKeepsItsWholeRecords) {
  TempDir dir;
  const std::string path = dir.Path("log");
  auto log = std::move(WriteAheadLog::Open(path, 0)).value();
  ASSERT_TRUE(log->Append("before").ok());
  const uint64_t start = log->size();
  const std::vector<std::string> batch(4, std::string(100, 'r'));
  const uint64_t record = kLogRecordHeaderBytes + 100;
  size_t appended = 99;
  Result<uint64_t> full = InternalError("not run");
  {
    test_support::ScopedFileSizeLimit limit(start + 2 * record + 50);
    full = log->AppendBatch(batch, &appended);
  }
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
  EXPECT_EQ(appended, 2u);
  EXPECT_EQ(log->size(), start + 2 * record);
  EXPECT_EQ(std::filesystem::file_size(path), start + 2 * record);
  const uint64_t lsn = *log->Append("after");
  EXPECT_TRUE(log->SyncTo(lsn).ok());
  const LogContents contents = *ReadLogFile(path);
  EXPECT_TRUE(contents.tail_error.empty()) << contents.tail_error;
  EXPECT_THAT(contents.records, ElementsAre("before", batch[0], batch[1], "after"));
}

// Records framed by the caller (AppendFramed: the stream frames a batch's
// records in place, session 13) make the same file as AppendBatch of their
// payloads; ends that do not cut the bytes into records (also ends that
// disagree with a record's length field) are refused with nothing written;
// a write that fails part way keeps the whole records, as AppendBatch does.
TEST(WriteAheadLogTest, AppendFramedWritesWhatAppendBatchWrites) {
  TempDir dir;
  const std::vector<std::string> batch = {"one", "", std::string(5000, 'b'), "four"};
  std::string framed;
  std::vector<size_t> ends;
  for (const std::string& payload : batch) {
    const size_t at = framed.size();
    framed.resize(at + kLogRecordHeaderBytes + payload.size());
    std::copy(payload.begin(), payload.end(), framed.begin() + at + kLogRecordHeaderBytes);
    FrameLogRecordInPlace(framed.data() + at, payload.size());
    ends.push_back(framed.size());
  }
  std::string expected;
  for (const std::string& payload : batch) AppendLogRecord(payload, &expected);
  EXPECT_EQ(framed, expected);

  auto by_batch = std::move(WriteAheadLog::Open(dir.Path("batch"), 0)).value();
  auto by_framed = std::move(WriteAheadLog::Open(dir.Path("framed"), 0)).value();
  ASSERT_TRUE(by_batch->Append("solo").ok());
  ASSERT_TRUE(by_framed->Append("solo").ok());
  const uint64_t lsn = *by_batch->AppendBatch(batch);
  size_t appended = 99;
  EXPECT_EQ(*by_framed->AppendFramed(framed, ends, &appended), lsn);
  EXPECT_EQ(appended, 4u);
  EXPECT_EQ(by_framed->appends(), 2u);
  EXPECT_EQ(*by_framed->AppendFramed("", {}, &appended), lsn);  // nothing to write
  EXPECT_EQ(appended, 0u);
  ASSERT_TRUE(by_batch->SyncTo(lsn).ok());
  ASSERT_TRUE(by_framed->SyncTo(lsn).ok());
  EXPECT_EQ(ReadFileBytes(dir.Path("framed")), ReadFileBytes(dir.Path("batch")));
  EXPECT_THAT(ReadLogFile(dir.Path("framed"))->records,
              ElementsAre("solo", "one", "", batch[2], "four"));

  // Ends that do not cut `framed` into records: nothing written.
  const std::vector<std::vector<size_t>> bad_ends = {
      {ends[0], ends[1], ends[2]},                     // bytes past the last record
      {ends[0], ends[0] + 5, ends[3]},                 // a record shorter than a header
      {ends[1], ends[0], ends[3]},                     // going back
      {ends[0], ends[1], ends[2], framed.size() + 1},  // past the bytes
      {ends[1], ends[3]},                              // an end skipped
      {ends[0] + 20, ends[3]}};                        // an end inside a payload
  for (const std::vector<size_t>& bad : bad_ends) {
    Result<uint64_t> refused = by_framed->AppendFramed(framed, bad, &appended);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status();
    EXPECT_EQ(appended, 0u);
    EXPECT_EQ(by_framed->size(), lsn);
  }
  // Right ends, but one record's length field disagrees with them.
  {
    std::string misframed = framed;
    misframed[ends[1]] = static_cast<char>(misframed[ends[1]] + 1);  // the third's length
    Result<uint64_t> refused = by_framed->AppendFramed(misframed, ends, &appended);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status();
    EXPECT_EQ(appended, 0u);
    EXPECT_EQ(by_framed->size(), lsn);
  }

  // A file size limit inside the third record: the first two stay.
  {
    test_support::ScopedFileSizeLimit limit(lsn + ends[1] + 50);
    Result<uint64_t> full = by_framed->AppendFramed(framed, ends, &appended);
    EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
  }
  EXPECT_EQ(appended, 2u);
  EXPECT_EQ(by_framed->size(), lsn + ends[1]);
  EXPECT_EQ(std::filesystem::file_size(dir.Path("framed")), lsn + ends[1]);
  const LogContents contents = *ReadLogFile(dir.Path("framed"));
  EXPECT_TRUE(contents.tail_error.empty()) << contents.tail_error;
  EXPECT_THAT(contents.records, ElementsAre("solo", "one", "", batch[2], "four", "one", ""));
}

}  // namespace
}  // namespace neardup
