#include "neardup/stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/write_ahead_log.h"
#include "stream/stream_id_index.h"
#include "stream/stream_impl.h"
#include "stream/stream_record.h"
#include "stream/stream_state.h"
#include "support/file_size_limit.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using test_support::PlantedId;
using test_support::PlantedTexts;
using test_support::ReadFileBytes;
using test_support::TempDir;
using ::testing::HasSubstr;

std::vector<uint64_t> BatchLeaders(const std::vector<std::string>& texts,
                                   const StreamConfig& config) {
  Result<std::vector<uint64_t>> cluster_of = test_support::BatchLeaders(texts, config);
  EXPECT_TRUE(cluster_of.ok()) << cluster_of.status();
  return cluster_of.ok() ? *cluster_of : std::vector<uint64_t>(texts.size());
}

// Every answer of the stream against the batch leader rule.
void ExpectBatchAnswers(const std::vector<StreamAnswer>& answers,
                        const std::vector<uint64_t>& cluster_of) {
  ASSERT_EQ(answers.size(), cluster_of.size());
  size_t duplicates = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    SCOPED_TRACE("document " + std::to_string(i));
    EXPECT_EQ(answers[i].id, PlantedId(i));
    if (cluster_of[i] == i) {
      EXPECT_EQ(answers[i].status, StreamStatus::kNew);
      EXPECT_EQ(answers[i].of, "");
    } else {
      ++duplicates;
      EXPECT_EQ(answers[i].status, StreamStatus::kNearDuplicate);
      EXPECT_EQ(answers[i].of, PlantedId(cluster_of[i]));
    }
  }
  EXPECT_GT(duplicates, answers.size() / 40);  // the planted copies are found
}

TEST(NearDuplicateStreamTest, MinHashAnswersEqualTheBatchLeaderRule) {
  const std::vector<std::string> texts = PlantedTexts(500, 7);
  for (double threshold : {0.5, 0.8}) {
    SCOPED_TRACE(threshold);
    StreamConfig config;
    config.threshold = threshold;
    auto stream = std::move(NearDuplicateStream::Create(config)).value();
    std::vector<StreamAnswer> answers;
    for (size_t i = 0; i < texts.size(); ++i) {
      answers.push_back(*stream->Add(PlantedId(i), texts[i], static_cast<int64_t>(i)));
    }
    ExpectBatchAnswers(answers, BatchLeaders(texts, config));
    // Similarities are the verified exact Jaccard, at least the threshold.
    for (const StreamAnswer& a : answers) {
      if (a.status == StreamStatus::kNearDuplicate) {
        EXPECT_GE(a.similarity, threshold);
      }
    }
  }
}

TEST(NearDuplicateStreamTest, SimHashAnswersEqualTheBatchLeaderRule) {
  const std::vector<std::string> texts = PlantedTexts(500, 8);
  for (int max_distance : {3, 6}) {
    StreamConfig config;
    config.method = NearDuplicateMethod::kSimHash;
    config.max_distance = max_distance;
    auto stream = std::move(NearDuplicateStream::Create(config)).value();
    std::vector<StreamAnswer> answers;
    for (size_t i = 0; i < texts.size(); ++i) {
      answers.push_back(*stream->Add(PlantedId(i), texts[i], 0));
    }
    ExpectBatchAnswers(answers, BatchLeaders(texts, config));
  }
}

TEST(NearDuplicateStreamTest, RepostReturnsTheStoredAnswerAndCheckStoresNothing) {
  auto stream = std::move(NearDuplicateStream::Create({})).value();
  const std::string text = PlantedTexts(1, 3)[0];
  StreamAnswer first = *stream->Add("a", text, 10);
  EXPECT_EQ(first.status, StreamStatus::kNew);
  StreamAnswer copy = *stream->Add("b", text, 11);
  EXPECT_EQ(copy.status, StreamStatus::kNearDuplicate);
  EXPECT_EQ(copy.of, "a");
  EXPECT_DOUBLE_EQ(copy.similarity, 1.0);
  // A retry with another text and time changes nothing.
  EXPECT_EQ(*stream->Add("b", "something else entirely", 99), copy);
  EXPECT_EQ(stream->Stats().added, 2u);
  StreamAnswer checked = *stream->Check("c", text, 12);
  EXPECT_EQ(checked.status, StreamStatus::kNearDuplicate);
  EXPECT_EQ(checked.of, "a");
  EXPECT_EQ(stream->Get("c").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*stream->Get("b"), copy);
  EXPECT_EQ(stream->Stats().documents, 2u);
  EXPECT_EQ(stream->Stats().kept, 1u);
}

TEST(NearDuplicateStreamTest, DocumentsLeaveTheWindowByTime) {
  StreamConfig config;
  config.window_seconds = 100;
  auto stream = std::move(NearDuplicateStream::Create(config)).value();
  const std::vector<std::string> texts = PlantedTexts(2, 4);
  EXPECT_EQ(stream->Add("a", texts[0], 1000)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("x", texts[1], 1050)->status, StreamStatus::kNew);
  // 1100 - 100 = 1000: "a" (time 1000) is still in the window.
  StreamAnswer b = *stream->Add("b", texts[0], 1100);
  EXPECT_EQ(b.status, StreamStatus::kNearDuplicate);
  EXPECT_EQ(b.of, "a");
  // A check at 1101 would no longer see "a", nor "b" (a near-duplicate is not a leader).
  EXPECT_EQ(stream->Check("q", texts[0], 1101)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Get("a")->id, "a");  // Check evicts nothing
  StreamAnswer c = *stream->Add("c", texts[0], 1101);
  EXPECT_EQ(c.status, StreamStatus::kNew);
  EXPECT_EQ(stream->Get("a").status().code(), StatusCode::kNotFound);
  StreamStats stats = stream->Stats();
  EXPECT_EQ(stats.evicted, 1u);
  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.oldest_time, 1050);
  EXPECT_EQ(stats.newest_time, 1101);
  // A late document is answered (against what is in the window), then leaves at once.
  EXPECT_EQ(stream->Add("late", texts[1], 5)->of, "x");
  EXPECT_EQ(stream->Get("late").status().code(), StatusCode::kNotFound);
  // "x" matches nothing at 1200 + 50: it left with the time 1151 cutoff.
  StreamAnswer y = *stream->Add("y", texts[1], 1151);
  EXPECT_EQ(y.status, StreamStatus::kNew);
}

TEST(NearDuplicateStreamTest, MaxDocumentsDropsTheOldestFirst) {
  StreamConfig config;
  config.max_documents = 2;
  auto stream = std::move(NearDuplicateStream::Create(config)).value();
  const std::vector<std::string> texts = PlantedTexts(4, 5);
  ASSERT_TRUE(stream->Add("a", texts[0], 30).ok());
  ASSERT_TRUE(stream->Add("b", texts[1], 10).ok());  // oldest by time
  ASSERT_TRUE(stream->Add("c", texts[2], 20).ok());
  EXPECT_EQ(stream->Get("b").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(stream->Stats().documents, 2u);
  EXPECT_EQ(stream->Add("d", texts[1], 40)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("e", texts[2], 50)->status, StreamStatus::kNew);  // "c" left with "d"
}

TEST(NearDuplicateStreamTest, RemovedLeaderIsNoLongerMatched) {
  auto stream = std::move(NearDuplicateStream::Create({})).value();
  const std::string text = PlantedTexts(1, 6)[0];
  ASSERT_TRUE(stream->Add("a", text, 0).ok());
  ASSERT_EQ(stream->Add("b", text, 0)->of, "a");
  ASSERT_TRUE(stream->Remove("a").ok());
  EXPECT_EQ(stream->Remove("a").code(), StatusCode::kNotFound);
  EXPECT_EQ(stream->Get("b")->of, "a");  // answers stay
  EXPECT_EQ(stream->Add("c", text, 0)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("d", text, 0)->of, "c");
  EXPECT_EQ(stream->Stats().removed, 1u);
}

TEST(NearDuplicateStreamTest, BadInputIsAnError) {
  StreamConfig bad;
  bad.threshold = 1.5;
  EXPECT_THAT(NearDuplicateStream::Create(bad).status().message(), HasSubstr("threshold (1.5"));
  bad = {};
  bad.preset = "nope";
  EXPECT_FALSE(NearDuplicateStream::Create(bad).ok());
  bad = {};
  bad.window_seconds = -1;
  EXPECT_THAT(NearDuplicateStream::Create(bad).status().message(), HasSubstr("window_seconds"));
  auto stream = std::move(NearDuplicateStream::Create({})).value();
  EXPECT_EQ(stream->Add("", "text", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stream->Add(std::string(kMaxStreamIdBytes + 1, 'x'), "t", 0).status().code(),
            StatusCode::kInvalidArgument);
  // An empty text is kept and matches nothing.
  EXPECT_EQ(stream->Add("e1", "", 0)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("e2", "", 0)->status, StreamStatus::kNew);
}

// Adds texts[begin, end) and returns the answers.
std::vector<StreamAnswer> AddAll(NearDuplicateStream& stream, const std::vector<std::string>& texts,
                                 size_t begin, size_t end) {
  std::vector<StreamAnswer> answers;
  for (size_t i = begin; i < end; ++i) {
    Result<StreamAnswer> answer = stream.Add(PlantedId(i), texts[i], static_cast<int64_t>(i));
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (answer.ok()) answers.push_back(*answer);
  }
  return answers;
}

// Session 16: a log length of 0 (a new file per write) or past the bound is
// a clear error from both opens, before any file is touched.
TEST(DurableStreamTest, OpenRefusesASnapshotLogOfZeroOrPastTheBound) {
  TempDir dir;
  const std::string path = dir.path() + "/s";
  StreamOpenOptions options;
  for (uint64_t bytes : {uint64_t{0}, kMaxStreamSnapshotLogBytes + 1, ~uint64_t{0}}) {
    options.snapshot_log_bytes = bytes;
    Result<std::unique_ptr<NearDuplicateStream>> opened =
        NearDuplicateStream::Open(path, StreamConfig{}, options);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(opened.status().message(),
                HasSubstr("snapshot_log_bytes (" + std::to_string(bytes) + ") must be in [1, "));
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  options.snapshot_log_bytes = 1;  // the smallest: a new log after each write
  {
    auto stream = std::move(NearDuplicateStream::Open(path, StreamConfig{}, options)).value();
    ASSERT_TRUE(stream->Add("a", "some text to keep", 0).ok());
    ASSERT_TRUE(stream->Add("b", "another text to keep", 0).ok());
  }
  options.snapshot_log_bytes = 0;
  EXPECT_EQ(NearDuplicateStream::OpenExisting(path, options).status().code(),
            StatusCode::kInvalidArgument);
  options.snapshot_log_bytes = kMaxStreamSnapshotLogBytes;
  auto stream = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_TRUE(stream->Get("a").ok());
  EXPECT_TRUE(stream->Get("b").ok());
}

// Session 16: a roll-over waits, off the writer lock, until the old log is
// durable whole, or syncs it under the lock once the log is a quarter past
// its length. Either way every log but the last ends within a quarter and
// one operation of snapshot_log_bytes, and a reopen replays them all,
// durable (fsync). Each way is counted (Impl::roll_counts_) and checked:
// - single adds with the roll-over helper held busy (as while another
//   writer is in it): the next add takes the roll-over before its append;
// - single adds: the add's own writer after its sync (RollLogAfterSync);
// - concurrent batches of 10 (each more than a quarter of the log): the
//   fallback's sync under the lock.
TEST(DurableStreamTest, RollOversWithDurableWritesKeepEveryAnswer) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(400, 41);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 8 << 10;
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  std::vector<StreamAnswer> answers(texts.size());
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {}, options)).value();
    NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
    const auto rolls = [&impl] {
      std::lock_guard<std::mutex> lock(impl.mutex_);
      return impl.roll_counts_;
    };
    impl.roll_helper_busy_ = true;
    for (size_t i = 0; i < 100; ++i) {
      answers[i] = *stream->Add(PlantedId(i), texts[i], static_cast<int64_t>(i));
    }
    impl.roll_helper_busy_ = false;
    EXPECT_GT(rolls().before_append, 0u);
    EXPECT_EQ(rolls().after_sync, 0u);
    for (size_t i = 100; i < 200; ++i) {
      answers[i] = *stream->Add(PlantedId(i), texts[i], static_cast<int64_t>(i));
    }
    EXPECT_GT(rolls().after_sync, 0u);
    const uint64_t forced = rolls().forced;
    std::vector<std::thread> writers;
    for (size_t w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        for (size_t first = 200 + 10 * w; first < texts.size(); first += 40) {
          std::vector<StreamDocument> batch;
          for (size_t i = first; i < first + 10; ++i) {
            batch.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
          }
          Result<std::vector<StreamAnswer>> added = stream->AddBatch(batch);
          ASSERT_TRUE(added.ok()) << added.status();
          std::copy(added->begin(), added->end(), answers.begin() + static_cast<ptrdiff_t>(first));
        }
      });
    }
    for (std::thread& writer : writers) writer.join();
    EXPECT_GT(rolls().forced, forced);
    EXPECT_EQ(stream->Stats().snapshots, 0u);  // a window that only grows
  }
  std::vector<std::pair<uint64_t, uint64_t>> logs;  // (generation, bytes)
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("log-", 0) == 0) {
      logs.emplace_back(std::stoull(name.substr(4)), entry.file_size());
    }
  }
  std::sort(logs.begin(), logs.end());
  ASSERT_GE(logs.size(), 20u);
  // The next log, made ahead of its roll-over (session 18), is empty.
  if (logs.back().second == 0) logs.pop_back();
  for (size_t i = 0; i + 1 < logs.size(); ++i) {
    EXPECT_EQ(logs[i].first, logs[0].first + i);  // no gap
    EXPECT_GE(logs[i].second, options.snapshot_log_bytes) << i;
    // A quarter past, plus one operation (a batch of 10 records of up to
    // ~3 KB: a kept MinHash document's).
    EXPECT_LT(logs[i].second, options.snapshot_log_bytes * 5 / 4 + (32 << 10)) << i;
  }
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  for (size_t i = 0; i < texts.size(); ++i) {
    Result<StreamAnswer> stored = reopened->Get(PlantedId(i));
    ASSERT_TRUE(stored.ok()) << i;
    EXPECT_EQ(*stored, answers[i]) << i;
  }
}

// Whether the next log is made ahead.
bool SpareReady(NearDuplicateStream::Impl& impl) {
  std::lock_guard<std::mutex> lock(impl.mutex_);
  return impl.spare_generation_ == impl.generation_ + 1;
}

// Waits (at most 20 s) until `done`; false if it did not come.
template <typename Done>
bool WaitFor(Done done) {
  for (int i = 0; i < 20000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// Session 18: the next log is made ahead of its roll-over (PrepareSpareLog,
// outside the writer lock), so a roll-over creates no file. Every roll-over
// after the first write takes the spare, whose name is durable already; a
// copy of the files while a spare exists (what a crash between making it
// and using it leaves: an empty newest log) reopens to exactly the
// acknowledged adds, the new records go into the spare, and a second
// reopen finds them all. `background`: the snapshot thread makes the spares
// (session 20; the test waits for each before the next add, as the 64 MiB
// of a real log would), else a writer after its sync.
void CheckTheNextLogMadeAheadIsUsedAndRecoveredFrom(bool background) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(160, 53);
  StreamOpenOptions options;
  // With the thread: more than eight records, so that the first add leaves
  // the log below an eighth (past it, the writers make the spare).
  options.snapshot_log_bytes = background ? 32 << 10 : 4 << 10;
  options.background_snapshots = background;
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  std::vector<StreamAnswer> answers;
  for (size_t i = 0; i < 120; ++i) {
    answers.push_back(*stream->Add(PlantedId(i), texts[i], static_cast<int64_t>(i)));
    if (background) {
      ASSERT_TRUE(WaitFor([&impl] { return SpareReady(impl); })) << i;
    }
  }
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    const NearDuplicateStream::Impl::RollCounts& rolls = impl.roll_counts_;
    const uint64_t all = rolls.at_once + rolls.before_append + rolls.after_sync + rolls.forced;
    EXPECT_GE(all, background ? 5u : 10u) << all;
    EXPECT_EQ(rolls.spare, all);  // single adds: each writer syncs before the next
    // The spare of the next roll-over is there, named durably.
    EXPECT_EQ(impl.spare_generation_, impl.generation_ + 1);
    EXPECT_TRUE(impl.spare_name_durable_);
    EXPECT_EQ(impl.names_synced_.load(), impl.names_created_.load());
    // Who made them (the first, log-1, after the first add).
    EXPECT_EQ(impl.spares_made_.by_thread + impl.spares_made_.by_writer, all + 1);
    EXPECT_EQ(background ? impl.spares_made_.by_writer : impl.spares_made_.by_thread, 0u);
    generation = impl.generation_;
  }
  const std::string digits = std::to_string(generation + 1);
  const std::string spare_name = "log-" + std::string(20 - digits.size(), '0') + digits;
  ASSERT_TRUE(std::filesystem::exists(path + "/" + spare_name));
  EXPECT_EQ(std::filesystem::file_size(path + "/" + spare_name), 0u);
  TempDir copy;
  std::filesystem::copy(path, copy.Path("s"), std::filesystem::copy_options::recursive);
  {
    auto reopened = std::move(NearDuplicateStream::OpenExisting(copy.Path("s"), options)).value();
    EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
    EXPECT_EQ(reopened->Stats().added, 120u);
    for (size_t i = 0; i < 120; ++i) EXPECT_EQ(*reopened->Get(PlantedId(i)), answers[i]) << i;
    // Recovery goes on in the empty newest log.
    EXPECT_EQ(internal::StreamTestAccess::ImplOf(*reopened).generation_, generation + 1);
    for (size_t i = 120; i < texts.size(); ++i) {
      answers.push_back(*reopened->Add(PlantedId(i), texts[i], static_cast<int64_t>(i)));
    }
  }
  auto again = std::move(NearDuplicateStream::OpenExisting(copy.Path("s"), options)).value();
  EXPECT_EQ(again->recovery().truncated_bytes, 0u);
  EXPECT_EQ(again->Stats().added, texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(*again->Get(PlantedId(i)), answers[i]) << i;
}

TEST(DurableStreamTest, TheNextLogMadeAheadIsUsedAndRecoveredFrom) {
  CheckTheNextLogMadeAheadIsUsedAndRecoveredFrom(/*background=*/false);
}

TEST(DurableStreamTest, TheNextLogMadeAheadByTheSnapshotThreadIsUsedAndRecoveredFrom) {
  CheckTheNextLogMadeAheadIsUsedAndRecoveredFrom(/*background=*/true);
}

// Session 20: the writer whose add comes first after a new log no longer
// makes the next one (its creation and directory fsync): the snapshot
// thread does. The spare's directory fsync is held (up to 20 s) until the
// add has returned: the add answers meanwhile, and the fsync ran on
// another thread. (Before, the add's own SyncAll made the spare, so it
// returned only once the held fsync let go.) The fsync must have begun
// before the add returned for this to show anything; on a loaded machine
// the thread may come later, so up to 5 streams are tried.
TEST(DurableStreamTest, TheSnapshotThreadMakesTheNextLogWhileTheWriterAnswers) {
  bool shown = false;
  for (int attempt = 0; attempt < 5 && !shown; ++attempt) {
    TempDir dir;
    const std::string path = dir.Path("s");
    const std::vector<std::string> texts = PlantedTexts(2, 71);
    StreamOpenOptions options;
    options.snapshot_log_bytes = 1 << 20;  // far from an eighth: no writer takes the spare back
    auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
    NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
    std::mutex mu;
    std::condition_variable cv;
    bool add_returned = false;
    bool entered_before_the_add_returned = false;
    bool held_while_the_add_returned = false;
    std::thread::id synced_on;
    const std::thread::id writer = std::this_thread::get_id();
    impl.sync_directory_for_tests_ = [&]() -> Status {
      {
        std::unique_lock<std::mutex> lock(mu);
        synced_on = std::this_thread::get_id();
        entered_before_the_add_returned = !add_returned;
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return add_returned; });
        held_while_the_add_returned = add_returned;
      }
      return SyncDirectory(path);
    };
    ASSERT_TRUE(stream->Add(PlantedId(0), texts[0], 0).ok());
    {
      std::lock_guard<std::mutex> lock(mu);
      add_returned = true;
    }
    cv.notify_all();
    ASSERT_TRUE(WaitFor([&impl] { return SpareReady(impl); }));
    {
      std::lock_guard<std::mutex> lock(mu);
      shown = entered_before_the_add_returned;  // so the add answered while it was held
      EXPECT_TRUE(held_while_the_add_returned);
      EXPECT_NE(synced_on, writer);
    }
    {
      std::lock_guard<std::mutex> lock(impl.mutex_);
      EXPECT_TRUE(impl.spare_name_durable_);
      EXPECT_EQ(impl.spares_made_.by_thread, 1u);
      EXPECT_EQ(impl.spares_made_.by_writer, 0u);
    }
    impl.sync_directory_for_tests_ = nullptr;
    ASSERT_TRUE(stream->Add(PlantedId(1), texts[1], 1).ok());
    stream.reset();
    auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
    EXPECT_EQ(reopened->Stats().added, 2u);
    EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  }
  EXPECT_TRUE(shown);
}

// When the snapshot thread gets no CPU (here: told to leave spares alone),
// the writers make the next log after their sync once the log is an eighth
// of snapshot_log_bytes, so the roll-over still takes a spare; before that
// none is made.
TEST(DurableStreamTest, WritersMakeTheNextLogAtAnEighthOfTheLogWhenTheThreadDoesNot) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(200, 73);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 64 << 10;
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  impl.spares_by_thread_for_tests_ = false;
  const auto spare_ready = [&impl] {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    return impl.spare_generation_ == impl.generation_ + 1;
  };
  size_t added = 0;
  uint64_t log_bytes_when_made = 0;
  while (added < texts.size() && !spare_ready()) {
    {
      std::lock_guard<std::mutex> lock(impl.mutex_);
      log_bytes_when_made = impl.log_->size();
    }
    ASSERT_TRUE(stream->Add(PlantedId(added), texts[added], 0).ok()) << added;
    ++added;
  }
  ASSERT_TRUE(spare_ready());
  EXPECT_GT(added, 1u);
  // Made by the add that took the log past an eighth (the log's size before
  // it was below that).
  EXPECT_LT(log_bytes_when_made, options.snapshot_log_bytes / 8);
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    EXPECT_GE(impl.log_->size(), options.snapshot_log_bytes / 8);
    EXPECT_EQ(impl.spares_made_.by_thread, 0u);
    EXPECT_EQ(impl.spares_made_.by_writer, 1u);
    EXPECT_TRUE(impl.spare_name_durable_);
  }
  // Two roll-overs, each onto a spare.
  const auto generation = [&impl] {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    return impl.generation_;
  };
  const uint64_t first = generation();
  while (added < texts.size() && generation() < first + 2) {
    ASSERT_TRUE(stream->Add(PlantedId(added), texts[added], 0).ok()) << added;
    ++added;
  }
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    ASSERT_EQ(impl.generation_, first + 2);
    EXPECT_EQ(impl.roll_counts_.spare, 2u);
    EXPECT_EQ(impl.spares_made_.by_thread, 0u);
  }
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_EQ(reopened->Stats().added, added);
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
}

// Whether a thread of this process may come back from SCHED_IDLE to normal
// priority (root, or RLIMIT_NICE >= 20).
bool ThisProcessMayLeaveSchedIdle() {
#ifdef SCHED_IDLE
  bool may = false;
  std::thread([&may] {
    sched_param param{};
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) != 0) return;
    may = pthread_setschedparam(pthread_self(), SCHED_OTHER, &param) == 0;
  }).join();
  return may;
#else
  return true;
#endif
}

// Session 20 review: the snapshot thread takes the writer lock at SCHED_IDLE
// only for a snapshot's work, never for a spare (preempted at SCHED_IDLE
// with the lock held, it would stall every writer while the requests keep
// the core busy). Across rotations, whose snapshot work runs at SCHED_IDLE
// between the spares, no spare is made at SCHED_IDLE: the thread comes back
// to normal priority where the process may, and where it may not (forced
// by `raise_fails`, as for a process neither root nor with RLIMIT_NICE >=
// 20) the writers make every spare after the thread's first snapshot
// work. Every acknowledged add reopens.
void CheckNoSpareIsMadeAtIdlePriority(bool raise_fails) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(160, 59);
  StreamOpenOptions options;
  // More than eight records, so that the first add leaves the log below an
  // eighth (past it, the writers make the spare).
  options.snapshot_log_bytes = 32 << 10;
  options.snapshot_grows_with_state = false;  // a rotation (snapshot) at each full log
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  impl.priority_raise_fails_for_tests_ = raise_fails;
  std::vector<StreamAnswer> answers;
  for (size_t i = 0; i < texts.size(); ++i) {
    answers.push_back(*stream->Add(PlantedId(i), texts[i], static_cast<int64_t>(i)));
    // The thread's spare, or one the next add's writer makes.
    ASSERT_TRUE(WaitFor([&impl] {
      std::lock_guard<std::mutex> lock(impl.mutex_);
      return impl.spare_generation_ == impl.generation_ + 1 || impl.spare_by_writers_.load();
    })) << i;
  }
  const bool stays_idle = raise_fails || !ThisProcessMayLeaveSchedIdle();
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    EXPECT_GE(impl.snapshots_, 3u);
    EXPECT_GT(impl.spares_made_.by_thread, 0u);  // log-1 and the first rotation's at least
    EXPECT_EQ(impl.spares_made_.by_thread_at_idle, 0u);
    EXPECT_EQ(impl.thread_stays_idle_, stays_idle);
    if (stays_idle) {
      EXPECT_GE(impl.spares_made_.by_writer, 2u);
    } else {
      EXPECT_EQ(impl.spares_made_.by_writer, 0u);
    }
  }
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  EXPECT_EQ(reopened->Stats().added, texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(*reopened->Get(PlantedId(i)), answers[i]) << i;
}

TEST(DurableStreamTest, TheSnapshotThreadMakesNoSpareAtIdlePriority) {
  CheckNoSpareIsMadeAtIdlePriority(/*raise_fails=*/false);
}

TEST(DurableStreamTest, WritersMakeTheSparesOnceTheSnapshotThreadMayNotLeaveIdlePriority) {
  CheckNoSpareIsMadeAtIdlePriority(/*raise_fails=*/true);
}

// A spare whose directory fsync fails on the snapshot thread stops every
// later write, as a writer's (DirectorySyncFailedLocked): the next add is
// refused, and the stream reopens with every acknowledged add.
TEST(DurableStreamTest, AFailedDirectoryFsyncOfTheThreadsSpareStopsTheNextAdd) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(2, 61);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 1 << 20;  // far from an eighth: the thread makes the spare
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  const std::thread::id writer = std::this_thread::get_id();
  std::atomic<bool> failed_on_the_thread{false};
  impl.sync_directory_for_tests_ = [&]() -> Status {
    if (std::this_thread::get_id() == writer) return SyncDirectory(path);
    failed_on_the_thread = true;
    return IoError("injected directory fsync failure");
  };
  const StreamAnswer first = *stream->Add(PlantedId(0), texts[0], 0);
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    return failed_on_the_thread.load() && !impl.failed_.ok();
  }));
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    EXPECT_NE(impl.spare_generation_, impl.generation_ + 1);  // not recorded as the spare
    EXPECT_EQ(impl.spares_made_.by_thread, 0u);
  }
  EXPECT_FALSE(stream->Add(PlantedId(1), texts[1], 1).ok());
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_EQ(reopened->Stats().added, 1u);
  EXPECT_EQ(*reopened->Get(PlantedId(0)), first);
}

// Single adds of `texts` until one leaves a rolled log whose name is not
// durable yet (RollLogAfterSync started it after the add's own sync);
// returns how many were added. A failed add fails the test.
size_t AddUntilARolledLogNameIsPending(NearDuplicateStream& stream, NearDuplicateStream::Impl& impl,
                                       const std::vector<std::string>& texts) {
  size_t added = 0;
  while (added < texts.size() && impl.names_synced_.load() >= impl.names_created_.load()) {
    if (!stream.Add(PlantedId(added), texts[added], 0).ok()) {
      ADD_FAILURE() << "add " << added << " failed";
      break;
    }
    ++added;
  }
  return added;
}

// A log started by a roll-over has its name made durable by a later
// directory fsync (SyncNewLogNames). When that fsync fails in a writer's
// roll-over helper (RollLogAfterSync), no later write may be acknowledged:
// a later fsync, on a new descriptor, could return OK for a name that never
// reached the disk. The failure: the directory renamed away for the call.
TEST(DurableStreamTest, AFailedDirectorySyncOfARolledLogStopsLaterWrites) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(200, 43);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 4 << 10;
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  impl.make_spare_logs_for_tests_ = false;  // a spare log's name is durable before its roll-over
  const size_t added = AddUntilARolledLogNameIsPending(*stream, impl, texts);
  ASSERT_LT(impl.names_synced_.load(), impl.names_created_.load());
  std::shared_ptr<WriteAheadLog> log;
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    log = impl.log_;
  }
  std::filesystem::rename(path, dir.Path("away"));
  impl.RollLogAfterSync(log);
  std::filesystem::rename(dir.Path("away"), path);
  // The directory can be synced again, but the failure stays.
  EXPECT_FALSE(impl.SyncNewLogNames().ok());
  EXPECT_FALSE(stream->Add(PlantedId(added), texts[added], 0).ok());
  EXPECT_FALSE(stream->Add(PlantedId(added + 1), texts[added + 1], 0).ok());
  // What was acknowledged is all there after a reopen.
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  for (size_t i = 0; i < added; ++i) EXPECT_TRUE(reopened->Get(PlantedId(i)).ok()) << i;
}

// Review of session 18 (MUST 1): a rotation racing PrepareSpareLog. The
// spare log-<g+1> is created; before PrepareSpareLog records it, a rotation
// opens that file as its new log, the rotation's directory fsync fails and
// the file is removed; PrepareSpareLog's own fsync, on a new descriptor,
// then returns OK. Recorded as a spare whose name is durable, the removed
// file would have been created again by the next roll-over's O_CREAT with
// its name never synced. Now the failed fsync stops every later write (as
// PrepareSpareLog's and SyncNewLogNames' do) and no spare is recorded. The
// interleaving and the failure: sync_directory_for_tests_.
TEST(DurableStreamTest, ARotationsFailedDirectorySyncStopsLaterWritesAndRecordsNoSpare) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(20, 59);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 1 << 20;  // no roll-over or rotation of the stream's own
  options.background_snapshots = false;
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  impl.make_spare_logs_for_tests_ = false;  // the spare made below, by the test's call
  const size_t added = 10;
  for (size_t i = 0; i < added; ++i) ASSERT_TRUE(stream->Add(PlantedId(i), texts[i], 0).ok());
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    generation = impl.generation_;
    ASSERT_NE(impl.spare_generation_, generation + 1);
  }
  const std::string next_log = internal::StreamFilePath(path, "log", generation + 1);
  ASSERT_FALSE(std::filesystem::exists(next_log));
  Status rotation;
  int syncs = 0;
  impl.sync_directory_for_tests_ = [&]() -> Status {
    ++syncs;
    if (syncs == 1) {
      // PrepareSpareLog's: log-<g+1> made, the writer lock not held.
      EXPECT_TRUE(std::filesystem::exists(next_log));
      std::lock_guard<std::mutex> lock(impl.mutex_);
      rotation = impl.StartRotationLocked();  // its fsync is the second
      return SyncDirectory(path);
    }
    if (syncs == 2) return IoError("injected: the rotation's directory fsync");
    return SyncDirectory(path);
  };
  impl.make_spare_logs_for_tests_ = true;
  impl.spare_wanted_ = true;
  impl.PrepareSpareLog(/*by_thread=*/false);
  impl.sync_directory_for_tests_ = nullptr;
  EXPECT_EQ(syncs, 2);
  EXPECT_FALSE(rotation.ok());
  EXPECT_FALSE(std::filesystem::exists(next_log));  // removed by the failed rotation
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    EXPECT_EQ(impl.generation_, generation);
    EXPECT_NE(impl.spare_generation_, generation + 1);  // not a spare: the file is gone
  }
  // The directory can be synced again, but the failure stays.
  EXPECT_FALSE(stream->Add(PlantedId(added), texts[added], 0).ok());
  EXPECT_FALSE(stream->Add(PlantedId(added + 1), texts[added + 1], 0).ok());
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_EQ(reopened->Stats().added, added);
  for (size_t i = 0; i < added; ++i) EXPECT_TRUE(reopened->Get(PlantedId(i)).ok()) << i;
}

// A recorded spare that is no longer there when its roll-over comes (the
// removal above, or anything else) is not taken as a spare: the roll-over
// creates the file and counts its name, so that the first SyncAll of a
// record in it syncs the directory before acknowledging it.
TEST(DurableStreamTest, ARollOverWhoseSpareIsGoneMakesAndCountsItsOwnName) {
  TempDir dir;
  const std::string path = dir.Path("s");
  const std::vector<std::string> texts = PlantedTexts(200, 61);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 4 << 10;
  auto stream = std::move(NearDuplicateStream::Open(path, {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  const auto spare_ready = [&impl] {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    return impl.spare_generation_ == impl.generation_ + 1;
  };
  const auto generation = [&impl] {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    return impl.generation_;
  };
  size_t added = 0;
  const auto add = [&] {
    ASSERT_TRUE(stream->Add(PlantedId(added), texts[added], 0).ok()) << added;
    ++added;
  };
  while (added < texts.size() && !spare_ready()) add();
  ASSERT_TRUE(spare_ready());
  const uint64_t before = generation();
  uint64_t spares = 0;
  uint64_t created = 0;
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    spares = impl.roll_counts_.spare;
    created = impl.names_created_.load();
  }
  const std::string next_log = internal::StreamFilePath(path, "log", before + 1);
  ASSERT_TRUE(std::filesystem::remove(next_log));
  while (added < texts.size() && generation() == before) add();
  {
    std::lock_guard<std::mutex> lock(impl.mutex_);
    ASSERT_EQ(impl.generation_, before + 1);
    EXPECT_EQ(impl.roll_counts_.spare, spares);          // not taken as a spare
    EXPECT_EQ(impl.names_created_.load(), created + 1);  // its name counted ...
  }
  // ... and made durable by the next add's SyncAll, before its answer.
  add();
  EXPECT_EQ(impl.names_synced_.load(), impl.names_created_.load());
  EXPECT_TRUE(std::filesystem::exists(next_log));
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(path, options)).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  EXPECT_EQ(reopened->Stats().added, added);
}

// A rotation syncs the directory for its new log's name: the names of the
// logs rolled over before it are durable by the same fsync, so no writer
// after it does another.
TEST(DurableStreamTest, ARotationMakesTheRolledLogsNamesDurable) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(200, 47);
  StreamOpenOptions options;
  options.snapshot_log_bytes = 4 << 10;
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), {}, options)).value();
  NearDuplicateStream::Impl& impl = internal::StreamTestAccess::ImplOf(*stream);
  impl.make_spare_logs_for_tests_ = false;  // a spare log's name is durable before its roll-over
  AddUntilARolledLogNameIsPending(*stream, impl, texts);
  ASSERT_LT(impl.names_synced_.load(), impl.names_created_.load());
  ASSERT_TRUE(stream->Snapshot().ok());
  EXPECT_EQ(impl.names_synced_.load(), impl.names_created_.load());
}

TEST(DurableStreamTest, ReopenGivesTheSameAnswersAcrossSnapshots) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(300, 9);
  StreamConfig config;
  config.window_seconds = 250;  // some documents leave along the way
  auto memory = std::move(NearDuplicateStream::Create(config)).value();
  const std::vector<StreamAnswer> expected = AddAll(*memory, texts, 0, texts.size());
  StreamOpenOptions options;
  options.snapshot_log_bytes = 40 << 10;  // several snapshots over 300 documents
  options.snapshot_grows_with_state = false;
  options.background_snapshots = false;             // counted below: done by the writers ...
  options.snapshot_step_bytes = uint64_t{1} << 20;  // ... whole, in the operation that starts it
  // The same stream in memory, kept in step with the durable one.
  auto in_step = std::move(NearDuplicateStream::Create(config)).value();
  std::vector<StreamAnswer> answers;
  for (size_t begin = 0; begin < texts.size(); begin += 70) {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
    EXPECT_EQ(stream->recovery().truncated_bytes, 0u);
    // What the last run stored is still there.
    for (size_t i = 0; i < begin; ++i) {
      Result<StreamAnswer> stored = stream->Get(PlantedId(i));
      Result<StreamAnswer> in_memory = in_step->Get(PlantedId(i));
      ASSERT_EQ(stored.ok(), in_memory.ok()) << i;
      if (stored.ok()) {
        EXPECT_EQ(*stored, *in_memory);
      }
    }
    const size_t end = std::min(texts.size(), begin + 70);
    std::vector<StreamAnswer> more = AddAll(*stream, texts, begin, end);
    AddAll(*in_step, texts, begin, end);
    answers.insert(answers.end(), more.begin(), more.end());
    if (begin == 140) {
      EXPECT_GT(stream->Stats().snapshots, 0u);
    }
  }
  EXPECT_EQ(answers, expected);
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  StreamStats a = reopened->Stats();
  StreamStats b = memory->Stats();
  EXPECT_EQ(a.documents, b.documents);
  EXPECT_EQ(a.kept, b.kept);
  EXPECT_EQ(a.added, b.added);
  EXPECT_EQ(a.evicted, b.evicted);
  EXPECT_EQ(a.oldest_time, b.oldest_time);
  // Only the newest snapshot and log are left, and the next log made ahead
  // of its roll-over (session 18), empty.
  size_t files = 0;
  size_t empty_logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const bool empty_log =
        entry.path().filename().string().rfind("log-", 0) == 0 && entry.file_size() == 0;
    empty_logs += empty_log;
    files += !empty_log;
  }
  EXPECT_EQ(files, 2u);
  EXPECT_LE(empty_logs, 1u);
}

TEST(DurableStreamTest, AnotherConfigIsRefusedAndAMissingStreamIsNotFound) {
  TempDir dir;
  ASSERT_TRUE(NearDuplicateStream::Open(dir.Path("s"), {}).ok());
  StreamConfig other;
  other.threshold = 0.9;
  EXPECT_EQ(NearDuplicateStream::Open(dir.Path("s"), other).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ((*NearDuplicateStream::OpenExisting(dir.Path("s")))->config(), StreamConfig{});
  EXPECT_EQ(NearDuplicateStream::OpenExisting(dir.Path("none")).status().code(),
            StatusCode::kNotFound);
}

// A StreamSchemeMemo shared by opens remembers one scheme per config: a
// second stream of a config seen, and a reopen, take it (no choice made);
// another config adds one. The answers are those of streams opened without
// it.
TEST(DurableStreamTest, SharedSchemeMemoChoosesEachConfigOnce) {
  TempDir dir;
  StreamOpenOptions options;
  options.schemes = std::make_shared<StreamSchemeMemo>();
  const internal::StreamSchemes& schemes = internal::SchemesOf(*options.schemes);
  StreamConfig simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  const std::vector<std::string> texts = PlantedTexts(60, 4);
  auto answers = [&](const std::string& name, const StreamConfig& config,
                     const StreamOpenOptions& open) {
    auto stream = std::move(NearDuplicateStream::Open(dir.Path(name), config, open)).value();
    return AddAll(*stream, texts, 0, texts.size());
  };
  const std::vector<StreamAnswer> minhash_answers = answers("a", StreamConfig{}, options);
  EXPECT_EQ(options.schemes->size(), 1u);
  EXPECT_EQ(schemes.choices(), 1u);
  EXPECT_EQ(answers("b", StreamConfig{}, options), minhash_answers);
  EXPECT_EQ(options.schemes->size(), 1u);
  EXPECT_EQ(schemes.choices(), 1u);
  EXPECT_EQ(answers("c", simhash, options), answers("c-alone", simhash, StreamOpenOptions{}));
  EXPECT_EQ(options.schemes->size(), 2u);
  EXPECT_EQ(schemes.choices(), 2u);
  EXPECT_EQ(answers("d", StreamConfig{}, StreamOpenOptions{}), minhash_answers);
  EXPECT_EQ(schemes.choices(), 2u);
  // Reopening a stream of a config seen: its stored answers, nothing added.
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.Path("a"), options)).value();
  EXPECT_EQ(*reopened->Get(PlantedId(7)), minhash_answers[7]);
  EXPECT_EQ(options.schemes->size(), 2u);
  EXPECT_EQ(schemes.choices(), 2u);
}

// The heap a std::string of `size` bytes holds beyond the object (libstdc++:
// none within its 15-byte buffer, else exactly size + 1 for a copy).
uint64_t TextHeap(const std::string& text) { return text.size() > 15 ? text.size() + 1 : 0; }

// keep_texts: the texts of the documents in the window, and only those,
// are held (memory counts exactly their bytes), logged, snapshotted and
// read back after reopening; decisions are those of a stream without texts.
TEST(DurableStreamTest, KeptTextsFollowTheWindowAndSurviveReopening) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(60, 15);
  StreamConfig config;
  config.max_documents = 10;
  config.keep_texts = true;
  StreamConfig without = config;
  without.keep_texts = false;
  StreamOpenOptions options;
  options.snapshot_log_bytes = 40 << 10;  // a few snapshots among the adds
  options.background_snapshots = false;   // counted below: done by the writers
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  auto plain = std::move(NearDuplicateStream::Create(without)).value();
  EXPECT_EQ(AddAll(*stream, texts, 0, 60), AddAll(*plain, texts, 0, 60));
  EXPECT_GT(stream->Stats().snapshots, 0u);
  auto expect_window = [&](const NearDuplicateStream& s) {
    uint64_t heap = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      Result<std::string> text = s.Text(PlantedId(i));
      if (i < 50) {
        EXPECT_EQ(text.status().code(), StatusCode::kNotFound) << i;
      } else {
        ASSERT_TRUE(text.ok()) << text.status();
        EXPECT_EQ(*text, texts[i]);
        heap += TextHeap(texts[i]);
      }
    }
    EXPECT_EQ(s.Stats().documents, 10u);
    EXPECT_EQ(s.Stats().memory_bytes, plain->Stats().memory_bytes + heap);
  };
  expect_window(*stream);
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  EXPECT_TRUE(reopened->config().keep_texts);
  expect_window(*reopened);
  // Removed: gone with its text.
  ASSERT_TRUE(reopened->Remove(PlantedId(55)).ok());
  EXPECT_EQ(reopened->Text(PlantedId(55)).status().code(), StatusCode::kNotFound);
  // Another config (texts or not) is another stream.
  reopened.reset();
  EXPECT_EQ(NearDuplicateStream::Open(dir.path(), without).status().code(),
            StatusCode::kAlreadyExists);
  // Without keep_texts there is no text to give.
  EXPECT_EQ(plain->Text(PlantedId(59)).status().code(), StatusCode::kFailedPrecondition);
}

// Logs and snapshots of format version 1 (before keep_texts) are read: a
// version 1 header is the version 2 one without the keep_texts byte.
TEST(DurableStreamTest, VersionOneHeadersAreRead) {
  internal::StreamHeader header;
  header.config.preset = "default";
  header.config.max_documents = 7;
  header.next_seq = 3;
  const std::string v2 = internal::EncodeHeader(header);
  // type, version, method, threshold, max_distance, preset, window, cap.
  const size_t keep_texts_at = 1 + 4 + 1 + 8 + 8 + (4 + 7) + 8 + 8;
  std::string v1 = v2.substr(0, keep_texts_at) + v2.substr(keep_texts_at + 1);
  v1[1] = 1;
  Result<internal::StreamHeader> decoded = internal::DecodeHeader(v1);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->config, header.config);
  EXPECT_EQ(decoded->next_seq, 3u);
  // The version 2 header with the byte removed is malformed, and a later
  // version is refused.
  std::string short_v2 = v1;
  short_v2[1] = 2;
  EXPECT_EQ(internal::DecodeHeader(short_v2).status().code(), StatusCode::kDataLoss);
  std::string v3 = v2;
  v3[1] = 3;
  EXPECT_THAT(internal::DecodeHeader(v3).status().message(), HasSubstr("version 3"));
}

// The only log that holds records (since session 18 the next one exists
// too, empty, made ahead of its roll-over: the tests below tear or flip the
// log before it, which recovery cuts as it cuts the newest).
std::string OnlyLog(const TempDir& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("log-", 0) == 0 && entry.file_size() > 0) {
      return entry.path().string();
    }
  }
  return "";
}

TEST(DurableStreamTest, ATornTailIsCutAndReported) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(20, 10);
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
    AddAll(*stream, texts, 0, texts.size());
  }
  const std::string log = OnlyLog(dir);
  const std::string bytes = ReadFileBytes(log);
  // Cut into the last record.
  test_support::TempDir scratch;
  std::filesystem::resize_file(log, bytes.size() - 7);
  auto stream = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  EXPECT_GT(stream->recovery().truncated_bytes, 0u);
  EXPECT_THAT(stream->recovery().truncation, HasSubstr("cut short"));
  EXPECT_EQ(stream->Stats().documents, 19u);
  EXPECT_EQ(stream->Get(PlantedId(19)).status().code(), StatusCode::kNotFound);
  // The stream goes on: adding the lost document again gives its answer.
  auto memory = std::move(NearDuplicateStream::Create({})).value();
  const std::vector<StreamAnswer> expected = AddAll(*memory, texts, 0, texts.size());
  EXPECT_EQ(*stream->Add(PlantedId(19), texts[19], 19), expected[19]);
  stream.reset();
  EXPECT_EQ(NearDuplicateStream::OpenExisting(dir.path()).value()->recovery().truncated_bytes, 0u);
}

TEST(DurableStreamTest, AFlippedByteIsDetected) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(20, 11);
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
    AddAll(*stream, texts, 0, texts.size());
  }
  const std::string log = OnlyLog(dir);
  std::string bytes = ReadFileBytes(log);
  const size_t middle = bytes.size() / 2;
  bytes[middle] = static_cast<char>(bytes[middle] ^ 0x10);
  dir.Write(std::filesystem::path(log).filename().string(), bytes);
  auto stream = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  EXPECT_THAT(stream->recovery().truncation, HasSubstr("checksum mismatch"));
  EXPECT_GT(stream->recovery().truncated_bytes, 0u);
  EXPECT_LT(stream->Stats().documents, 20u);
  EXPECT_GT(stream->Stats().documents, 0u);
}

TEST(DurableStreamTest, ACorruptSnapshotIsDataLoss) {
  TempDir dir;
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
    AddAll(*stream, PlantedTexts(5, 12), 0, 5);
    ASSERT_TRUE(stream->Snapshot().ok());
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("snapshot-", 0) != 0) continue;
    std::string bytes = ReadFileBytes(entry.path().string());
    bytes[bytes.size() - 3] ^= 1;
    dir.Write(name, bytes);
  }
  EXPECT_EQ(NearDuplicateStream::OpenExisting(dir.path()).status().code(), StatusCode::kDataLoss);
}

TEST(DurableStreamTest, ConcurrentAddsShareSyncsAndAgreeWithASerialReplay) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(200, 13);
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < texts.size(); i += kThreads) {
        Result<StreamAnswer> answer = stream->Add(PlantedId(i), texts[i], 0);
        EXPECT_TRUE(answer.ok()) << answer.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  StreamStats stats = stream->Stats();
  EXPECT_EQ(stats.added, texts.size());
  EXPECT_LE(stats.log_syncs, texts.size());
  // Every answer is one the leader rule gives for the log's order: each
  // near-duplicate's leader is a kept document, and reopening agrees.
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  for (size_t i = 0; i < texts.size(); ++i) {
    StreamAnswer answer = *reopened->Get(PlantedId(i));
    if (answer.status == StreamStatus::kNearDuplicate) {
      EXPECT_EQ(reopened->Get(answer.of)->status, StreamStatus::kNew);
    }
  }
}

// A full disk, simulated by a file size limit (RLIMIT_FSIZE: writes past it
// fail with EFBIG once SIGXFSZ is ignored): the add fails with
// ResourceExhausted, nothing is stored, and the stream goes on once there is
// room again.
TEST(DurableStreamTest, AFullDiskFailsTheAddAndLeavesTheStreamConsistent) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(8, 14);
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
  AddAll(*stream, texts, 0, 6);
  Result<StreamAnswer> full = InternalError("not run");
  {
    // Less than one more record.
    test_support::ScopedFileSizeLimit limit(stream->Stats().log_bytes + 100);
    full = stream->Add(PlantedId(6), texts[6], 6);
  }
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
  EXPECT_EQ(stream->Get(PlantedId(6)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(stream->Stats().documents, 6u);
  // Room again: the same add succeeds, and the log holds whole records only.
  AddAll(*stream, texts, 6, 8);
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  EXPECT_EQ(reopened->Stats().documents, 8u);
  auto memory = std::move(NearDuplicateStream::Create({})).value();
  const std::vector<StreamAnswer> expected = AddAll(*memory, texts, 0, 8);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(*reopened->Get(PlantedId(i)), expected[i]);
}

// Session 18's review: a single add is applied before it is written, so at
// the window's cap it evicts the oldest document first; when the write
// then fails (a full disk), the state is reloaded from the files and the
// evicted document is back. Several such adds in a row, then one whose
// record is the first of a log just rolled over to (the reload reads up to
// that empty log). Reopened, the stream holds exactly the acknowledged adds.
TEST(DurableStreamTest, AFullDiskAtTheCapBringsTheEvictedDocumentBack) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(60, 16);
  StreamConfig config;
  config.max_documents = 5;
  StreamOpenOptions options;
  options.snapshot_log_bytes = 4 << 10;  // a roll-over every few adds
  options.background_snapshots = false;
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  auto memory = std::move(NearDuplicateStream::Create(config)).value();
  std::vector<StreamAnswer> expected;
  auto add_both = [&](size_t begin, size_t end) {
    AddAll(*stream, texts, begin, end);
    for (const StreamAnswer& answer : AddAll(*memory, texts, begin, end)) {
      expected.push_back(answer);
    }
  };
  auto expect_as_memory = [&](size_t added) {
    EXPECT_EQ(stream->Stats().documents, memory->Stats().documents);
    EXPECT_EQ(stream->Stats().evicted, memory->Stats().evicted);
    for (size_t i = 0; i < added; ++i) {
      Result<StreamAnswer> got = stream->Get(PlantedId(i));
      Result<StreamAnswer> want = memory->Get(PlantedId(i));
      ASSERT_EQ(got.ok(), want.ok()) << i;
      if (got.ok()) {
        EXPECT_EQ(*got, *want) << i;
      }
    }
  };
  add_both(0, 6);  // at the cap: the first document is evicted
  size_t next = 6;
  {
    test_support::ScopedFileSizeLimit limit(stream->Stats().log_bytes + 50);
    for (size_t k = 0; k < 3; ++k) {
      Result<StreamAnswer> full = stream->Add(PlantedId(next + k), texts[next + k], 100);
      EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
    }
  }
  expect_as_memory(next + 3);
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Add until the newest log is empty: the next record starts it.
  auto newest_log_is_empty = [&] {
    uint64_t newest = 0;
    uint64_t bytes = 1;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("log-", 0) != 0) continue;
      const uint64_t generation = std::stoull(name.substr(4));
      if (generation >= newest) {
        newest = generation;
        bytes = entry.file_size();
      }
    }
    return newest > 0 && bytes == 0;
  };
  while (!newest_log_is_empty()) {
    ASSERT_LT(next, texts.size() - 4);
    add_both(next, next + 1);
    ++next;
  }
  {
    test_support::ScopedFileSizeLimit limit(50);
    Result<StreamAnswer> full = stream->Add(PlantedId(next), texts[next], 100);
    EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
  }
  expect_as_memory(next + 1);
  // Room again: the same add succeeds.
  add_both(next, next + 4);
  next += 4;
  expect_as_memory(next);
  stream.reset();
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  EXPECT_EQ(reopened->Stats().documents, memory->Stats().documents);
  for (size_t i = 0; i < next; ++i) {
    Result<StreamAnswer> got = reopened->Get(PlantedId(i));
    Result<StreamAnswer> want = memory->Get(PlantedId(i));
    ASSERT_EQ(got.ok(), want.ok()) << i;
    if (got.ok()) {
      EXPECT_EQ(*got, *want) << i;
    }
  }
}

}  // namespace
}  // namespace neardup

namespace neardup::internal {
namespace {

// StreamState::Store inserts the id first (one id-table operation) and takes
// it out again when the index refuses the document: a refused log record
// leaves nothing behind, and the same id can then be stored.
TEST(StreamStateStoreTest, ARefusedRecordLeavesItsIdAbsent) {
  StreamConfig config;  // MinHash
  Result<StreamState> state = StreamState::Create(config);
  ASSERT_TRUE(state.ok()) << state.status();
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      CreateCpuFingerprinter(state->recipe(), SketchesForNearDuplicates(state->options()));
  ASSERT_TRUE(fingerprinter.ok()) << fingerprinter.status();
  Fingerprint fingerprint;
  ASSERT_TRUE((*fingerprinter)->Compute(test_support::PlantedTexts(1, 7)[0], &fingerprint).ok());
  const StreamDecision decision = state->Decide(fingerprint, 100);
  ASSERT_EQ(decision.status, StreamStatus::kNew);

  StreamDoc bad = state->MakeDoc("a", 100, decision, fingerprint);
  bad.fingerprint.kvalue_minhash.values.pop_back();  // the wrong size for the LSH index
  EXPECT_EQ(state->ApplyAdd(std::move(bad)).code(), StatusCode::kDataLoss);
  EXPECT_EQ(state->Find("a"), nullptr);

  ASSERT_TRUE(state->ApplyAdd(state->MakeDoc("a", 100, decision, fingerprint)).ok());
  ASSERT_NE(state->Find("a"), nullptr);
  Status twice = state->ApplyAdd(state->MakeDoc("a", 101, decision, fingerprint));
  EXPECT_EQ(twice.code(), StatusCode::kDataLoss);
  EXPECT_THAT(twice.message(), ::testing::HasSubstr("twice"));
  // The first one is still there, and still matched.
  EXPECT_EQ(state->Find("a")->time, 100);
  EXPECT_EQ(state->Decide(fingerprint, 102).status, StreamStatus::kNearDuplicate);
}

// RecordBytes (the rotation policy's measure of the live state, session 14)
// equals the bytes of the add records a snapshot of that moment writes,
// through adds of kept documents (with and without texts), near-duplicates,
// documents without features, evictions by time and by the cap, and
// removes: the oracle is AppendSnapshotRecords itself. A count that missed
// an erase (or counted the text twice) fails it.
TEST(StreamStateStoreTest, RecordBytesAreTheBytesOfASnapshotsRecords) {
  for (bool keep_texts : {false, true}) {
    StreamConfig config;  // MinHash
    config.window_seconds = 100;
    config.max_documents = 120;
    config.keep_texts = keep_texts;
    Result<StreamState> state = StreamState::Create(config);
    ASSERT_TRUE(state.ok()) << state.status();
    Result<std::unique_ptr<Fingerprinter>> fingerprinter =
        CreateCpuFingerprinter(state->recipe(), SketchesForNearDuplicates(state->options()));
    ASSERT_TRUE(fingerprinter.ok()) << fingerprinter.status();
    const std::vector<std::string> texts = test_support::PlantedTexts(300, 41);
    std::mt19937_64 random(14);
    auto snapshot_records = [&] {
      std::string out;
      state->BeginSnapshot();
      EXPECT_TRUE(state->AppendSnapshotRecords(SIZE_MAX, &out));
      state->EndSnapshot();
      return out.size();
    };
    EXPECT_EQ(state->RecordBytes(), 0u);
    uint64_t erased = 0;
    uint64_t near_duplicates = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      // Every 37th text empty (no features), every 4th a copy of a recent one.
      const std::string text = i % 37 == 5 ? std::string() : i % 4 == 3 ? texts[i - 3] : texts[i];
      Fingerprint fingerprint;
      ASSERT_TRUE((*fingerprinter)->Compute(text, &fingerprint).ok());
      // One document a second (the window evicts), then three (the cap does).
      const int64_t time = static_cast<int64_t>(i < 150 ? i : 150 + (i - 150) / 3);
      const StreamDecision decision = state->Decide(fingerprint, time);
      near_duplicates += decision.status == StreamStatus::kNearDuplicate;
      StreamDoc doc =
          state->MakeDoc(test_support::PlantedId(i), time, decision, std::move(fingerprint));
      if (keep_texts) doc.text = text;
      ASSERT_TRUE(state->ApplyAdd(std::move(doc)).ok());
      if (i % 9 == 4) {
        erased += state->ApplyRemove(test_support::PlantedId(random() % (i + 1))).ok();
      }
      if (i % 13 == 0) {
        ASSERT_EQ(state->RecordBytes(), snapshot_records()) << i;
      }
    }
    EXPECT_EQ(state->RecordBytes(), snapshot_records());
    StreamStats stats;
    state->FillStats(&stats);
    EXPECT_GT(stats.evicted, 100u);  // the cap and the window both evicted
    EXPECT_GT(erased, 5u);
    EXPECT_GT(near_duplicates, 30u);
  }
}

// A stream's add hashes a new id once, in its first lock, and may use the
// hash after ReloadLocked replaced the state it came from (session 13):
// every StreamState hashes ids under the process key, so a hash taken from
// one state is valid for another, and the hashed calls on the second with
// the first's hashes agree with the plain ones (a per-state key would fail
// the first EXPECT).
TEST(StreamStateStoreTest, AnIdHashFromOneStateIsValidForItsReplacement) {
  const StreamConfig config;
  Result<StreamState> first = StreamState::Create(config);
  Result<StreamState> second = StreamState::Create(config);  // the reloaded one
  Result<StreamState> plain = StreamState::Create(config);
  ASSERT_TRUE(first.ok() && second.ok() && plain.ok());
  std::mt19937_64 random(13);
  uint64_t seq = 0;
  for (int i = 0; i < 4000; ++i) {
    const uint64_t n = random() % 2500;
    const std::string id =
        n % 4 == 0 ? "news/2026/11/27/a-long-article-slug-" + std::to_string(n) : std::to_string(n);
    const uint64_t hash = first->IdHash(id);
    ASSERT_EQ(hash, second->IdHash(id)) << id;
    const StreamDoc* found = second->FindHashed(id, hash);
    const StreamDoc* found_plain = plain->Find(id);
    ASSERT_EQ(found != nullptr, found_plain != nullptr) << id;
    StreamDoc doc;  // a near-duplicate: no sketches to index
    doc.seq = seq;
    doc.time = 100;
    doc.id = id;
    doc.status = StreamStatus::kNearDuplicate;
    doc.of = "leader";
    if (found != nullptr) {
      EXPECT_EQ(found->seq, found_plain->seq) << id;
      EXPECT_EQ(second->ApplyAddHashed(doc, hash).code(), StatusCode::kDataLoss) << id;
      EXPECT_EQ(plain->ApplyAdd(doc).code(), StatusCode::kDataLoss) << id;
    } else {
      ASSERT_TRUE(second->ApplyAddHashed(doc, hash).ok()) << id;
      ASSERT_TRUE(plain->ApplyAdd(doc).ok()) << id;
      ++seq;
    }
    if (i % 7 == 6) {  // removals, so the tables shift entries back
      const std::string gone = std::to_string(random() % 2500);
      EXPECT_EQ(second->ApplyRemove(gone).code(), plain->ApplyRemove(gone).code()) << gone;
    }
  }
  EXPECT_GT(seq, 1000u);
  for (uint64_t n = 0; n < 2500; ++n) {
    const std::string id = std::to_string(n);
    const StreamDoc* found = second->FindHashed(id, first->IdHash(id));
    const StreamDoc* found_plain = plain->Find(id);
    ASSERT_EQ(found != nullptr, found_plain != nullptr) << id;
    if (found != nullptr) {
      EXPECT_EQ(found->seq, found_plain->seq) << id;
    }
  }
}

}  // namespace
}  // namespace neardup::internal

namespace neardup::internal {
namespace {

// StreamIdIndex against std::unordered_map: inserts (growing every table
// from empty several times), erases (backward shift inside runs that wrap
// around a table's end), re-inserts and lookups, with ids inside and past
// std::string's small buffer.
TEST(StreamIdIndexTest, AgreesWithAnUnorderedMapThroughGrowthAndErases) {
  StreamIdIndex index;
  std::unordered_map<std::string, uint64_t> oracle;
  std::mt19937_64 random(11);
  auto id_of = [](uint64_t n) {
    return n % 3 == 0 ? "a-long-document-identifier-" + std::to_string(n) : std::to_string(n);
  };
  uint64_t seq = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 6000; ++i) {  // ~94 ids a table: each grows 16 -> 128
      const std::string id = id_of(random() % 20000);
      const bool inserted = index.Insert(id, seq);
      EXPECT_EQ(inserted, oracle.emplace(id, seq).second) << id;
      ++seq;
    }
    for (int i = 0; i < 5000; ++i) {
      const std::string id = id_of(random() % 20000);
      EXPECT_EQ(index.Erase(id), oracle.erase(id) == 1) << id;
    }
    ASSERT_EQ(index.size(), oracle.size());
    for (uint64_t n = 0; n < 20000; ++n) {
      const std::string id = id_of(n);
      const uint64_t* found = index.Find(id);
      const auto it = oracle.find(id);
      ASSERT_EQ(found != nullptr, it != oracle.end()) << id;
      if (found != nullptr) {
        EXPECT_EQ(*found, it->second) << id;
      }
    }
  }
  for (const auto& [id, ignored] : oracle) EXPECT_TRUE(index.Erase(id)) << id;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(id_of(3)), nullptr);
  EXPECT_TRUE(index.Insert(id_of(3), 7));
  EXPECT_EQ(*index.Find(id_of(3)), 7u);
}

// The add record's layout (stream_record.h) written field by field, a byte
// at a time: the encoder of sessions 1-12, the oracle of the in-place one.
std::string ReferenceAddRecord(const StreamDoc& doc) {
  std::string out;
  auto u8 = [&](uint8_t v) { out.push_back(static_cast<char>(v)); };
  auto un = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& v) {
    un(v.size(), 4);
    out += v;
  };
  u8(1);
  un(doc.seq, 8);
  un(static_cast<uint64_t>(doc.time), 8);
  str(doc.id);
  u8(doc.status == StreamStatus::kNearDuplicate ? 1 : 0);
  str(doc.of);
  uint64_t similarity;
  std::memcpy(&similarity, &doc.similarity, 8);
  un(similarity, 8);
  u8(doc.kept ? 1 : 0);
  if (doc.kept) {
    const Fingerprint& fp = doc.fingerprint;
    un(fp.num_tokens, 8);
    un(fp.simhash, 8);
    un(fp.minhash.k, 4);
    un(fp.minhash.values.size(), 4);
    for (uint64_t v : fp.minhash.values) un(v, 8);
    u8(fp.kvalue_minhash.empty ? 1 : 0);
    un(fp.kvalue_minhash.values.size(), 4);
    for (uint64_t v : fp.kvalue_minhash.values) un(v, 8);
    un(fp.chunks.size(), 4);
    for (uint32_t v : fp.chunks) un(v, 4);
  }
  if (!doc.text.empty()) str(doc.text);
  return out;
}

// An add record written in place (EncodeAddTo, AppendFramedAdd: session 13)
// is byte for byte the record of the layout (the byte-at-a-time encoder
// above), framed as AppendLogRecord frames it: kept and not, with and
// without a text, empty sketches, and it decodes back.
TEST(StreamRecordTest, AddRecordsWrittenInPlaceEqualTheEncodedOnes) {
  std::vector<StreamDoc> docs(4);
  docs[0].seq = 7;
  docs[0].time = -3;
  docs[0].id = "kept-with-sketches";
  docs[0].kept = true;
  docs[0].fingerprint.num_tokens = 420;
  docs[0].fingerprint.simhash = 0x0123456789abcdefULL;
  docs[0].fingerprint.minhash.k = 128;
  for (uint64_t v = 0; v < 128; ++v) {
    docs[0].fingerprint.minhash.values.push_back(v * 0x9e3779b97f4a7c15ULL);
    docs[0].fingerprint.kvalue_minhash.values.push_back(~v);
  }
  docs[0].fingerprint.kvalue_minhash.empty = false;
  for (uint32_t c = 0; c < 500; ++c) docs[0].fingerprint.chunks.push_back(c * 2654435761u);
  docs[1].seq = 8;
  docs[1].time = 1796000000;
  docs[1].id = "near";
  docs[1].status = StreamStatus::kNearDuplicate;
  docs[1].of = "kept-with-sketches";
  docs[1].similarity = 0.875;
  docs[2] = docs[0];
  docs[2].seq = 9;
  docs[2].text = std::string(3000, 't');
  docs[3].seq = 10;
  docs[3].id = "k";
  docs[3].kept = true;  // no features: empty sketches
  std::string framed = "prefix";
  std::string expected = "prefix";
  for (const StreamDoc& doc : docs) {
    const std::string record = EncodeAdd(doc);
    EXPECT_EQ(record, ReferenceAddRecord(doc)) << doc.id;
    EXPECT_EQ(record.size(), EncodedAddBytes(doc));
    std::string in_place(EncodedAddBytes(doc), '\0');
    EncodeAddTo(doc, in_place.data(), in_place.size());
    EXPECT_EQ(in_place, record) << doc.id;
    EXPECT_EQ(AppendFramedAdd(doc, &framed), record.size());
    AppendLogRecord(record, &expected);
    Result<StreamDoc> decoded = DecodeAdd(record);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(EncodeAdd(*decoded), record) << doc.id;  // every field back
    EXPECT_EQ(decoded->id, doc.id);
    EXPECT_EQ(decoded->text, doc.text);
  }
  EXPECT_EQ(framed, expected);
}

std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

// Known answers of the frozen add record (format version 2, stream_record.h;
// the bytes written from the layout, and what main f8bbd02's EncodeAdd, the
// encoder before the in-place one, returns for these documents): a kept
// document (k = 2, 2 chunks) and a near-duplicate with a text, from
// EncodeAdd and from AppendFramedAdd, and decoded back to the same record.
TEST(StreamRecordTest, AddRecordsMatchTheirFrozenBytes) {
  StreamDoc kept;
  kept.seq = 1;
  kept.time = 1796000000;
  kept.id = "a";
  kept.kept = true;
  kept.fingerprint.num_tokens = 3;
  kept.fingerprint.simhash = 0x0123456789abcdefULL;
  kept.fingerprint.minhash.k = 2;
  kept.fingerprint.minhash.values = {5, 6};
  kept.fingerprint.kvalue_minhash.empty = false;
  kept.fingerprint.kvalue_minhash.values = {7, 8};
  kept.fingerprint.chunks = {9, 0xfffffffeu};
  StreamDoc near;
  near.seq = 2;
  near.time = -1;
  near.id = "b";
  near.status = StreamStatus::kNearDuplicate;
  near.of = "a";
  near.similarity = 0.875;
  near.text = "hi";
  const std::string kept_record = FromHex(
      "01010000000000000000c90c6b00000000010000006100000000000000000000"
      "000000010300000000000000efcdab8967452301020000000200000005000000"
      "0000000006000000000000000002000000070000000000000008000000000000"
      "000200000009000000feffffff");
  const std::string near_record = FromHex(
      "010200000000000000ffffffffffffffff010000006201010000006100000000"
      "0000ec3f00020000006869");
  ASSERT_EQ(kept_record.size(), 109u);
  ASSERT_EQ(near_record.size(), 43u);
  for (const auto& [doc, record] :
       {std::pair(&kept, &kept_record), std::pair(&near, &near_record)}) {
    EXPECT_EQ(EncodeAdd(*doc), *record) << doc->id;
    std::string framed;
    EXPECT_EQ(AppendFramedAdd(*doc, &framed), record->size());
    std::string expected;
    AppendLogRecord(*record, &expected);
    EXPECT_EQ(framed, expected) << doc->id;
    Result<StreamDoc> decoded = DecodeAdd(*record);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(EncodeAdd(*decoded), *record) << doc->id;
  }
}

}  // namespace
}  // namespace neardup::internal
