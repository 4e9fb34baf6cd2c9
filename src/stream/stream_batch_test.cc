// AddBatch / CheckBatch against the same documents given to Add / Check one
// by one: identical answers, state and log; and what a failed or torn batch
// write leaves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neardup/stream.h"
#include "neardup/write_ahead_log.h"
#include "support/file_size_limit.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using test_support::PlantedId;
using test_support::PlantedTexts;
using test_support::ScopedFileSizeLimit;
using test_support::TempDir;
using ::testing::HasSubstr;

// A stream of documents with planted near-duplicates (also inside one
// batch), ids repeated with other texts (inside a batch and across batches),
// times that go back and forth (so the window evicts in the middle of a
// batch) and empty texts.
std::vector<StreamDocument> MixedDocuments(const std::vector<std::string>& texts,
                                           std::vector<std::string>* ids) {
  std::mt19937_64 random(99);
  ids->clear();
  for (size_t i = 0; i < texts.size(); ++i) {
    const bool repeat = i > 0 && random() % 7 == 0;
    ids->push_back(repeat ? (*ids)[random() % i] : PlantedId(i));
  }
  std::vector<StreamDocument> documents;
  for (size_t i = 0; i < texts.size(); ++i) {
    const int64_t time = static_cast<int64_t>(i * 10) - static_cast<int64_t>(random() % 40);
    const std::string_view text = i % 50 == 3 ? std::string_view() : std::string_view(texts[i]);
    documents.push_back(StreamDocument{(*ids)[i], text, time});
  }
  return documents;
}

std::vector<StreamAnswer> AddOneByOne(NearDuplicateStream& stream,
                                      const std::vector<StreamDocument>& documents) {
  std::vector<StreamAnswer> answers;
  for (const StreamDocument& d : documents) {
    Result<StreamAnswer> answer = stream.Add(d.id, d.text, d.time);
    EXPECT_TRUE(answer.ok()) << answer.status();
    answers.push_back(answer.ok() ? *answer : StreamAnswer{});
  }
  return answers;
}

// Posts `documents` in batches of the sizes given in turn.
std::vector<StreamAnswer> AddInBatches(NearDuplicateStream& stream,
                                       const std::vector<StreamDocument>& documents,
                                       const std::vector<size_t>& sizes) {
  std::vector<StreamAnswer> answers;
  size_t next = 0;
  for (size_t turn = 0; next < documents.size(); ++turn) {
    const size_t n = std::min(sizes[turn % sizes.size()], documents.size() - next);
    Result<std::vector<StreamAnswer>> batch =
        stream.AddBatch(std::span<const StreamDocument>(documents).subspan(next, n));
    EXPECT_TRUE(batch.ok()) << batch.status();
    if (batch.ok()) answers.insert(answers.end(), batch->begin(), batch->end());
    next += n;
  }
  return answers;
}

void ExpectSameStats(const StreamStats& a, const StreamStats& b) {
  EXPECT_EQ(a.documents, b.documents);
  EXPECT_EQ(a.kept, b.kept);
  EXPECT_EQ(a.added, b.added);
  EXPECT_EQ(a.evicted, b.evicted);
  EXPECT_EQ(a.oldest_time, b.oldest_time);
  EXPECT_EQ(a.newest_time, b.newest_time);
  EXPECT_EQ(a.memory_bytes, b.memory_bytes);
}

TEST(StreamBatchTest, AddBatchGivesTheAnswersOfAddOneByOne) {
  const std::vector<std::string> texts = PlantedTexts(700, 21);
  std::vector<std::string> ids;
  const std::vector<StreamDocument> documents = MixedDocuments(texts, &ids);
  for (NearDuplicateMethod method :
       {NearDuplicateMethod::kMinHash, NearDuplicateMethod::kSimHash}) {
    for (int64_t window : {int64_t{0}, int64_t{600}}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(method)) + " window " + std::to_string(window));
      StreamConfig config;
      config.method = method;
      config.max_distance = 5;
      config.window_seconds = window;
      config.max_documents = window == 0 ? 0 : 150;
      auto single = std::move(NearDuplicateStream::Create(config)).value();
      auto batched = std::move(NearDuplicateStream::Create(config)).value();
      const std::vector<StreamAnswer> expected = AddOneByOne(*single, documents);
      // 1 and 300 (over kStreamBatchGroup: several groups in one call).
      const std::vector<StreamAnswer> answers = AddInBatches(*batched, documents, {1, 57, 300, 2});
      ASSERT_EQ(answers.size(), expected.size());
      size_t duplicates = 0;
      size_t repeats = 0;
      for (size_t i = 0; i < answers.size(); ++i) {
        EXPECT_EQ(answers[i], expected[i]) << "document " << i;
        duplicates += expected[i].status == StreamStatus::kNearDuplicate;
        repeats += ids[i] != PlantedId(i);
      }
      // The corpus exercises what it should: near-duplicates and repeats.
      EXPECT_GT(duplicates, window == 0 ? 30u : 5u);
      EXPECT_GT(repeats, 50u);
      ExpectSameStats(batched->Stats(), single->Stats());
      for (const std::string& id : ids) {
        Result<StreamAnswer> a = batched->Get(id);
        Result<StreamAnswer> b = single->Get(id);
        ASSERT_EQ(a.ok(), b.ok()) << id;
        if (a.ok()) {
          EXPECT_EQ(*a, *b);
        }
      }
    }
  }
}

TEST(StreamBatchTest, ABatchInsideItselfFindsItsNearDuplicatesAndRepeats) {
  auto stream = std::move(NearDuplicateStream::Create({})).value();
  const std::string text = PlantedTexts(1, 22)[0];
  const std::vector<StreamDocument> documents = {
      {"a", text, 1}, {"b", text, 2}, {"a", "another text altogether", 3}, {"c", text, 4}};
  const std::vector<StreamAnswer> answers = *stream->AddBatch(documents);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[0].status, StreamStatus::kNew);
  EXPECT_EQ(answers[1].of, "a");
  EXPECT_EQ(answers[2], answers[0]);  // the repeat gets the stored answer
  EXPECT_EQ(answers[3].of, "a");
  EXPECT_EQ(stream->Stats().added, 3u);
}

TEST(StreamBatchTest, CheckBatchGivesTheAnswersOfCheckAndStoresNothing) {
  const std::vector<std::string> texts = PlantedTexts(300, 23);
  auto stream = std::move(NearDuplicateStream::Create({})).value();
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  std::vector<StreamDocument> stored;
  std::vector<StreamDocument> queries;
  for (size_t i = 0; i < texts.size(); ++i) {
    (i % 2 == 0 ? stored : queries).push_back(StreamDocument{ids[i], texts[i], 5});
  }
  ASSERT_TRUE(stream->AddBatch(stored).ok());
  const StreamStats before = stream->Stats();
  const std::vector<StreamAnswer> answers = *stream->CheckBatch(queries);
  ASSERT_EQ(answers.size(), queries.size());
  size_t duplicates = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    EXPECT_EQ(answers[i], *stream->Check(queries[i].id, queries[i].text, queries[i].time));
    duplicates += answers[i].status == StreamStatus::kNearDuplicate;
  }
  EXPECT_GT(duplicates, 3u);
  ExpectSameStats(stream->Stats(), before);
  EXPECT_EQ(stream->Get(queries[0].id).status().code(), StatusCode::kNotFound);
}

// A bad document stops the batch there: the ones before it are stored and
// durable (a reopened stream has them), none after it.
TEST(StreamBatchTest, AnErrorStopsTheBatchAtThatDocument) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(6, 24);
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {})).value();
    const std::vector<StreamDocument> documents = {
        {"a", texts[0], 1}, {"b", texts[1], 2}, {"", texts[2], 3}, {"d", texts[3], 4}};
    Result<std::vector<StreamAnswer>> answers = stream->AddBatch(documents);
    EXPECT_EQ(answers.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(answers.status().message(), HasSubstr("document \"\""));
    EXPECT_THAT(answers.status().message(), HasSubstr("id must not be empty"));
  }
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
  EXPECT_EQ(reopened->Stats().documents, 2u);
  EXPECT_TRUE(reopened->Get("b").ok());
  EXPECT_EQ(reopened->Get("d").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(reopened->AddBatch({}).ok());
}

// With snapshot_grows_with_state (the default) a rotation waits until half
// of what recovery would read (the last snapshot and the logs since) is dead
// (session 14). A window that only grows holds nothing dead, so it is never
// rewritten: its log alone holds exactly its records, which a snapshot would
// only repeat (the rule before, "as much log as the last snapshot", rewrote
// it at every doubling: about one record per add). Answers after reopening
// are the same either way.
TEST(StreamBatchTest, AWindowThatOnlyGrowsIsNotRewritten) {
  const std::vector<std::string> texts = PlantedTexts(400, 25);
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  std::vector<StreamDocument> documents;
  for (size_t i = 0; i < texts.size(); ++i) {
    documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
  }
  uint64_t snapshots[2] = {0, 0};
  std::vector<StreamAnswer> answers[2];
  for (bool grows : {false, true}) {
    TempDir dir;
    StreamOpenOptions options;
    options.snapshot_log_bytes = 16 << 10;
    options.snapshot_grows_with_state = grows;
    // Each snapshot whole in the operation that starts it: this test counts
    // the policy's snapshots (a snapshot in pieces delays the next one).
    options.snapshot_step_bytes = uint64_t{1} << 40;
    options.background_snapshots = false;
    options.sync = false;  // the policy is the same; fsyncs would only make it slow
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {}, options)).value();
    for (size_t i = 0; i < documents.size(); i += 10) {
      ASSERT_TRUE(stream->AddBatch(std::span(documents).subspan(i, 10)).ok());
    }
    // Retries of present ids write nothing: still nothing dead.
    ASSERT_TRUE(stream->AddBatch(std::span(documents).subspan(100, 50)).ok());
    snapshots[grows] = stream->Stats().snapshots;
    stream.reset();
    auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
    if (grows) {  // the log alone, every document of it
      EXPECT_EQ(reopened->recovery().snapshot_documents, 0u);
      EXPECT_EQ(reopened->recovery().replayed_records, documents.size());
    }
    for (const std::string& id : ids) answers[grows].push_back(*reopened->Get(id));
  }
  EXPECT_EQ(answers[true], answers[false]);
  // 400 documents of ~1-4 KB of log each: a snapshot every 16 KiB of log is
  // dozens; none when nothing is dead.
  EXPECT_GT(snapshots[false], 30u);
  EXPECT_EQ(snapshots[true], 0u);
}

// The generations of a stream directory's files named "<prefix>-<20 digits>".
std::vector<std::pair<uint64_t, uint64_t>> StreamFiles(const std::string& dir,
                                                       const std::string& prefix) {
  std::vector<std::pair<uint64_t, uint64_t>> found;  // generation, bytes
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != prefix.size() + 21 || name.rfind(prefix + "-", 0) != 0) continue;
    std::error_code size_ec;
    const uint64_t bytes = std::filesystem::file_size(entry.path(), size_ec);
    if (size_ec) continue;  // deleted meanwhile (the snapshot thread)
    found.emplace_back(std::stoull(name.substr(prefix.size() + 1)), bytes);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The generation of the newest complete snapshot, 0 when none is seen (a
// listing that races the snapshot thread's rename may miss it).
uint64_t NewestSnapshot(const std::string& dir) {
  const auto snapshots = StreamFiles(dir, "snapshot");
  return snapshots.empty() ? 0 : snapshots.back().first;
}

bool SnapshotInProgress(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) return true;
  }
  return false;
}

// What recovery would read: the newest snapshot and every log from its
// generation on. 0 when the snapshot vanished while listing (the snapshot
// thread finished a newer one): the caller lists again.
uint64_t RecoveryBytes(const std::string& dir) {
  const auto snapshots = StreamFiles(dir, "snapshot");
  if (snapshots.empty()) return 0;
  uint64_t read = snapshots.back().second;
  for (const auto& [generation, bytes] : StreamFiles(dir, "log")) {
    if (generation >= snapshots.back().first) read += bytes;
  }
  std::error_code ec;
  const bool still = std::filesystem::exists(
      dir + "/snapshot-" + std::string(20 - std::to_string(snapshots.back().first).size(), '0') +
          std::to_string(snapshots.back().first),
      ec);
  return still ? read : 0;
}

// A window that turns over (a cap of 40 documents) still rotates, and what
// recovery would read stays within the policy's bound (include/neardup/
// stream.h, SERVER.md "Durability") after every operation: twice the
// window's records R, plus snapshot_log_bytes L (the log is rolled over, or
// the rotation due, only once it is that long) and an operation's group;
// while a snapshot is in progress, plus the new log, at most 3/4 of
// max(L, R) and two more groups. The window's records are measured outside
// the stream: the log bytes each document added to a twin that never
// rotates. The stream is closed and reopened every 5 batches (recovery
// recomputes what it read besides the current log: the bound must go on
// holding), and once with a snapshot in progress (a snapshot-<g>, log-<g>
// and log-<g+1> to recover from).
void TurnTheWindow(bool background) {
  const std::vector<std::string> texts = PlantedTexts(700, 27);
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  std::vector<StreamDocument> documents;
  for (size_t i = 0; i < texts.size(); ++i) {
    documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
  }
  StreamConfig config;
  config.max_documents = 40;
  constexpr uint64_t kLogBytes = 16 << 10;
  StreamOpenOptions options;
  options.snapshot_log_bytes = kLogBytes;
  options.background_snapshots = background;
  // Without the thread, whole in the operation that starts it (the snapshot
  // count below is exact).
  if (!background) options.snapshot_step_bytes = uint64_t{1} << 40;
  options.sync = false;

  TempDir twin_dir;
  StreamOpenOptions twin_options = options;
  twin_options.snapshot_log_bytes = uint64_t{1} << 40;
  twin_options.background_snapshots = false;
  auto twin = std::move(NearDuplicateStream::Open(twin_dir.path(), config, twin_options)).value();
  std::vector<uint64_t> record_bytes;  // of each document's add record, framed
  std::vector<StreamAnswer> twin_answers;
  for (const StreamDocument& d : documents) {
    const uint64_t before = twin->Stats().log_bytes;
    twin_answers.push_back(*twin->Add(d.id, d.text, d.time));
    record_bytes.push_back(twin->Stats().log_bytes - before);
  }

  TempDir dir;
  auto stream = std::move(NearDuplicateStream::Open(dir.path(), config, options)).value();
  // Snapshots completed: a newer snapshot file seen after an operation or a
  // close (the close finishes one whose pieces are all written: the snapshot
  // thread may not have come to it, and the writers take the finish only
  // once the log has grown by a quarter more; it abandons one still being
  // written). Stats().snapshots, read before the close, misses the former.
  uint64_t completed = 0;
  uint64_t newest = NewestSnapshot(dir.path());
  auto see_snapshots = [&] {
    const uint64_t seen = NewestSnapshot(dir.path());
    if (seen > newest) {
      ++completed;
      newest = seen;
    }
  };
  uint64_t snapshots = 0;  // counted by the streams' Stats before each close
  uint64_t max_live = 0;
  uint64_t max_group = 0;
  size_t batches = 0;
  bool closed_in_snapshot = false;
  size_t next = 0;
  auto check_bound = [&](size_t added, const char* when) {
    uint64_t live = 0;
    for (size_t j = added > 40 ? added - 40 : 0; j < added; ++j) live += record_bytes[j];
    max_live = std::max(max_live, live);
    uint64_t read = 0;
    for (int tries = 0; read == 0 && tries < 100; ++tries) read = RecoveryBytes(dir.path());
    ASSERT_GT(read, 0u);
    const uint64_t bound =
        2 * max_live + kLogBytes + 3 * std::max(kLogBytes, max_live) / 4 + 3 * max_group + 1024;
    EXPECT_LE(read, bound) << when << " " << added << " documents: window " << live;
    see_snapshots();
  };
  while (next < documents.size()) {
    if (!closed_in_snapshot && batches == 30) {
      // Single adds, each stepping a few KiB of the snapshot, until one
      // is in progress; then close mid-snapshot.
      StreamOpenOptions small_steps = options;
      small_steps.snapshot_step_bytes = 1 << 10;
      small_steps.background_snapshots = false;
      snapshots += stream->Stats().snapshots;
      stream.reset();
      see_snapshots();
      stream = std::move(NearDuplicateStream::OpenExisting(dir.path(), small_steps)).value();
      while (next < documents.size() && !SnapshotInProgress(dir.path())) {
        const StreamDocument& d = documents[next];
        max_group = std::max(max_group, record_bytes[next]);
        ASSERT_TRUE(stream->Add(d.id, d.text, d.time).ok());
        ++next;
        check_bound(next, "single adds, after");
      }
      ASSERT_TRUE(SnapshotInProgress(dir.path()));
      const auto snapshot_files = StreamFiles(dir.path(), "snapshot");
      size_t logs_since = 0;
      for (const auto& [generation, bytes] : StreamFiles(dir.path(), "log")) {
        logs_since += generation >= snapshot_files.back().first;
      }
      EXPECT_GE(logs_since, 2u);  // the old log and the new one at least
      snapshots += stream->Stats().snapshots;
      stream.reset();  // abandons the snapshot in progress
      see_snapshots();
      closed_in_snapshot = true;
      stream = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
      EXPECT_EQ(stream->recovery().truncated_bytes, 0u);
      check_bound(next, "reopened mid-snapshot after");
    }
    const size_t n = std::min<size_t>(10, documents.size() - next);
    uint64_t group = 0;
    for (size_t j = next; j < next + n; ++j) group += record_bytes[j];
    max_group = std::max(max_group, group);
    ASSERT_TRUE(stream->AddBatch(std::span(documents).subspan(next, n)).ok());
    next += n;
    ++batches;
    check_bound(next, "after");
    if (batches % 5 == 0) {
      snapshots += stream->Stats().snapshots;
      stream.reset();
      see_snapshots();
      stream = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
      EXPECT_EQ(stream->recovery().truncated_bytes, 0u);
      check_bound(next, "reopened after");
    }
  }
  EXPECT_TRUE(closed_in_snapshot);
  snapshots += stream->Stats().snapshots;
  stream.reset();
  see_snapshots();
  // 12 here in session 18's runs, the thread starved (pinned beside a busy
  // loop) or not; Stats alone counted 10-12 (the others finished at a close).
  EXPECT_GT(completed, 5u) << snapshots << " counted by Stats";
  EXPECT_GE(completed, snapshots);
  if (!background) {
    EXPECT_EQ(completed, snapshots);
  }
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  for (size_t i = 0; i < documents.size(); ++i) {
    Result<StreamAnswer> stored = reopened->Get(ids[i]);
    if (i + 40 < documents.size()) {
      EXPECT_FALSE(stored.ok()) << ids[i];
    } else {
      ASSERT_TRUE(stored.ok()) << ids[i];
      EXPECT_EQ(*stored, twin_answers[i]) << ids[i];
    }
  }
}

TEST(StreamBatchTest, ATurningWindowRotatesOnceHalfOfWhatRecoveryReadsIsDead) {
  TurnTheWindow(false);
}

// The production pair of settings: snapshot_grows_with_state and the
// snapshot thread (the bound then holds whatever CPU the thread gets: the
// writers take over).
TEST(StreamBatchTest, ATurningWindowKeepsTheBoundWithBackgroundSnapshots) { TurnTheWindow(true); }

void ExpectSameGet(const Result<StreamAnswer>& got, const Result<StreamAnswer>& want,
                   std::string_view id) {
  ASSERT_EQ(got.ok(), want.ok()) << id;
  if (got.ok()) {
    EXPECT_EQ(*got, *want) << id;
  }
}

// A window that only grows is never rewritten, but its log is rolled over
// every snapshot_log_bytes: a torn tail is cut only in the last log file,
// and a bad record in an older one is DataLoss (the stream refuses to open;
// nothing is cut), not a silent loss of every acknowledged document after it.
TEST(StreamBatchTest, AGrowingWindowsLogIsRolledOverAndOnlyItsLastFileIsCut) {
  const std::vector<std::string> texts = PlantedTexts(240, 28);
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  std::vector<StreamDocument> documents;  // views of ids and texts
  for (size_t i = 0; i < 200; ++i) {
    documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
  }
  StreamOpenOptions options;
  constexpr uint64_t kLogBytes = 4 << 10;  // ~1.5 KB a record: ~40 logs
  options.snapshot_log_bytes = kLogBytes;
  options.background_snapshots = false;
  options.sync = false;
  TempDir dir;
  uint64_t documents_stored = 0;
  std::vector<Result<StreamAnswer>> answers;  // of Get (not found: a near-duplicate)
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {}, options)).value();
    for (size_t i = 0; i < documents.size(); i += 10) {
      ASSERT_TRUE(stream->AddBatch(std::span(documents).subspan(i, 10)).ok());
    }
    // Single adds until the newest log holds a record (a roll-over after
    // the last batch leaves it empty): its tail is torn below.
    while (stream->Stats().log_bytes == 0 && documents.size() < texts.size()) {
      const size_t i = documents.size();
      documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
      ASSERT_TRUE(stream->Add(documents.back().id, documents.back().text, i).ok());
    }
    EXPECT_EQ(stream->Stats().snapshots, 0u);
    for (const StreamDocument& d : documents) answers.push_back(stream->Get(d.id));
    ASSERT_TRUE(answers.back().ok());  // the torn record below is a stored document's
    documents_stored = stream->Stats().documents;
  }
  auto logs = StreamFiles(dir.path(), "log");
  // The next log, made ahead of its roll-over (session 18): empty.
  ASSERT_GE(logs.size(), 4u);
  EXPECT_EQ(logs.back().second, 0u);
  logs.pop_back();
  for (size_t i = 0; i + 1 < logs.size(); ++i) {
    // Each rolled over once past kLogBytes, by less than a batch.
    EXPECT_GE(logs[i].second, kLogBytes);
    EXPECT_LT(logs[i].second, kLogBytes + (uint64_t{64} << 10));
  }
  auto path_of = [&](const TempDir& d, uint64_t generation) {
    const std::string digits = std::to_string(generation);
    return d.path() + "/log-" + std::string(20 - digits.size(), '0') + digits;
  };
  auto copy_of = [&](TempDir* to) {
    std::filesystem::copy(dir.path(), to->path(), std::filesystem::copy_options::recursive);
  };
  auto read_bytes = [](const std::string& path) {
    std::string bytes(std::filesystem::file_size(path), '\0');
    FILE* f = std::fopen(path.c_str(), "rb");
    EXPECT_EQ(std::fread(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
    return bytes;
  };
  auto write_bytes = [](const std::string& path, const std::string& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  };
  {  // uninterrupted: the same answers, every log replayed
    TempDir copy;
    copy_of(&copy);
    auto reopened = std::move(NearDuplicateStream::OpenExisting(copy.path(), options)).value();
    EXPECT_EQ(reopened->recovery().replayed_records, documents.size());
    EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
    for (size_t i = 0; i < documents.size(); ++i) {
      ExpectSameGet(reopened->Get(documents[i].id), answers[i], documents[i].id);
    }
  }
  {  // a byte flipped in the first log: DataLoss, and no file cut
    TempDir copy;
    copy_of(&copy);
    const std::string first = path_of(copy, logs.front().first);
    std::string bytes = read_bytes(first);
    bytes[bytes.size() / 2] ^= 0x20;
    write_bytes(first, bytes);
    EXPECT_EQ(NearDuplicateStream::OpenExisting(copy.path(), options).status().code(),
              StatusCode::kDataLoss);
    for (const auto& [generation, size] : logs) {
      EXPECT_EQ(std::filesystem::file_size(path_of(copy, generation)), size) << generation;
    }
  }
  {  // a torn tail in the last log: cut and reported, all else kept
    TempDir copy;
    copy_of(&copy);
    const std::string last = path_of(copy, logs.back().first);
    std::string bytes = read_bytes(last);
    ASSERT_GT(bytes.size(), 3u);
    bytes.resize(bytes.size() - 3);  // the last record torn
    write_bytes(last, bytes);
    auto reopened = std::move(NearDuplicateStream::OpenExisting(copy.path(), options)).value();
    EXPECT_GT(reopened->recovery().truncated_bytes, 0u);
    EXPECT_THAT(reopened->recovery().truncation, HasSubstr(last));
    EXPECT_EQ(reopened->recovery().replayed_records, documents.size() - 1);
    for (size_t i = 0; i + 1 < documents.size(); ++i) {
      ExpectSameGet(reopened->Get(documents[i].id), answers[i], documents[i].id);
    }
    EXPECT_FALSE(reopened->Get(documents.back().id).ok());
    EXPECT_EQ(reopened->Stats().documents + 1, documents_stored);
    // The torn log was followed by the empty spare: the cut is on disk
    // (else the second open would be DataLoss), so the next reopen reads
    // the torn log whole and the document added again from the spare.
    ASSERT_TRUE(
        reopened->Add(documents.back().id, documents.back().text, documents.back().time).ok());
    const uint64_t cut = reopened->recovery().truncated_bytes;
    reopened.reset();
    EXPECT_EQ(std::filesystem::file_size(last), bytes.size() - cut);
    auto again = std::move(NearDuplicateStream::OpenExisting(copy.path(), options)).value();
    EXPECT_EQ(again->recovery().truncated_bytes, 0u);
    EXPECT_EQ(again->Stats().documents, documents_stored);
    for (size_t i = 0; i < documents.size(); ++i) {
      ExpectSameGet(again->Get(documents[i].id), answers[i], documents[i].id);
    }
  }
  {  // the spare removed: a torn tail in the last log, nothing after it (the
     // case before session 18): cut and reported, all else kept
    TempDir copy;
    copy_of(&copy);
    ASSERT_TRUE(std::filesystem::remove(path_of(copy, logs.back().first + 1)));
    const std::string last = path_of(copy, logs.back().first);
    std::string bytes = read_bytes(last);
    bytes.resize(bytes.size() - 3);  // the last record torn
    write_bytes(last, bytes);
    auto reopened = std::move(NearDuplicateStream::OpenExisting(copy.path(), options)).value();
    EXPECT_GT(reopened->recovery().truncated_bytes, 0u);
    EXPECT_THAT(reopened->recovery().truncation, HasSubstr(last));
    EXPECT_EQ(reopened->recovery().replayed_records, documents.size() - 1);
    for (size_t i = 0; i + 1 < documents.size(); ++i) {
      ExpectSameGet(reopened->Get(documents[i].id), answers[i], documents[i].id);
    }
    EXPECT_FALSE(reopened->Get(documents.back().id).ok());
    // Recovery goes on in the cut log.
    ASSERT_TRUE(
        reopened->Add(documents.back().id, documents.back().text, documents.back().time).ok());
    reopened.reset();
    auto again = std::move(NearDuplicateStream::OpenExisting(copy.path(), options)).value();
    EXPECT_EQ(again->recovery().truncated_bytes, 0u);
    EXPECT_EQ(again->Stats().documents, documents_stored);
  }
  {  // a torn tail in the log before the last one that holds records: DataLoss
    TempDir copy;
    copy_of(&copy);
    const std::string before_last = path_of(copy, logs[logs.size() - 2].first);
    std::string bytes = read_bytes(before_last);
    bytes.resize(bytes.size() - 3);
    write_bytes(before_last, bytes);
    EXPECT_EQ(NearDuplicateStream::OpenExisting(copy.path(), options).status().code(),
              StatusCode::kDataLoss);
  }
}

// A crash between a snapshot's rename and the deletes of the files before
// it leaves those files; the next open deletes them (nothing reads them),
// and the stream is the same.
TEST(StreamBatchTest, OpeningDeletesFilesOlderThanTheNewestSnapshot) {
  const std::vector<std::string> texts = PlantedTexts(20, 29);
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  StreamOpenOptions options;
  options.sync = false;
  TempDir dir;
  std::vector<Result<StreamAnswer>> answers;
  {
    auto stream = std::move(NearDuplicateStream::Open(dir.path(), {}, options)).value();
    for (size_t i = 0; i < 10; ++i) ASSERT_TRUE(stream->Add(ids[i], texts[i], i).ok());
    ASSERT_TRUE(stream->Snapshot().ok());
    for (size_t i = 10; i < 20; ++i) ASSERT_TRUE(stream->Add(ids[i], texts[i], i).ok());
    for (const std::string& id : ids) answers.push_back(stream->Get(id));
  }
  const auto snapshots = StreamFiles(dir.path(), "snapshot");
  ASSERT_EQ(snapshots.size(), 1u);
  ASSERT_GT(snapshots[0].first, 0u);
  // The left-overs: an older snapshot and log (garbage: never read).
  dir.Write("snapshot-00000000000000000000", "not read");
  dir.Write("log-00000000000000000000", "not read");
  auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path(), options)).value();
  EXPECT_EQ(StreamFiles(dir.path(), "snapshot").size(), 1u);
  for (const auto& [generation, bytes] : StreamFiles(dir.path(), "log")) {
    EXPECT_GE(generation, snapshots[0].first);
  }
  for (size_t i = 0; i < ids.size(); ++i) ExpectSameGet(reopened->Get(ids[i]), answers[i], ids[i]);
}

// The LSH slot question of a stream that runs for ever (docs/SERVER.md): the
// index's 2^31 cap counts documents held, not ever inserted -- Remove moves
// the last slot into the freed one and the hash tables delete without
// tombstones -- so a window that turns over many times holds the memory of
// one window. Here a capped window turns over 30 times; its measured memory
// stops growing after the first turn (arrays and tables keep their
// high-water capacity) and every document stays answerable.
TEST(StreamWindowTest, AWindowTurningOverManyTimesHoldsTheMemoryOfOneWindow) {
  const std::vector<std::string> texts = PlantedTexts(3000, 26);
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back(PlantedId(i));
  StreamConfig config;
  config.max_documents = 100;
  auto stream = std::move(NearDuplicateStream::Create(config)).value();
  std::vector<uint64_t> memory;
  for (size_t first = 0; first < texts.size(); first += 100) {
    std::vector<StreamDocument> documents;
    for (size_t i = first; i < first + 100; ++i) {
      documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
    }
    ASSERT_TRUE(stream->AddBatch(documents).ok());
    memory.push_back(stream->Stats().memory_bytes);
  }
  const StreamStats stats = stream->Stats();
  EXPECT_EQ(stats.documents, 100u);
  EXPECT_EQ(stats.evicted, 2900u);
  // After the first ten turns nothing grows beyond the variation of the
  // documents themselves (texts of 60-260 words: sketches and answers
  // differ). Ten, not two (session 12): the index tables are 8 shards each,
  // and each shard keeps its own high-water capacity, which a shard reaches
  // when the keys of some turn happen to crowd it (measured: 387 KB at
  // turns 1-2, 395-427 KB from turn 3 on, 412-427 KB from turn 6).
  const uint64_t settled = *std::max_element(memory.begin() + 1, memory.begin() + 10);
  for (size_t turn = 10; turn < memory.size(); ++turn) {
    EXPECT_LT(memory[turn], settled + settled / 10) << "turn " << turn;
  }
  // A copy of the newest documents is still found; one of an evicted one is not.
  EXPECT_EQ(stream->Check("q", texts[2999], 3000)->of, ids[2999]);
  EXPECT_EQ(stream->Check("q", texts[0], 3000)->status, StreamStatus::kNew);
}

// The log side of AddBatch: one write per group of kStreamBatchGroup
// documents and one fsync per batch; a write that fails part way (a full
// disk) keeps exactly the documents whose records it wrote whole and undoes
// the rest in memory (evictions included); a crash that tears the batch's
// write leaves, after Open, the documents before the torn record and
// nothing else, and the batch retried answers as if nothing had happened.

// The oldest log of `dir`: a stream's only log before its first roll-over
// (the next, made ahead of it since session 18, follows it, empty).
std::string LogFileIn(const std::string& dir) {
  std::string oldest;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (entry.path().filename().string().rfind("log-", 0) == 0 &&
        (oldest.empty() || path < oldest)) {
      oldest = path;
    }
  }
  return oldest;
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

// Single adds frame their record in place into the stream's reused buffer
// and write it with AppendFramed, as a batch's records (session 14): adding
// documents one by one (kept ones with texts, near-duplicates, repeats,
// empty texts, a window and a cap) writes exactly the log that AddBatch
// writes for them, and reopening either log gives the same answers. A buffer
// not emptied between adds would refuse the add (AppendFramed checks each
// record's length against its end) or write a record twice.
TEST(StreamBatchLogTest, AddsOneByOneWriteTheLogThatABatchWrites) {
  const std::vector<std::string> texts = PlantedTexts(300, 28);
  std::vector<std::string> ids;
  const std::vector<StreamDocument> documents = MixedDocuments(texts, &ids);
  StreamConfig config;
  config.window_seconds = 600;
  config.max_documents = 150;
  config.keep_texts = true;
  StreamOpenOptions options;
  options.sync = false;
  options.snapshot_log_bytes = uint64_t{1} << 40;  // one log, no snapshot
  TempDir single_dir;
  TempDir batched_dir;
  std::vector<StreamAnswer> expected;
  {
    auto single = std::move(NearDuplicateStream::Open(single_dir.path(), config, options)).value();
    auto batched =
        std::move(NearDuplicateStream::Open(batched_dir.path(), config, options)).value();
    expected = AddOneByOne(*single, documents);
    EXPECT_EQ(AddInBatches(*batched, documents, {300}), expected);
    EXPECT_EQ(single->Stats().log_appends, single->Stats().added);
  }
  const std::string log = "/log-00000000000000000000";
  const std::string single_log = test_support::ReadFileBytes(single_dir.path() + log);
  EXPECT_GT(single_log.size(), 300u * 1000);
  EXPECT_EQ(single_log, test_support::ReadFileBytes(batched_dir.path() + log));
  auto reopened = std::move(NearDuplicateStream::OpenExisting(single_dir.path(), options)).value();
  EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
  auto in_memory = std::move(NearDuplicateStream::Create(config)).value();
  EXPECT_EQ(AddOneByOne(*in_memory, documents), expected);
  for (const std::string& id : ids) {
    Result<StreamAnswer> a = reopened->Get(id);
    Result<StreamAnswer> b = in_memory->Get(id);
    ASSERT_EQ(a.ok(), b.ok()) << id;
    if (a.ok()) {
      EXPECT_EQ(*a, *b);
      EXPECT_EQ(*reopened->Text(id), *in_memory->Text(id));
    }
  }
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
      // The next log, made ahead (session 18; by the snapshot thread since
      // session 20, so waited for, at most 20 s): the undo's reload reads up
      // to the current log, not into it.
      const std::string spare = dir.path() + "/log-00000000000000000001";
      for (int i = 0; i < 20000 && !std::filesystem::exists(spare); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ASSERT_TRUE(std::filesystem::exists(spare));
      Result<std::vector<StreamAnswer>> full = InternalError("not run");
      {
        ScopedFileSizeLimit limit((fits == 0 ? base : ends[fits - 1]) + 10);
        full = stream->AddBatch(batch.documents);
      }
      EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
      EXPECT_THAT(full.status().message(), HasSubstr("document \"" + batch.ids[fits] + "\""));
      // Memory holds what the log holds: the window after `fits` documents.
      ExpectSameStats(stream->Stats(), stats_after[fits]);
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
      ExpectSameStats(stream->Stats(), stats_after.back());
    }
    auto reopened = std::move(NearDuplicateStream::OpenExisting(dir.path())).value();
    EXPECT_EQ(reopened->recovery().truncated_bytes, 0u);
    ExpectSameStats(reopened->Stats(), stats_after.back());
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
