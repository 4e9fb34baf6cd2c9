// Snapshots written a piece at a time while adds, evictions and removes go
// on (StreamOpenOptions::snapshot_step_bytes): at every moment the files
// reopen to exactly the live stream, whether a snapshot is in progress, just
// finished, or abandoned.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "neardup/stream.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;
using test_support::PlantedId;
using test_support::PlantedTexts;
using test_support::TempDir;

bool HasSnapshotInProgress(const std::string& dir) {
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tmp") return true;
  }
  return false;
}

// The files of `dir` as they are now, opened in a copy (the live stream
// keeps writing to its own).
std::unique_ptr<NearDuplicateStream> OpenCopy(const std::string& dir, const TempDir& copy) {
  fs::remove_all(copy.path());
  fs::copy(dir, copy.path(), fs::copy_options::recursive);
  StreamOpenOptions options;
  options.sync = false;
  Result<std::unique_ptr<NearDuplicateStream>> opened =
      NearDuplicateStream::OpenExisting(copy.path(), options);
  EXPECT_TRUE(opened.ok()) << opened.status();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

void ExpectSameStream(const NearDuplicateStream& live, const NearDuplicateStream& reopened,
                      const std::vector<std::string>& ids) {
  SCOPED_TRACE("after " + std::to_string(live.Stats().added) + " adds");
  for (const std::string& id : ids) {
    Result<StreamAnswer> a = live.Get(id);
    Result<StreamAnswer> b = reopened.Get(id);
    ASSERT_EQ(a.ok(), b.ok()) << id;
    if (a.ok()) {
      EXPECT_EQ(*a, *b) << id;
    }
  }
  // The counts (memory_bytes is not compared: index capacity follows the
  // history).
  auto counts = [](const StreamStats& stats) {
    return std::tuple(stats.documents, stats.kept, stats.added, stats.evicted, stats.removed,
                      stats.oldest_time, stats.newest_time);
  };
  EXPECT_EQ(counts(live.Stats()), counts(reopened.Stats()));
}

// A SimHash stream (what these tests check does not depend on the
// method) with a small window, by time and by count.
StreamConfig SmallWindowConfig(size_t max_documents) {
  StreamConfig config;
  config.method = NearDuplicateMethod::kSimHash;
  config.window_seconds = 300;
  config.max_documents = max_documents;
  return config;
}

// No fsync, and a snapshot every `log_bytes` of log whatever the state's
// size, so that a test's few hundred adds make many snapshots.
StreamOpenOptions FrequentSnapshots(uint64_t log_bytes) {
  StreamOpenOptions options;
  options.sync = false;
  options.snapshot_log_bytes = log_bytes;
  options.snapshot_grows_with_state = false;
  return options;
}

// Files of `dir` whose names start with `prefix`.
int CountFiles(const std::string& dir, const std::string& prefix) {
  int count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    count += entry.path().filename().string().rfind(prefix, 0) == 0;
  }
  return count;
}

// Whether `dir` holds a log older than its newest snapshot (one the
// snapshot's finish deletes). Not a count of logs: the next log may exist,
// empty, made ahead of its roll-over (session 18).
bool HasLogBeforeTheSnapshot(const std::string& dir) {
  uint64_t snapshot = 0;
  std::vector<uint64_t> logs;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 29 && name.rfind("snapshot-", 0) == 0) {
      snapshot = std::max<uint64_t>(snapshot, std::stoull(name.substr(9)));
    } else if (name.size() == 24 && name.rfind("log-", 0) == 0) {
      logs.push_back(std::stoull(name.substr(4)));
    }
  }
  return std::any_of(logs.begin(), logs.end(), [&](uint64_t log) { return log < snapshot; });
}

TEST(StreamSnapshotInPiecesTest, EveryMomentReopensToTheLiveStream) {
  const std::vector<std::string> texts = PlantedTexts(240, 41);
  TempDir dir;
  TempDir copy;
  // Evicts by time and by the cap during snapshots.
  const StreamConfig config = SmallWindowConfig(60);
  StreamOpenOptions options = FrequentSnapshots(2 << 10);  // ~30 adds (records of ~70 bytes)
  options.snapshot_step_bytes = 1;  // a few records per operation: many operations per snapshot
  options.background_snapshots = false;  // the writers' pieces only: reopens mid-snapshot
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  std::mt19937_64 random(5);
  std::vector<std::string> ids;
  int checked_in_progress = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    ids.push_back(PlantedId(i));
    const int64_t time = static_cast<int64_t>(i * 3) - static_cast<int64_t>(random() % 20);
    ASSERT_TRUE(stream->Add(ids.back(), texts[i], time).ok());
    if (i % 11 == 10) {
      // A remove of a document the snapshot in progress may not have reached.
      const Status removed = stream->Remove(ids[i - random() % std::min<size_t>(i + 1, 40)]);
      EXPECT_TRUE(removed.ok() || removed.code() == StatusCode::kNotFound) << removed;
    }
    if (i % 12 == 11) {
      checked_in_progress += HasSnapshotInProgress(dir.path());
      std::unique_ptr<NearDuplicateStream> reopened = OpenCopy(dir.path(), copy);
      ASSERT_NE(reopened, nullptr);
      ExpectSameStream(*stream, *reopened, ids);
    }
  }
  const StreamStats stats = stream->Stats();
  EXPECT_GT(stats.evicted, 100u);
  EXPECT_GT(stats.snapshots, 5u);
  EXPECT_GT(checked_in_progress, 3) << "of " << texts.size() / 12;

  // Snapshot() completes one in progress and writes one of now: a single
  // snapshot file, no temporary one.
  ASSERT_TRUE(stream->Snapshot().ok());
  EXPECT_FALSE(HasSnapshotInProgress(dir.path()));
  EXPECT_EQ(CountFiles(dir.path(), "snapshot-"), 1);
  std::unique_ptr<NearDuplicateStream> reopened = OpenCopy(dir.path(), copy);
  ASSERT_NE(reopened, nullptr);
  ExpectSameStream(*stream, *reopened, ids);

  // A stream closed in the middle of a snapshot removes its temporary file
  // and reopens to the same state from the older files.
  for (size_t i = 0; i < 200 && !HasSnapshotInProgress(dir.path()); ++i) {
    ids.push_back("late" + std::to_string(i));
    ASSERT_TRUE(stream->Add(ids.back(), texts[i], 2000 + static_cast<int64_t>(i)).ok());
  }
  ASSERT_TRUE(HasSnapshotInProgress(dir.path()));
  reopened = OpenCopy(dir.path(), copy);
  ASSERT_NE(reopened, nullptr);
  ExpectSameStream(*stream, *reopened, ids);
  stream.reset();
  EXPECT_FALSE(HasSnapshotInProgress(dir.path()));
  auto closed = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  ExpectSameStream(*closed, *reopened, ids);
}

std::vector<Result<StreamAnswer>> StoredAnswers(const NearDuplicateStream& stream,
                                                const std::vector<std::string>& ids) {
  std::vector<Result<StreamAnswer>> answers;
  for (const std::string& id : ids) answers.push_back(stream.Get(id));
  return answers;
}

// `stream` (reopened) answers Get(ids[i]) as answers[i] (StoredAnswers of
// the stream before it was closed).
void ExpectStoredAnswers(const NearDuplicateStream& stream, const std::vector<std::string>& ids,
                         const std::vector<Result<StreamAnswer>>& answers) {
  for (size_t i = 0; i < ids.size(); ++i) {
    Result<StreamAnswer> answer = stream.Get(ids[i]);
    ASSERT_EQ(answer.ok(), answers[i].ok()) << ids[i];
    if (answer.ok()) {
      EXPECT_EQ(*answer, *answers[i]) << ids[i];
    }
  }
}

// Waits (up to 60 s: the snapshot thread runs only when the CPU is idle)
// until `dir` holds one snapshot, no log before it and no temporary file: the
// snapshot in progress finished and the older files deleted.
bool WaitForOneSnapshot(const std::string& dir) {
  for (int i = 0; i < 60000; ++i) {
    if (!HasSnapshotInProgress(dir) && CountFiles(dir, "snapshot-") == 1 &&
        !HasLogBeforeTheSnapshot(dir)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The snapshot thread (background_snapshots, the default) writes a snapshot
// and finishes it with no writer's help: the adds stop right after the one
// that starts a rotation, and with snapshot_step_bytes 1 the writers' share
// could not have written it. Adds, evictions and removes racing with the
// thread leave files that reopen to the live stream, and so does closing the
// stream while the thread writes.
TEST(StreamSnapshotInPiecesTest, TheSnapshotThreadFinishesSnapshotsWithoutWriters) {
  const std::vector<std::string> texts = PlantedTexts(240, 43);
  TempDir dir;
  TempDir copy;
  const StreamConfig config = SmallWindowConfig(60);
  StreamOpenOptions options = FrequentSnapshots(4 << 10);
  options.snapshot_step_bytes = 1;
  ASSERT_TRUE(options.background_snapshots);
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  std::vector<std::string> ids;
  size_t next = 0;
  // Until the log starts again: a rotation has begun.
  for (uint64_t log_bytes = 0; next < texts.size(); ++next) {
    ids.push_back(PlantedId(next));
    ASSERT_TRUE(stream->Add(ids.back(), texts[next], static_cast<int64_t>(next * 3)).ok());
    const uint64_t now = stream->Stats().log_bytes;
    if (now < log_bytes) break;
    log_bytes = now;
  }
  ASSERT_LT(next, texts.size());
  ASSERT_TRUE(WaitForOneSnapshot(dir.path()));
  EXPECT_EQ(stream->Stats().snapshots, 1u);
  std::unique_ptr<NearDuplicateStream> reopened = OpenCopy(dir.path(), copy);
  ASSERT_NE(reopened, nullptr);
  ExpectSameStream(*stream, *reopened, ids);

  std::mt19937_64 random(7);
  for (++next; next < texts.size(); ++next) {
    ids.push_back(PlantedId(next));
    const int64_t time = static_cast<int64_t>(next * 3) - static_cast<int64_t>(random() % 20);
    ASSERT_TRUE(stream->Add(ids.back(), texts[next], time).ok());
    if (next % 11 == 10) {
      const Status removed = stream->Remove(ids[next - random() % 40]);
      EXPECT_TRUE(removed.ok() || removed.code() == StatusCode::kNotFound) << removed;
    }
  }
  EXPECT_GT(stream->Stats().evicted, 100u);
  // The adds have stopped: whatever snapshot is in progress finishes.
  ASSERT_TRUE(WaitForOneSnapshot(dir.path()));
  EXPECT_GT(stream->Stats().snapshots, 1u);
  reopened = OpenCopy(dir.path(), copy);
  ASSERT_NE(reopened, nullptr);
  ExpectSameStream(*stream, *reopened, ids);
  // Closed at once after adds that start snapshots: the thread stops, the
  // files reopen to the same state.
  for (size_t i = 0; i < 120; ++i) {
    ids.push_back("late" + std::to_string(i));
    ASSERT_TRUE(stream->Add(ids.back(), texts[i], 2000 + static_cast<int64_t>(i)).ok());
  }
  const std::vector<Result<StreamAnswer>> answers = StoredAnswers(*stream, ids);
  const StreamStats before = stream->Stats();
  stream.reset();
  auto closed = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  ExpectStoredAnswers(*closed, ids, answers);
  const StreamStats after = closed->Stats();
  EXPECT_EQ(
      std::tuple(after.documents, after.kept, after.added, after.evicted, after.removed),
      std::tuple(before.documents, before.kept, before.added, before.evicted, before.removed));
}

// Adds that keep a CPU busy leave the snapshot thread (SCHED_IDLE) next to
// no time: the writers then write the pieces and finish the snapshots
// themselves, so snapshots keep completing (recovery stays bounded) however
// busy the stream is. This thread and the snapshot thread it starts share
// one CPU.
TEST(StreamSnapshotInPiecesTest, SnapshotsKeepCompletingOnABusyCpu) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(std::max(sched_getcpu(), 0), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const std::vector<std::string> texts = PlantedTexts(600, 47);
  TempDir dir;
  StreamConfig config;
  config.method = NearDuplicateMethod::kSimHash;  // see SmallWindowConfig
  config.max_documents = 80;
  const StreamOpenOptions options = FrequentSnapshots(4 << 10);
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    ids.push_back(PlantedId(i));
    ASSERT_TRUE(stream->Add(ids.back(), texts[i], static_cast<int64_t>(i)).ok());
  }
  // ~40 KB of log: a rotation every 4 KiB, each done within 2 KiB more.
  EXPECT_GE(stream->Stats().snapshots, 5u);
  const std::vector<Result<StreamAnswer>> answers = StoredAnswers(*stream, ids);
  stream.reset();
  ASSERT_EQ(sched_setaffinity(0, sizeof(before), &before), 0);
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  ExpectStoredAnswers(*reopened, ids, answers);
}

}  // namespace
}  // namespace neardup
