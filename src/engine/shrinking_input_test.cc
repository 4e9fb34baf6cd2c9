// Inputs that another process truncates while the fingerprint pipeline reads
// them through their mappings (io/mapping_fault_guard.h): the documents of
// the chunks read before the cut come out, then DataLoss "input FILE shrank
// while it was read (N -> M bytes)"; never a crash, never a document, skip
// report or fingerprint made of the zeros that stand in for the lost bytes.
// A file written in place (or appended to) while read: the documents of the
// chunks before its last one, then DataLoss "input FILE changed while it was
// read (...)" (docs/PIPELINE.md, "Inputs that change"); dedup's second pass
// likewise. The truncation or write happens at the test hook between the
// mapping and the first read (MappedInput::SetAfterMapHookForTest), and a
// write moves the modification time a second on, so every run is the same.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "io/mapped_input.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/positioned_output.h"
#include "neardup/recipe.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using internal::MappedInput;

// JSON lines with ids d0, d1, ... and distinct texts of 60-160 bytes; where
// each line ends (after its "\n").
struct LinesFile {
  std::string bytes;
  std::vector<size_t> line_ends;
};

LinesFile ShrinkTestLines(size_t count) {
  LinesFile file;
  for (size_t i = 0; i < count; ++i) {
    std::string text = "document " + std::to_string(i) + " says";
    for (size_t w = 0; w < 8 + i % 20; ++w) text += " w" + std::to_string((i * 7 + w * 13) % 97);
    file.bytes += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"" + text + "\"}\n";
    file.line_ends.push_back(file.bytes.size());
  }
  return file;
}

std::unique_ptr<Fingerprinter> ShrinkTestFingerprinter() {
  SketchSelection selection;
  selection.simhash = true;
  return std::move(CreateCpuFingerprinter(*PresetRecipe("default"), selection)).value();
}

// What one run of the pipeline handed its sink.
struct ShrinkRun {
  Status status;
  std::vector<std::string> ids;
  std::vector<uint64_t> simhashes;
  std::vector<SkippedRecord> skipped;
};

// Runs RunFingerprintPipeline (Documents) over `path`; `on_map` runs at the
// hook, after the file is mapped and before it is read.
ShrinkRun RunShrinking(const std::string& path, int threads, size_t batch_bytes,
                       std::function<void(const std::string&)> on_map) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  ShrinkRun run;
  InputOptions options;
  options.on_skip = [&](const SkippedRecord& r) { run.skipped.push_back(r); };
  auto reader = DocumentReader::Open({path}, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto fingerprinter = ShrinkTestFingerprinter();
  FingerprintPipelineOptions pipeline;
  pipeline.batch_bytes = batch_bytes;
  MappedInput::SetAfterMapHookForTest(std::move(on_map));
  run.status = RunFingerprintPipeline(
      **reader, *fingerprinter, pipeline,
      [&](std::span<const Document> documents, std::span<const Fingerprint> fingerprints) {
        for (size_t i = 0; i < documents.size(); ++i) {
          run.ids.push_back(documents[i].id);
          run.simhashes.push_back(fingerprints[i].simhash);
        }
        return Status::Ok();
      });
  MappedInput::SetAfterMapHookForTest({});
  return run;
}

std::string PageFloor(size_t offset) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return std::to_string(offset / page * page);
}

TEST(ShrinkingInputTest, ACutMidFileGivesTheDocumentsBeforeItThenDataLoss) {
  test_support::TempDir dir;
  const LinesFile lines = ShrinkTestLines(4000);  // ~0.5 MB
  const std::string path = dir.Write("in.jsonl", lines.bytes);
  const ShrinkRun whole = RunShrinking(path, 2, 16 << 10, {});
  ASSERT_TRUE(whole.status.ok()) << whole.status;
  ASSERT_EQ(whole.ids.size(), lines.line_ends.size());
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Cut inside a line, inside a page (whose tail then reads as zeros with
  // no fault), and at a page boundary.
  for (const size_t cut : {lines.bytes.size() / 2 + 37, 40 * page}) {
    for (const int threads : {1, 3}) {
      for (const size_t batch : {size_t{5000}, size_t{64} << 10}) {
        SCOPED_TRACE("cut " + std::to_string(cut) + ", threads " + std::to_string(threads) +
                     ", batch " + std::to_string(batch));
        ASSERT_EQ(::truncate(path.c_str(), 0), 0);
        std::ofstream(path, std::ios::binary) << lines.bytes;
        const ShrinkRun run = RunShrinking(path, threads, batch, [&](const std::string& mapped) {
          ASSERT_EQ(::truncate(mapped.c_str(), static_cast<off_t>(cut)), 0);
        });
        EXPECT_EQ(run.status.code(), StatusCode::kDataLoss);
        EXPECT_EQ(run.status.message(), "input " + path + " shrank while it was read (" +
                                            std::to_string(lines.bytes.size()) + " -> " +
                                            std::to_string(cut) + " bytes)");
        EXPECT_TRUE(run.skipped.empty()) << run.skipped.front().reason;
        // A prefix of the documents, each whole before the cut, with its
        // own fingerprint; the chunks before the cut's page all came out.
        const size_t delivered = run.ids.size();
        ASSERT_GT(delivered, 0u);
        EXPECT_LE(lines.line_ends[delivered - 1], cut);
        EXPECT_GE(lines.line_ends[delivered - 1] + batch + 300, cut / page * page)
            << "the last document delivered ends far before the cut's page " << PageFloor(cut);
        for (size_t i = 0; i < delivered; ++i) {
          ASSERT_EQ(run.ids[i], whole.ids[i]);
          ASSERT_EQ(run.simhashes[i], whole.simhashes[i]) << i;
        }
      }
    }
  }
}

TEST(ShrinkingInputTest, AFileCutToNothingGivesNoDocumentAndDataLoss) {
  test_support::TempDir dir;
  const LinesFile lines = ShrinkTestLines(2000);
  for (const size_t batch : {size_t{3000}, size_t{1} << 20}) {
    const std::string path = dir.Write("in" + std::to_string(batch) + ".jsonl", lines.bytes);
    const ShrinkRun run = RunShrinking(path, 2, batch, [](const std::string& mapped) {
      ASSERT_EQ(::truncate(mapped.c_str(), 0), 0);
    });
    EXPECT_EQ(run.status.message(), "input " + path + " shrank while it was read (" +
                                        std::to_string(lines.bytes.size()) + " -> 0 bytes)");
    EXPECT_TRUE(run.ids.empty());
    EXPECT_TRUE(run.skipped.empty());
  }
}

// Bytes appended after the mapping are not read, and the append is a
// change: the documents, skips and fingerprints of the chunks before the
// last one are the file's as it was mapped (the appended bytes fill the
// rest of its last page, which the parser's padding reads, and would
// complete its unfinished last line), then DataLoss.
TEST(ShrinkingInputTest, AFileThatGrowsIsReadAsMappedThenDataLoss) {
  test_support::TempDir dir;
  const std::string bytes = ShrinkTestLines(300).bytes + "{\"id\":\"last\",\"text\":\"unfinish";
  const std::string path = dir.Write("in.jsonl", bytes);
  const ShrinkRun before = RunShrinking(path, 2, 4096, {});
  ASSERT_TRUE(before.status.ok()) << before.status;
  ASSERT_EQ(before.skipped.size(), 1u);
  const std::string appended = "ed\"}\n{\"id\":\"more\",\"text\":\"appended\"}\n";
  const ShrinkRun grown = RunShrinking(path, 2, 4096, [&](const std::string& mapped) {
    std::ofstream(mapped, std::ios::app) << appended;
  });
  EXPECT_EQ(grown.status.message(), "input " + path + " changed while it was read (it grew from " +
                                        std::to_string(bytes.size()) + " to " +
                                        std::to_string(bytes.size() + appended.size()) +
                                        " bytes: appended to or rewritten)");
  ASSERT_GT(grown.ids.size(), 200u);
  ASSERT_LT(grown.ids.size(), before.ids.size()) << "the last chunk was not delivered";
  for (size_t i = 0; i < grown.ids.size(); ++i) {
    ASSERT_EQ(grown.ids[i], before.ids[i]);
    ASSERT_EQ(grown.simhashes[i], before.simhashes[i]);
  }
  EXPECT_TRUE(grown.skipped.empty()) << grown.skipped.front().reason;
}

// Written in place at the same size while read: the bytes read are a mix of
// the two versions, so the run ends with DataLoss before the last chunk,
// at 1 and 3 threads, whichever chunk size.
TEST(ShrinkingInputTest, AFileWrittenInPlaceWhileReadIsDataLoss) {
  test_support::TempDir dir;
  const LinesFile lines = ShrinkTestLines(3000);
  const std::string path = dir.Write("in.jsonl", lines.bytes);
  const std::string message = "input " + path +
                              " changed while it was read (written or its status changed at the "
                              "same size, " +
                              std::to_string(lines.bytes.size()) + " bytes)";
  const size_t middle = lines.bytes.find("says", lines.bytes.size() / 2);
  for (const int threads : {1, 3}) {
    for (const size_t batch : {size_t{5000}, size_t{1} << 20}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + ", batch " + std::to_string(batch));
      const ShrinkRun run = RunShrinking(path, threads, batch, [&](const std::string& mapped) {
        internal::testing::RewriteInPlace(mapped, middle, "SAYS");
      });
      EXPECT_EQ(run.status.code(), StatusCode::kDataLoss);
      EXPECT_EQ(run.status.message(), message);
      EXPECT_LT(run.ids.size(), lines.line_ends.size());
      EXPECT_TRUE(run.skipped.empty());
    }
  }
  // Unchanged since: the run that maps it again is fine.
  const ShrinkRun again = RunShrinking(path, 2, 5000, {});
  EXPECT_TRUE(again.status.ok()) << again.status;
  EXPECT_EQ(again.ids.size(), lines.line_ends.size());
}

// A PositionedOutput into a string (zeros where nothing was written).
class ShrinkTestOutput : public PositionedOutput {
 public:
  Status WriteAt(uint64_t offset, std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (this->bytes.size() < offset + bytes.size()) this->bytes.resize(offset + bytes.size());
    this->bytes.replace(offset, bytes.size(), bytes);
    return Status::Ok();
  }
  std::string bytes;

 private:
  std::mutex mutex_;
};

// dedup's second pass (CopyKeptRecordsByLocation, both writes) maps the
// files again: a file cut under it is DataLoss too, never a crash.
TEST(ShrinkingInputTest, DedupsSecondPassReportsAFileCutUnderIt) {
  test_support::TempDir dir;
  const LinesFile lines = ShrinkTestLines(3000);
  const std::string path = dir.Write("in.jsonl", lines.bytes);
  auto reader = DocumentReader::Open({path}, {});
  ASSERT_TRUE(reader.ok());
  auto fingerprinter = ShrinkTestFingerprinter();
  FingerprintPipelineOptions pipeline;
  pipeline.record_locations = true;
  pipeline.batch_bytes = 20000;
  FingerprintedCorpus corpus;
  ASSERT_TRUE(CollectFingerprints(**reader, *fingerprinter, pipeline, false, &corpus).ok());
  ASSERT_EQ(corpus.record_locations.size(), lines.line_ends.size());
  const std::vector<bool> keep(corpus.ids.size(), true);
  const size_t cut = lines.bytes.size() / 3 + 11;
  const std::string shrank = "input " + path + " shrank while it was read (" +
                             std::to_string(lines.bytes.size()) + " -> " + std::to_string(cut) +
                             " bytes)";
  MappedInput::SetAfterMapHookForTest([&](const std::string& mapped) {
    ASSERT_EQ(::truncate(mapped.c_str(), static_cast<off_t>(cut)), 0);
  });
  std::string written;
  Status copied = CopyKeptRecordsByLocation(corpus, keep, pipeline, [&](std::string_view bytes) {
    written.append(bytes);
    return Status::Ok();
  });
  EXPECT_EQ(copied.message(), shrank);
  // Written before the error: whole records, none after the cut's page.
  EXPECT_EQ(lines.bytes.compare(0, written.size(), written), 0);
  EXPECT_LT(written.size(), cut);

  // The positioned write (ranges written by the threads that copied them):
  // the same error, and the prefix it says is written is the file's.
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  std::ofstream(path, std::ios::binary) << lines.bytes;
  corpus = FingerprintedCorpus();
  reader = DocumentReader::Open({path}, {});
  ASSERT_TRUE(reader.ok());
  MappedInput::SetAfterMapHookForTest({});
  ASSERT_TRUE(CollectFingerprints(**reader, *fingerprinter, pipeline, false, &corpus).ok());
  MappedInput::SetAfterMapHookForTest([&](const std::string& mapped) {
    ASSERT_EQ(::truncate(mapped.c_str(), static_cast<off_t>(cut)), 0);
  });
  ShrinkTestOutput out;
  uint64_t prefix = 0;
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 3);
  copied = CopyKeptRecordsByLocationAt(corpus, keep, pipeline, out, &prefix);
  EXPECT_EQ(copied.message(), shrank);
  EXPECT_LT(prefix, cut);
  EXPECT_EQ(out.bytes.substr(0, prefix), lines.bytes.substr(0, prefix));
  MappedInput::SetAfterMapHookForTest({});
}

// dedup's second pass: a file written in place while the pass copies its
// records (at the hook, after the pass compared the file with the first
// pass's) is DataLoss, for both writes; one written between the passes is
// refused before a record is copied, even with its modification time put
// back (the status change time moved).
TEST(ShrinkingInputTest, DedupsSecondPassReportsAFileWrittenUnderIt) {
  test_support::TempDir dir;
  const LinesFile lines = ShrinkTestLines(3000);
  const std::string path = dir.Write("in.jsonl", lines.bytes);
  auto fingerprinter = ShrinkTestFingerprinter();
  FingerprintPipelineOptions pipeline;
  pipeline.record_locations = true;
  pipeline.batch_bytes = 20000;
  const auto collect = [&] {
    FingerprintedCorpus corpus;
    auto reader = DocumentReader::Open({path}, {});
    EXPECT_TRUE(reader.ok());
    EXPECT_TRUE(CollectFingerprints(**reader, *fingerprinter, pipeline, false, &corpus).ok());
    EXPECT_EQ(corpus.record_locations.size(), lines.line_ends.size());
    return corpus;
  };
  const FingerprintedCorpus corpus = collect();
  const std::vector<bool> keep(corpus.ids.size(), true);
  const size_t middle = lines.bytes.find("says", lines.bytes.size() / 2);
  MappedInput::SetAfterMapHookForTest([&](const std::string& mapped) {
    internal::testing::RewriteInPlace(mapped, middle, "SAYS");
  });
  std::string written;
  Status copied = CopyKeptRecordsByLocation(corpus, keep, pipeline, [&](std::string_view bytes) {
    written.append(bytes);
    return Status::Ok();
  });
  EXPECT_EQ(copied.message(), "input " + path +
                                  " changed while it was read (written or its status changed "
                                  "at the same size, " +
                                  std::to_string(lines.bytes.size()) + " bytes)");
  MappedInput::SetAfterMapHookForTest({});

  const FingerprintedCorpus again = collect();
  MappedInput::SetAfterMapHookForTest([&](const std::string& mapped) {
    internal::testing::RewriteInPlace(mapped, middle, "says");
  });
  ShrinkTestOutput out;
  uint64_t prefix = 0;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 3);
    copied = CopyKeptRecordsByLocationAt(again, keep, pipeline, out, &prefix);
  }
  MappedInput::SetAfterMapHookForTest({});
  EXPECT_EQ(copied.code(), StatusCode::kDataLoss) << copied;
  EXPECT_NE(copied.message().find("changed while it was read"), std::string::npos) << copied;

  // Between the passes: written back with the first pass's modification
  // time; only the status change time says so (when the clock's tick shows
  // it: the write comes 20 ms after the first pass's look).
  const FingerprintedCorpus third = collect();
  ::usleep(20000);
  internal::testing::RewriteInPlace(path, middle, "SAYS", 0);
  const int64_t mtime = third.record_files[0].modified_ns;
  const struct timespec times[2] = {{0, UTIME_OMIT},
                                    {static_cast<time_t>(mtime / 1000000000), mtime % 1000000000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  if (internal::TimeNanoseconds(st.st_ctim) == third.record_files[0].changed_ns) {
    GTEST_SKIP() << "the file system's status change times are too coarse";
  }
  written.clear();
  copied = CopyKeptRecordsByLocation(third, keep, pipeline, [&](std::string_view bytes) {
    written.append(bytes);
    return Status::Ok();
  });
  EXPECT_EQ(copied.message(), "the inputs changed between passes over them (" + path + ")");
  EXPECT_TRUE(written.empty());
}

}  // namespace
}  // namespace neardup
