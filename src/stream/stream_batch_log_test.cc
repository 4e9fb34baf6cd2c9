// The log side of AddBatch: one write per group of kStreamBatchGroup
// documents and one fsync per batch; a write that fails part way (a full
// disk) keeps exactly the documents whose records it wrote whole and undoes
// the rest in memory (evictions included); a crash that tears the batch's
// write leaves, after Open, the documents before the torn record and
// nothing else, and the batch retried answers as if nothing had happened.
#include <signal.h>
#include <sys/resource.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "neardup/stream.h"
#include "neardup/write_ahead_log.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using test_support::PlantedId;
using test_support::PlantedTexts;
using test_support::TempDir;
using ::testing::HasSubstr;

// A full disk for the files this process writes: RLIMIT_FSIZE at `bytes`
// (writes past it fail with EFBIG once SIGXFSZ is ignored), while in scope.
class FullDiskAt {
 public:
  explicit FullDiskAt(uint64_t bytes) {
    EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &old_), 0);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FullDiskAt() {
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &old_), 0);
    signal(SIGXFSZ, old_handler_);
  }
  FullDiskAt(const FullDiskAt&) = delete;
  FullDiskAt& operator=(const FullDiskAt&) = delete;

 private:
  rlimit old_;
  sighandler_t old_handler_;
};

std::string LogFileIn(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("log-", 0) == 0) return entry.path().string();
  }
  return "";
}

std::vector<StreamDocument> DocumentsOf(const std::vector<std::string>& texts, size_t first,
                                        size_t last) {
  std::vector<StreamDocument> documents;
  for (size_t i = first; i < last; ++i) {
    documents.push_back(StreamDocument{"", texts[i], static_cast<int64_t>(i)});
  }
  return documents;
}

// DocumentsOf with the planted ids, which must outlive the views.
struct PlantedBatch {
  std::vector<std::string> ids;
  std::vector<StreamDocument> documents;
  PlantedBatch(const std::vector<std::string>& texts, size_t first, size_t last)
      : documents(DocumentsOf(texts, first, last)) {
    for (size_t i = first; i < last; ++i) ids.push_back(PlantedId(i));
    for (size_t i = 0; i < documents.size(); ++i) documents[i].id = ids[i];
  }
};

// Every state-derived count of two streams (memory_bytes aside: a reloaded
// state's tables may have other capacities).
void ExpectSameWindow(const StreamStats& a, const StreamStats& b) {
  EXPECT_EQ(a.documents, b.documents);
  EXPECT_EQ(a.kept, b.kept);
  EXPECT_EQ(a.added, b.added);
  EXPECT_EQ(a.evicted, b.evicted);
  EXPECT_EQ(a.oldest_time, b.oldest_time);
  EXPECT_EQ(a.newest_time, b.newest_time);
}

TEST(StreamBatchLogTest, ABatchIsOneLogWritePerGroupAndOneSync) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(300, 31);
  const PlantedBatch batch(texts, 0, texts.size());
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
  const StreamStats before = stream->Stats();
  ASSERT_TRUE(stream->AddBatch(batch.documents).ok());
  const StreamStats after = stream->Stats();
  EXPECT_EQ(after.log_appends - before.log_appends, 3u);  // 128 + 128 + 44
  EXPECT_EQ(after.log_syncs - before.log_syncs, 1u);
  EXPECT_EQ(after.snapshots, 0u);
  // The log holds one record per document, in order.
  const LogContents log = *ReadLogFile(LogFileIn(dir.path()));
  EXPECT_EQ(log.records.size(), texts.size());
  EXPECT_TRUE(log.tail_error.empty());
  EXPECT_EQ(log.valid_bytes, after.log_bytes);
}

// RLIMIT_FSIZE lets the batch's write keep two whole records and part of the
// third: the batch fails naming the third document, the first two are
// stored (and durable), the other four are not, and the documents their adds
// evicted (a cap of 8) are back. A limit that fits no record stores none.
TEST(StreamBatchLogTest, AFailedBatchWriteKeepsTheWholeRecordsAndUndoesTheRest) {
  const std::vector<std::string> texts = PlantedTexts(12, 32);
  StreamConfig config;
  config.max_documents = 8;
  const PlantedBatch first(texts, 0, 6);
  const PlantedBatch batch(texts, 6, 12);
  // The reference: the same documents added one by one to a disk with room;
  // the log's length after each is where each record of the batch ends.
  TempDir reference_dir;
  auto reference = std::move(NearDuplicateStream::Open(reference_dir.path(), config)).value();
  ASSERT_TRUE(reference->AddBatch(first.documents).ok());
  std::vector<uint64_t> ends;
  std::vector<StreamStats> stats_after;  // after 0, 1, ... documents of the batch
  std::vector<StreamAnswer> expected;
  stats_after.push_back(reference->Stats());
  for (const StreamDocument& d : batch.documents) {
    expected.push_back(*reference->Add(d.id, d.text, d.time));
    ends.push_back(reference->Stats().log_bytes);
    stats_after.push_back(reference->Stats());
  }
  const uint64_t base = stats_after[0].log_bytes;
  ASSERT_EQ(stats_after.back().evicted, 4u);  // the batch evicts documents 0-3

  for (size_t fits : {size_t{2}, size_t{0}}) {
    SCOPED_TRACE("records that fit: " + std::to_string(fits));
    TempDir dir;
    {
      auto stream = std::move(NearDuplicateStream::Open(dir.path(), config)).value();
      ASSERT_TRUE(stream->AddBatch(first.documents).ok());
      ASSERT_EQ(stream->Stats().log_bytes, base);
      Result<std::vector<StreamAnswer>> full = InternalError("not run");
      {
        FullDiskAt limit((fits == 0 ? base : ends[fits - 1]) + 10);
        full = stream->AddBatch(batch.documents);
      }
      EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
      EXPECT_THAT(full.status().message(), HasSubstr("document \"" + batch.ids[fits] + "\""));
      // Memory holds what the log holds: the window after `fits` documents.
      ExpectSameWindow(stream->Stats(), stats_after[fits]);
      EXPECT_EQ(stream->Stats().log_bytes, fits == 0 ? base : ends[fits - 1]);
      // Documents 0 .. 6 + fits - 1, the oldest past the cap of 8 evicted.
      const size_t held_from = 6 + fits > 8 ? 6 + fits - 8 : 0;
      for (size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(stream->Get(PlantedId(i)).ok(), i >= held_from && i < 6 + fits) << i;
      }
      EXPECT_EQ(std::filesystem::file_size(LogFileIn(dir.path())),
                fits == 0 ? base : ends[fits - 1]);
      // Room again: the retried batch answers as the documents added one by
      // one (the stored ones with their stored answers).
      EXPECT_EQ(*stream->AddBatch(batch.documents), expected);
      ExpectSameWindow(stream->Stats(), stats_after.back());
    }
    auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
    EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
    ExpectSameWindow(reopened->Stats(), stats_after.back());
    for (size_t i = 0; i < batch.ids.size(); ++i) {
      EXPECT_EQ(*reopened->Get(batch.ids[i]), expected[i]);
    }
  }
}

// A crash while the batch's records were being written, at every kind of
// place: on a record boundary, inside a header, inside a payload. Open keeps
// the records before the cut, reports the torn one (when one was cut) and
// never shows a document whose record is not whole; retrying the batch
// gives the uninterrupted run's answers.
TEST(StreamBatchLogTest, ATornBatchWriteKeepsThePrefixAndCutsTheTornRecord) {
  const std::vector<std::string> texts = PlantedTexts(10, 33);
  const PlantedBatch first(texts, 0, 4);
  const PlantedBatch batch(texts, 4, 10);
  TempDir dir;
  std::vector<StreamAnswer> expected;
  uint64_t base = 0;
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
    ASSERT_TRUE(stream->AddBatch(first.documents).ok());
    base = stream->Stats().log_bytes;
    expected = *stream->AddBatch(batch.documents);
  }
  const std::string log = LogFileIn(dir.path());
  const std::string bytes = test_support::ReadFileBytes(log);
  const LogContents contents = *ReadLogFile(log);
  ASSERT_EQ(contents.records.size(), 10u);
  std::vector<uint64_t> ends;  // of the batch's records
  uint64_t end = 0;
  for (const std::string& record : contents.records) {
    end += kLogRecordHeaderBytes + record.size();
    if (end > base) ends.push_back(end);
  }
  ASSERT_EQ(ends.size(), 6u);
  int cuts = 0;
  for (size_t whole = 0; whole < ends.size(); ++whole) {
    const uint64_t start = whole == 0 ? base : ends[whole - 1];
    for (uint64_t cut : {start, start + 5, start + kLogRecordHeaderBytes + 1, ends[whole] - 1}) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + ", " + std::to_string(whole) + " whole");
      ++cuts;
      TempDir crashed;
      for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        std::filesystem::copy_file(entry.path(), crashed.dir() / entry.path().filename());
      }
      std::filesystem::resize_file(LogFileIn(crashed.path()), cut);
      auto stream = std::move(NearDuplicateStream::OpenExisting(crashed.path())).value();
      EXPECT_EQ(stream->recovery().truncated_bytes, cut - start);
      EXPECT_EQ(stream->recovery().truncation.empty(), cut == start);
      EXPECT_EQ(stream->Stats().documents, 4 + whole);
      for (size_t i = 0; i < batch.ids.size(); ++i) {
        Result<StreamAnswer> stored = stream->Get(batch.ids[i]);
        EXPECT_EQ(stored.ok(), i < whole) << i;
        if (stored.ok()) {
          EXPECT_EQ(*stored, expected[i]);
        }
      }
      EXPECT_EQ(*stream->AddBatch(batch.documents), expected);
    }
  }
  EXPECT_EQ(cuts, 24);
  EXPECT_EQ(bytes.size(), ends.back());
}

}  // namespace
}  // namespace neardup
