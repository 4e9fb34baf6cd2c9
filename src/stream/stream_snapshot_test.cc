// Snapshots written a piece at a time while adds, evictions and removes go
// on (StreamOpenOptions::snapshot_step_bytes): at every moment the files
// reopen to exactly the live stream, whether a snapshot is in progress, just
// finished, or abandoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
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

TEST(StreamSnapshotInPiecesTest, EveryMomentReopensToTheLiveStream) {
  const std::vector<std::string> texts = PlantedTexts(240, 41);
  TempDir dir;
  TempDir copy;
  // SimHash: reopening a MinHash stream chooses its LSH scheme again (tens of
  // ms, seconds under ASan); what is tested here does not depend on the method.
  StreamConfig config;
  config.method = NearDuplicateMethod::kSimHash;
  config.window_seconds = 300;  // evicts by time during snapshots ...
  config.max_documents = 60;    // ... and by the cap
  StreamOpenOptions options;
  options.sync = false;
  options.snapshot_log_bytes = 2 << 10;  // ~30 adds (records of ~70 bytes)
  options.snapshot_grows_with_state = false;
  options.snapshot_step_bytes = 1;  // a few records per operation: many operations per snapshot
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
  int snapshot_files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir.path())) {
    snapshot_files += entry.path().filename().string().rfind("snapshot-", 0) == 0;
  }
  EXPECT_EQ(snapshot_files, 1);
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

}  // namespace
}  // namespace neardup
