// CopyKeptRecordsByLocation against the serial reader's raw records: the
// first pass records where each line lies in its mapped file, the second
// copies the kept ones from a new mapping, byte for byte what dedup wrote
// before; inputs it cannot locate (compressed, text, map_files off) leave
// the locations empty so that the caller falls back to CopyKeptRecords.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "io/mapped_input.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/positioned_output.h"
#include "neardup/recipe.h"

namespace neardup {
namespace {

std::unique_ptr<Fingerprinter> SimhashOnly() {
  SketchSelection selection;
  selection.simhash = true;
  return std::move(CreateCpuFingerprinter(*PresetRecipe("default"), selection)).value();
}

class KeptRecordsTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    return temp_.Write(name, bytes);
  }

  // The first pass, recording locations.
  FingerprintedCorpus Collect(const std::vector<std::string>& inputs, InputOptions options,
                              size_t batch_bytes = size_t{1} << 20) {
    auto reader = DocumentReader::Open(inputs, options);
    EXPECT_TRUE(reader.ok()) << reader.status();
    FingerprintPipelineOptions pipeline;
    pipeline.batch_bytes = batch_bytes;
    pipeline.record_locations = true;
    FingerprintedCorpus corpus;
    Status status = CollectFingerprints(**reader, *fingerprinter_, pipeline, false, &corpus);
    EXPECT_TRUE(status.ok()) << status;
    return corpus;
  }

  // The kept records as the serial reader's raw records give them.
  static std::string Expected(const std::vector<std::string>& inputs, InputOptions options,
                              const std::vector<bool>& keep) {
    options.keep_raw_records = true;
    internal::testing::ReadOutcome reference = internal::testing::ReadAll(inputs, options);
    EXPECT_TRUE(reference.status.ok()) << reference.status;
    EXPECT_EQ(reference.documents.size(), keep.size());
    std::string out;
    for (size_t i = 0; i < reference.documents.size() && i < keep.size(); ++i) {
      if (keep[i]) out += reference.documents[i].raw_record + "\n";
    }
    return out;
  }

  static Status Copy(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                     size_t batch_bytes, int threads, std::string* out) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    FingerprintPipelineOptions pipeline;
    pipeline.batch_bytes = batch_bytes;
    return CopyKeptRecordsByLocation(corpus, keep, pipeline, [&](std::string_view records) {
      out->append(records);
      return Status::Ok();
    });
  }

  test_support::TempDir temp_;
  std::filesystem::path dir_ = temp_.dir();
  std::unique_ptr<Fingerprinter> fingerprinter_ = SimhashOnly();
};

// A PositionedOutput that remembers every write, in the order the calls
// ended, and fails the writes that reach into [fail_at, fail_end), slowly
// when asked (so that later ranges are written meanwhile if they can be).
class RecordingOutput : public PositionedOutput {
 public:
  explicit RecordingOutput(uint64_t fail_at = UINT64_MAX, uint64_t fail_end = UINT64_MAX,
                           bool slow_failure = false)
      : fail_at_(fail_at), fail_end_(fail_end), slow_failure_(slow_failure) {}

  Status WriteAt(uint64_t offset, std::string_view bytes) override {
    if (offset + bytes.size() > fail_at_ && offset < fail_end_) {
      if (slow_failure_) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return IoError("disk full at " + std::to_string(offset));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    writes_.push_back({offset, std::string(bytes)});
    return Status::Ok();
  }
  void Reserve(uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_TRUE(writes_.empty()) << "Reserve after a write";
    reserved_.push_back(bytes);
  }
  // The Reserve calls' sizes: one, before the writes.
  const std::vector<uint64_t>& reserved() const { return reserved_; }

  // The bytes written, checked to be disjoint writes that leave no gap
  // before `size`.
  std::string Assemble(uint64_t size) const {
    std::map<uint64_t, std::string> by_offset;
    for (const auto& [offset, bytes] : writes_) {
      EXPECT_TRUE(by_offset.emplace(offset, bytes).second) << "two writes at " << offset;
    }
    std::string out;
    for (const auto& [offset, bytes] : by_offset) {
      if (offset >= size) break;
      EXPECT_EQ(offset, out.size()) << "a gap or an overlap";
      out += bytes;
    }
    return out.substr(0, std::min<size_t>(out.size(), size));
  }

  // The end of the last write that ended, and the furthest end of any.
  uint64_t LastEnd() const {
    return writes_.empty() ? 0 : writes_.back().first + writes_.back().second.size();
  }
  uint64_t FurthestEnd() const {
    uint64_t end = 0;
    for (const auto& [offset, bytes] : writes_) end = std::max(end, offset + bytes.size());
    return end;
  }

 private:
  uint64_t fail_at_;
  uint64_t fail_end_;
  bool slow_failure_;
  std::mutex mutex_;
  std::vector<std::pair<uint64_t, std::string>> writes_;
  std::vector<uint64_t> reserved_;
};

Status CopyAtOffsets(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                     size_t batch_bytes, int threads, RecordingOutput* out, uint64_t* written) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  FingerprintPipelineOptions pipeline;
  pipeline.batch_bytes = batch_bytes;
  return CopyKeptRecordsByLocationAt(corpus, keep, pipeline, *out, written);
}

// CRLF and LF lines, blank and empty lines, invalid lines (skipped: not
// documents), a byte order mark, escapes, a last line without "\n".
std::string EdgyJsonl(int lines, bool bom, bool last_newline) {
  std::string out = bom ? "\xEF\xBB\xBF" : "";
  for (int i = 0; i < lines; ++i) {
    const std::string n = std::to_string(i);
    switch (i % 6) {
      case 0:
        out += "{\"id\": \"c" + n + "\", \"text\": \"crlf line " + n + "\"}\r\n";
        break;
      case 1:
        out += "\n \t\r\n";  // empty, blank
        break;
      case 2:
        out += "{\"id\": \"bad" + n + "\", \"text\": 5}\n";  // skipped
        break;
      case 3:
        out += "  {\"text\": \"spaces around, no id \\u00e9\\n" + n + "\"}  \n";
        break;
      default:
        out += "{\"id\": \"l" + n + "\", \"text\": \"lf line " + n + "\"}\n";
    }
  }
  out += "{\"id\": \"last\", \"text\": \"the last line\"}";
  if (last_newline) out += "\r\n";
  return out;
}

TEST_F(KeptRecordsTest, CopiesWhatTheSerialReaderKept) {
  const std::vector<std::string> inputs = {Write("a.jsonl", EdgyJsonl(200, true, false)),
                                           Write("d/b.jsonl", EdgyJsonl(50, false, true)),
                                           Write("d/c.jsonl", EdgyJsonl(7, false, false))};
  for (size_t first_batch : {size_t{1}, size_t{1} << 20}) {
    FingerprintedCorpus corpus = Collect(inputs, InputOptions{}, first_batch);
    ASSERT_EQ(corpus.record_locations.size(), corpus.ids.size());
    ASSERT_EQ(corpus.record_files.size(), 3u);
    for (int pattern = 0; pattern < 3; ++pattern) {
      std::vector<bool> keep(corpus.ids.size());
      for (size_t i = 0; i < keep.size(); ++i) {
        keep[i] = pattern == 0 ? true : pattern == 1 ? i % 3 != 1 : i + 1 == keep.size();
      }
      const std::string expected = Expected(inputs, InputOptions{}, keep);
      for (size_t batch_bytes : {size_t{1}, size_t{100}, size_t{1} << 20}) {
        for (int threads : {1, 3}) {
          std::string out;
          ASSERT_TRUE(Copy(corpus, keep, batch_bytes, threads, &out).ok());
          EXPECT_EQ(out, expected) << "pattern " << pattern << ", batch " << batch_bytes;
          // Written at their offsets: the same bytes, the last one last.
          RecordingOutput at;
          uint64_t written = 0;
          ASSERT_TRUE(CopyAtOffsets(corpus, keep, batch_bytes, threads, &at, &written).ok());
          EXPECT_EQ(written, expected.size());
          EXPECT_EQ(at.Assemble(written), expected) << "pattern " << pattern;
          EXPECT_EQ(at.LastEnd(), expected.size());
          // Reserved once, before the writes, the output's size.
          EXPECT_EQ(at.reserved(), std::vector<uint64_t>{expected.size()});
        }
      }
    }
  }
}

// Long runs of kept records are written straight from the mapping (64 KiB
// or more): the same bytes, with LF and CRLF lines, a last line with and
// without its newline, and runs broken by dropped records and blank lines.
TEST_F(KeptRecordsTest, LongRunsOfKeptRecordsAreTheSameBytes) {
  std::string lf, crlf;
  for (int i = 0; i < 6000; ++i) {
    const std::string record = "{\"id\": \"r" + std::to_string(i) + "\", \"text\": \"" +
                               std::string(60 + i % 50, 'x') + "\"}";
    lf += record + (i % 2500 == 7 ? "\n\n" : "\n");
    crlf += record + "\r\n";
  }
  const std::vector<std::string> inputs = {Write("lf.jsonl", lf + "{\"text\": \"no newline\"}"),
                                           Write("crlf.jsonl", crlf), Write("lf2.jsonl", lf)};
  FingerprintedCorpus corpus = Collect(inputs, InputOptions{});
  ASSERT_EQ(corpus.record_locations.size(), corpus.ids.size());
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<bool> keep(corpus.ids.size());
    for (size_t i = 0; i < keep.size(); ++i) {
      keep[i] = pattern == 0 ? true : pattern == 1 ? i % 1000 != 999 : i % 3 != 0;
    }
    const std::string expected = Expected(inputs, InputOptions{}, keep);
    for (size_t batch_bytes : {size_t{100} << 10, size_t{1} << 20, size_t{8} << 20}) {
      std::string out;
      ASSERT_TRUE(Copy(corpus, keep, batch_bytes, 2, &out).ok());
      // Not EXPECT_EQ: a difference would print megabytes.
      EXPECT_TRUE(out == expected) << "pattern " << pattern << ", batch " << batch_bytes << ": "
                                   << out.size() << " bytes, expected " << expected.size();
      RecordingOutput at;
      uint64_t written = 0;
      ASSERT_TRUE(CopyAtOffsets(corpus, keep, batch_bytes, 2, &at, &written).ok());
      EXPECT_TRUE(at.Assemble(written) == expected) << "pattern " << pattern;
      EXPECT_EQ(at.LastEnd(), expected.size());
    }
  }
}

// A write that fails midway: the first failure in input order is the
// error, everything before the range it hit is written (the reported
// prefix), and the output never reaches its full size (the range holding
// the last byte is written only after all the others).
TEST_F(KeptRecordsTest, AFailedWriteAtAnOffsetLeavesAPrefixAndNoFullSize) {
  std::string jsonl;
  for (int i = 0; i < 3000; ++i) {
    jsonl += "{\"id\": \"r" + std::to_string(i) + "\", \"text\": \"" +
             std::string(100 + i % 90, 'a' + i % 26) + "\"}\n";
  }
  const std::vector<std::string> inputs = {Write("a.jsonl", jsonl), Write("b.jsonl", jsonl)};
  FingerprintedCorpus corpus = Collect(inputs, InputOptions{});
  std::vector<bool> keep(corpus.ids.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i % 7 != 3;
  const std::string expected = Expected(inputs, InputOptions{}, keep);
  for (uint64_t fail_at :
       {uint64_t{0}, uint64_t{1}, uint64_t{expected.size() / 3}, uint64_t{expected.size() - 1}}) {
    for (int threads : {1, 3}) {
      RecordingOutput at(fail_at);
      uint64_t written = 12345;
      Status status = CopyAtOffsets(corpus, keep, 20000, threads, &at, &written);
      EXPECT_EQ(status.code(), StatusCode::kIoError) << status;
      EXPECT_NE(status.message().find("disk full"), std::string::npos) << status;
      EXPECT_LE(written, fail_at);
      EXPECT_EQ(at.Assemble(written), expected.substr(0, written)) << "fail at " << fail_at;
      EXPECT_LT(at.FurthestEnd(), expected.size()) << "fail at " << fail_at;
    }
  }
  // A range before the last one fails slowly while the last range is in
  // flight on another thread: the last range still waits, and is dropped.
  // (Ranges of 20,000 bytes or a record more, three in flight: the byte
  // 25,001 from the end lies in one of the last three, not in the last.)
  {
    const uint64_t fail_at = expected.size() - 25001;
    RecordingOutput at(fail_at, fail_at + 1, /*slow_failure=*/true);
    uint64_t written = 0;
    Status status = CopyAtOffsets(corpus, keep, 20000, 3, &at, &written);
    EXPECT_EQ(status.code(), StatusCode::kIoError) << status;
    EXPECT_LT(at.FurthestEnd(), expected.size());
    EXPECT_EQ(at.Assemble(written), expected.substr(0, written));
  }
  // Without a failure, for comparison: complete.
  RecordingOutput at;
  uint64_t written = 0;
  ASSERT_TRUE(CopyAtOffsets(corpus, keep, 20000, 3, &at, &written).ok());
  EXPECT_TRUE(at.Assemble(written) == expected);
  // Nothing kept: nothing written.
  RecordingOutput none;
  ASSERT_TRUE(
      CopyAtOffsets(corpus, std::vector<bool>(keep.size(), false), 20000, 2, &none, &written).ok());
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(none.FurthestEnd(), 0u);
}

TEST_F(KeptRecordsTest, InputsWithoutLocationsFallBack) {
  const std::string plain = Write("p.jsonl", EdgyJsonl(20, false, true));
  const std::string gz = Write("g.jsonl.gz", internal::testing::Gzip(EdgyJsonl(20, false, true)));
  const std::string zst = Write("z.jsonl.zst", internal::testing::Zstd(EdgyJsonl(9, true, false)));
  const std::string text = Write("t.txt", "a text file");
  InputOptions unmapped;
  unmapped.map_files = false;
  for (auto [inputs, options] : {std::pair{std::vector<std::string>{gz}, InputOptions{}},
                                 std::pair{std::vector<std::string>{plain, zst}, InputOptions{}},
                                 std::pair{std::vector<std::string>{plain, text}, InputOptions{}},
                                 std::pair{std::vector<std::string>{plain}, unmapped}}) {
    FingerprintedCorpus corpus = Collect(inputs, options);
    ASSERT_GT(corpus.ids.size(), 0u);
    EXPECT_TRUE(corpus.record_locations.empty()) << inputs.back();
    std::string out;
    Status status = Copy(corpus, std::vector<bool>(corpus.ids.size(), true), 100, 2, &out);
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_EQ(out, "");
    RecordingOutput at;
    uint64_t written = 1;
    status =
        CopyAtOffsets(corpus, std::vector<bool>(corpus.ids.size(), true), 100, 2, &at, &written);
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_EQ(written, 0u);
    EXPECT_EQ(at.FurthestEnd(), 0u);
  }
}

TEST_F(KeptRecordsTest, AFileChangedBetweenThePassesIsDataLoss) {
  const std::string path = Write("a.jsonl", EdgyJsonl(30, false, true));
  FingerprintedCorpus corpus = Collect({path}, InputOptions{});
  const std::vector<bool> keep(corpus.ids.size(), true);
  std::string out;
  // Appended to: another size.
  Write("a.jsonl", EdgyJsonl(30, false, true) + "{\"text\": \"more\"}\n");
  Status status = Copy(corpus, keep, 100, 2, &out);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("the inputs changed"), std::string::npos) << status;
  // The same size, rewritten with its lines shifted by a byte, and a first
  // pass that saw these modification and status change times: the line
  // check notices.
  std::string shifted = EdgyJsonl(30, false, true);
  Write("a.jsonl", " " + shifted.substr(0, shifted.size() - 1));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  corpus.record_files[0].modified_ns = internal::TimeNanoseconds(st.st_mtim);
  corpus.record_files[0].changed_ns = internal::TimeNanoseconds(st.st_ctim);
  out.clear();
  status = Copy(corpus, keep, 100, 2, &out);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status;
  {
    RecordingOutput at;
    uint64_t written = 1;
    EXPECT_EQ(CopyAtOffsets(corpus, keep, 100, 2, &at, &written).code(), StatusCode::kDataLoss);
    EXPECT_LT(at.FurthestEnd(), Expected({path}, InputOptions{}, keep).size());
  }
  // Gone.
  std::filesystem::remove(path);
  EXPECT_EQ(Copy(corpus, keep, 100, 2, &out).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace neardup
