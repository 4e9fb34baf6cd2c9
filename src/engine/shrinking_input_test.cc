// Inputs that another process truncates while the fingerprint pipeline reads
// them through their mappings (io/mapping_fault_guard.h): the documents of
// the chunks read before the cut come out, then DataLoss "input FILE shrank
// while it was read (N -> M bytes)"; never a crash, never a document, skip
// report or fingerprint made of the zeros that stand in for the lost bytes.
// A file that grows while read is read as it was when mapped. The
// truncation happens at the test hook between the mapping and the first
// read (MappedInput::SetAfterMapHookForTest), so every run is the same.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

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

// Bytes appended after the mapping are not read: the documents, skips and
// fingerprints are the file's as it was mapped, even where the appended
// bytes fill the rest of its last page (which the parser's padding reads)
// and would complete its unfinished last line.
TEST(ShrinkingInputTest, AFileThatGrowsIsReadAsItWasWhenMapped) {
  test_support::TempDir dir;
  const std::string bytes = ShrinkTestLines(300).bytes + "{\"id\":\"last\",\"text\":\"unfinish";
  const std::string path = dir.Write("in.jsonl", bytes);
  const ShrinkRun before = RunShrinking(path, 2, 4096, {});
  ASSERT_TRUE(before.status.ok()) << before.status;
  ASSERT_EQ(before.skipped.size(), 1u);
  const ShrinkRun grown = RunShrinking(path, 2, 4096, [](const std::string& mapped) {
    std::ofstream(mapped, std::ios::app) << "ed\"}\n{\"id\":\"more\",\"text\":\"appended\"}\n";
  });
  ASSERT_TRUE(grown.status.ok()) << grown.status;
  EXPECT_EQ(grown.ids, before.ids);
  EXPECT_EQ(grown.simhashes, before.simhashes);
  ASSERT_EQ(grown.skipped.size(), 1u);
  EXPECT_EQ(grown.skipped[0].line, before.skipped[0].line);
  EXPECT_EQ(grown.skipped[0].reason, before.skipped[0].reason);
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

}  // namespace
}  // namespace neardup
