// AddBatch / CheckBatch against the same documents given to Add / Check one
// by one: identical answers, state and log; and what a failed or torn batch
// write leaves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
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

// A window that turns over (a cap of 40 documents) still rotates, and what
// recovery would read stays within the policy's bound after every batch:
// the newest snapshot plus the logs since hold at most twice the window's
// records (a header's slack), or the snapshot and less than
// snapshot_log_bytes of log. The window's records are measured outside the
// stream: the log bytes each document added to a twin that never rotates.
TEST(StreamBatchTest, ATurningWindowRotatesOnceHalfOfWhatRecoveryReadsIsDead) {
  const std::vector<std::string> texts = PlantedTexts(600, 27);
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
  options.snapshot_step_bytes = uint64_t{1} << 40;  // whole, in the operation that starts it
  options.background_snapshots = false;
  options.sync = false;

  TempDir twin_dir;
  StreamOpenOptions twin_options = options;
  twin_options.snapshot_log_bytes = uint64_t{1} << 40;
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
  auto file_bytes = [&](const char* prefix, uint64_t generation) {
    char name[64];
    std::snprintf(name, sizeof(name), "%s-%020llu", prefix,
                  static_cast<unsigned long long>(generation));
    std::error_code ec;
    const uint64_t bytes = std::filesystem::file_size(dir.path() + "/" + name, ec);
    return ec ? uint64_t{0} : bytes;
  };
  uint64_t generation = 0;  // of the newest snapshot
  uint64_t rotations = 0;
  for (size_t i = 0; i < documents.size(); i += 10) {
    ASSERT_TRUE(stream->AddBatch(std::span(documents).subspan(i, 10)).ok());
    while (file_bytes("snapshot", generation + 1) != 0) ++generation, ++rotations;
    const uint64_t snapshot = file_bytes("snapshot", generation);
    ASSERT_GT(snapshot, 0u);
    uint64_t read = snapshot;
    for (uint64_t g = generation; file_bytes("log", g) != 0 || g == generation; ++g) {
      read += file_bytes("log", g);
    }
    uint64_t live = 0;
    for (size_t j = i + 10 > 40 ? i + 10 - 40 : 0; j < i + 10; ++j) live += record_bytes[j];
    EXPECT_LE(read, std::max(2 * live + 1024, snapshot + kLogBytes))
        << "after " << i + 10 << " documents: snapshot " << snapshot << ", window " << live;
  }
  EXPECT_GT(rotations, 5u);
  EXPECT_EQ(rotations, stream->Stats().snapshots);
  stream.reset();
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
