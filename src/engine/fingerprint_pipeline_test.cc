#include "neardup/fingerprint_pipeline.h"
#include "engine/corpus_reserve.h"
#include "engine/fingerprint_json.h"
#include "io/byte_stream.h"
#include "neardup/stage_time.h"
#include "support/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace neardup {
namespace {

using ::testing::ElementsAreArray;

class FingerprintPipelineTest : public ::testing::Test {
 protected:
  std::string WriteJsonl(int count) {
    std::string path = (dir_ / "docs.jsonl").string();
    std::ofstream out(path);
    for (int i = 0; i < count; ++i) {
      out << "{\"id\": \"doc" << i << "\", \"text\": \"document number " << i
          << " talks about topic " << i % 7 << " at some length\"}\n";
    }
    return path;
  }

  std::unique_ptr<DocumentReader> Open(const std::string& path) {
    Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
    NEARDUP_CHECK(reader.ok()) << reader.status();
    return std::move(reader).value();
  }

  std::unique_ptr<Fingerprinter> Simhash() {
    SketchSelection selection;
    selection.simhash = true;
    return std::move(CreateCpuFingerprinter(*PresetRecipe("default"), selection)).value();
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

TEST_F(FingerprintPipelineTest, DeliversEveryDocumentInInputOrder) {
  std::string path = WriteJsonl(1000);
  auto fingerprinter = Simhash();
  FingerprintPipelineOptions options;
  // Many small chunks (a JSONL batch is cut by bytes), so order is really tested.
  options.batch_bytes = 700;

  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) expected.push_back("doc" + std::to_string(i));

  std::vector<uint64_t> first_run;
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    auto reader = Open(path);
    std::vector<std::string> ids;
    std::vector<uint64_t> simhashes;
    FingerprintPipelineStats stats;
    Status status = RunFingerprintPipeline(
        *reader, *fingerprinter, options,
        [&](std::span<const Document> docs, std::span<const Fingerprint> fps) {
          EXPECT_EQ(docs.size(), fps.size());
          for (size_t i = 0; i < docs.size(); ++i) {
            ids.push_back(docs[i].id);
            simhashes.push_back(fps[i].simhash);
          }
          return Status::Ok();
        },
        &stats);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_THAT(ids, ElementsAreArray(expected));
    EXPECT_EQ(stats.documents, 1000u);
    if (first_run.empty()) {
      first_run = simhashes;
    } else {
      EXPECT_EQ(simhashes, first_run) << threads << " threads";
    }
  }
}

// InputOptions::on_line_id names, in order, each document whose id was made
// from its line, by its number among the reader's documents: across many
// small blocks, with ids, blank lines and a skipped line among them, and
// from first_line_number.
TEST_F(FingerprintPipelineTest, OnLineIdNamesTheDocumentsWhoseIdsAreTheirLines) {
  const std::string path = (dir_ / "mixed.jsonl").string();
  std::vector<std::string> expected_ids;
  std::vector<std::pair<uint64_t, uint64_t>> expected_calls;
  {
    std::ofstream out(path);
    uint64_t line = 6;  // numbered from 7 below
    for (int i = 0; i < 300; ++i) {
      ++line;
      if (i % 11 == 5) {
        out << "{not json\n";
        continue;
      }
      if (i % 13 == 7) {
        out << "\n";
        continue;
      }
      if (i % 3 == 0) {
        out << "{\"text\": \"line id " << i << " text\"}\n";
        expected_calls.emplace_back(expected_ids.size(), line);
        expected_ids.push_back("mixed.jsonl:" + std::to_string(line));
      } else {
        out << "{\"id\": \"own" << i << "\", \"text\": \"own id " << i << " text\"}\n";
        expected_ids.push_back("own" + std::to_string(i));
      }
    }
  }
  auto fingerprinter = Simhash();
  FingerprintPipelineOptions options;
  options.batch_bytes = 300;
  for (int threads : {1, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    InputOptions input;
    input.first_line_number = 7;
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    input.on_line_id = [&](uint64_t document, uint64_t line) {
      calls.emplace_back(document, line);
    };
    auto stream = std::ifstream(path);
    std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
    auto reader = DocumentReader::FromStream(internal::MakeStringStream(bytes), "mixed.jsonl",
                                             InputFormat::kJsonl, std::move(input));
    FingerprintedCorpus corpus;
    ASSERT_TRUE(CollectFingerprints(*reader, *fingerprinter, options, false, &corpus).ok());
    EXPECT_THAT(corpus.ids, ElementsAreArray(expected_ids)) << threads << " threads";
    EXPECT_THAT(calls, ElementsAreArray(expected_calls)) << threads << " threads";
  }
}

// Block reading passes over a byte order mark on a file's line 1 only, as
// Next does: a stream that starts inside a file (first_line_number > 1)
// keeps it, and the line is then not JSON (neardup-mpi's pieces read as
// the whole file is).
TEST_F(FingerprintPipelineTest, AByteOrderMarkCountsOnlyOnTheFilesFirstLine) {
  auto fingerprinter = Simhash();
  for (uint64_t first : {uint64_t{1}, uint64_t{41}}) {
    InputOptions input;
    input.first_line_number = first;
    std::vector<uint64_t> skipped;
    input.on_skip = [&](const SkippedRecord& record) { skipped.push_back(record.line); };
    auto reader = DocumentReader::FromStream(
        internal::MakeStringStream("\xEF\xBB\xBF{\"text\": \"b b\"}\n{\"text\": \"c c\"}\n"),
        "big.jsonl", InputFormat::kJsonl, std::move(input));
    FingerprintedCorpus corpus;
    ASSERT_TRUE(
        CollectFingerprints(*reader, *fingerprinter, FingerprintPipelineOptions{}, false, &corpus)
            .ok());
    if (first == 1) {
      EXPECT_THAT(corpus.ids, ElementsAreArray({"big.jsonl:1", "big.jsonl:2"}));
      EXPECT_TRUE(skipped.empty());
    } else {
      EXPECT_THAT(corpus.ids, ElementsAreArray({"big.jsonl:42"}));
      EXPECT_THAT(skipped, ElementsAreArray({uint64_t{41}}));
    }
  }
}

TEST_F(FingerprintPipelineTest, FlatPipelineWritesWhatTheFingerprintPipelineWrites) {
  std::string path = (dir_ / "mixed.jsonl").string();
  {
    std::ofstream out(path);
    for (int i = 0; i < 600; ++i) {
      out << "{\"id\": \"d" << i << "\", \"text\": \"";
      if (i % 50 != 0) {  // every 50th is empty: no tokens
        for (int w = 0; w < i % 37; ++w) out << "word" << (w * i) % 23 << (w % 5 == 0 ? ". " : " ");
        out << "caf\u00e9 \u6771\u4eac";
      }
      out << "\"}\n";
    }
  }
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  Recipe recipe = *PresetRecipe("default");
  recipe.simhash.bits = 128;
  auto fingerprinter = std::move(CreateCpuFingerprinter(recipe, all)).value();
  FingerprintPipelineOptions options;
  options.batch_bytes = 2000;  // many batches, recycled
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);

  std::string want;
  FingerprintPipelineStats want_stats;
  auto reader = Open(path);
  ASSERT_TRUE(
      RunFingerprintPipeline(
          *reader, *fingerprinter, options,
          [&](std::span<const Document> docs, std::span<const Fingerprint> fps, std::string* out) {
            for (size_t i = 0; i < docs.size(); ++i) {
              internal::AppendFingerprintJson(out, docs[i].id, fps[i], all, 128, "r");
            }
          },
          [&](std::span<const Document>, std::span<const Fingerprint>, std::string_view formatted) {
            want.append(formatted);
            return Status::Ok();
          },
          &want_stats)
          .ok());

  std::string got;
  FingerprintPipelineStats got_stats;
  size_t documents = 0;
  reader = Open(path);
  ASSERT_TRUE(
      RunFlatFingerprintPipeline(
          *reader, *fingerprinter, options,
          [&](const DocumentViews& docs, const FingerprintBatch& fps, std::string* out) {
            EXPECT_EQ(docs.ids.size(), fps.size());
            for (size_t i = 0; i < docs.ids.size(); ++i) {
              internal::AppendFingerprintJson(out, docs.ids[i], fps[i], all, 128, "r");
            }
          },
          [&](const DocumentViews& docs, const FingerprintBatch& fps, std::string_view formatted) {
            EXPECT_EQ(docs.ids.size(), fps.size());
            documents += fps.size();
            got.append(formatted);
            return Status::Ok();
          },
          &got_stats)
          .ok());
  EXPECT_EQ(documents, 600u);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_stats.documents, want_stats.documents);
  EXPECT_EQ(got_stats.bytes, want_stats.bytes);
  EXPECT_EQ(got_stats.empty_documents, 12u);
  EXPECT_EQ(got_stats.empty_documents, want_stats.empty_documents);
}

TEST_F(FingerprintPipelineTest, SinkErrorStopsThePipelineAndIsReturned) {
  std::string path = WriteJsonl(500);
  auto fingerprinter = Simhash();
  auto reader = Open(path);
  FingerprintPipelineOptions options;
  options.batch_bytes = 700;  // chunks of about ten lines
  int calls = 0;
  Status status =
      RunFingerprintPipeline(*reader, *fingerprinter, options,
                             [&](std::span<const Document>, std::span<const Fingerprint>) {
                               ++calls;
                               return calls == 3 ? IoError("disk full") : Status::Ok();
                             });
  EXPECT_EQ(status, IoError("disk full"));
  EXPECT_EQ(calls, 3);
}

TEST_F(FingerprintPipelineTest, EmptyInputDeliversNothing) {
  std::string path = WriteJsonl(0);
  auto fingerprinter = Simhash();
  auto reader = Open(path);
  int calls = 0;
  Status status =
      RunFingerprintPipeline(*reader, *fingerprinter, FingerprintPipelineOptions{},
                             [&](std::span<const Document>, std::span<const Fingerprint>) {
                               ++calls;
                               return Status::Ok();
                             });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 0);
}

TEST_F(FingerprintPipelineTest, CollectedSketchesAreEachDocumentsOwnAndSerialFiltersAreTimed) {
  // The delivery moves each document's sketches out of the recycled
  // batch: every document must still get its own (not a recycled slot's
  // earlier contents), at any thread count, over many small chunks.
  std::string path = WriteJsonl(1200);
  SketchSelection selection;
  selection.simhash = true;
  selection.minhash = true;
  selection.kvalue_minhash = true;
  selection.chunks = true;
  auto fingerprinter =
      std::move(CreateCpuFingerprinter(*PresetRecipe("default"), selection)).value();
  std::vector<Fingerprint> expected(1200);
  uint64_t text_bytes = 0;
  for (int i = 0; i < 1200; ++i) {
    const std::string text = "document number " + std::to_string(i) + " talks about topic " +
                             std::to_string(i % 7) + " at some length";
    text_bytes += text.size();
    ASSERT_TRUE(fingerprinter->Compute(text, &expected[i]).ok());
  }
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    auto reader = Open(path);
    FingerprintPipelineOptions options;
    options.batch_bytes = 700;  // about ten lines a chunk: batches are recycled
    SerialCpuTime serial;
    options.serial_time = &serial;
    StageTimer timer;
    FingerprintedCorpus corpus;
    // The counts are taken before the delivery moves the sketches out.
    FingerprintPipelineStats stats;
    ASSERT_TRUE(CollectFingerprints(*reader, *fingerprinter, options, false, &corpus, &stats).ok());
    const StageTime elapsed = timer.Elapsed();
    EXPECT_EQ(stats.documents, 1200u);
    EXPECT_EQ(stats.bytes, text_bytes);
    EXPECT_EQ(stats.empty_documents, 0u);
    ASSERT_EQ(corpus.fingerprints.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const Fingerprint& got = corpus.fingerprints[i];
      ASSERT_EQ(got.simhash, expected[i].simhash) << i;
      ASSERT_EQ(got.minhash, expected[i].minhash) << i;
      ASSERT_EQ(got.kvalue_minhash, expected[i].kvalue_minhash) << i;
      ASSERT_EQ(got.chunks, expected[i].chunks) << i;
      ASSERT_EQ(got.num_tokens, expected[i].num_tokens) << i;
    }
    // ~120 chunks each read, numbered and delivered in a serial filter:
    // some CPU time, and no more than the whole process used.
    EXPECT_GT(serial.seconds(), 0.0);
    EXPECT_LE(serial.seconds(), elapsed.cpu_seconds + 1e-3);
  }
}

TEST(SerialCpuTimeTest, SumsTheTimedStepsOfEveryThread) {
  SerialCpuTime sum;
  // Spins for `seconds` of this thread's CPU, inside a timed scope.
  auto busy = [&sum](double seconds) {
    SerialCpuTime::Scope timed(&sum);
    StageTimer timer;
    while (timer.Elapsed().main_cpu_seconds < seconds) {
    }
  };
  busy(0.02);
  EXPECT_GE(sum.seconds(), 0.02);
  const double one = sum.seconds();
  std::thread other([&] { busy(0.02); });
  busy(0.02);
  other.join();
  EXPECT_GE(sum.seconds(), one + 0.04);
  // Nested scopes on one thread count once: the inner adds nothing.
  {
    const double outer_start = sum.seconds();
    SerialCpuTime::Scope outer(&sum);
    busy(0.01);
    EXPECT_EQ(sum.seconds(), outer_start);
  }
  const double before = sum.seconds();
  {
    SerialCpuTime::Scope untimed(nullptr);  // no sum: nothing to add to
    StageTimer timer;
    while (timer.Elapsed().main_cpu_seconds < 0.005) {
    }
  }
  EXPECT_EQ(sum.seconds(), before);
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

using internal::CorpusReservation;
using internal::CorpusReserveInputs;

CorpusReserveInputs ReserveInputs() {
  CorpusReserveInputs in;
  in.block_documents = 1000;
  in.mapped_end = 1 << 20;
  in.file_size = uint64_t{256} << 20;
  in.document_bytes = 200;
  in.budget_bytes = uint64_t{1} << 30;
  return in;
}

TEST(CorpusReservationTest, ExpectsTheFilesDocumentsAtItsDensitySoFar) {
  CorpusReserveInputs in = ReserveInputs();
  // 1000 documents per MiB, 255 MiB left: 1000 + 1.1 * 255,000 + 64.
  EXPECT_NEAR(static_cast<double>(CorpusReservation(in)), 1000.0 + 280500.0 + 64.0, 1.0);
  // The block fits: nothing.
  in.capacity = 1000;
  EXPECT_EQ(CorpusReservation(in), 0u);
  // Nothing read yet: nothing.
  in = ReserveInputs();
  in.mapped_end = 0;
  EXPECT_EQ(CorpusReservation(in), 0u);
}

TEST(CorpusReservationTest, HostileNumbersStayWithinTheBudget) {
  // Tiny lines first, huge ones after: the density says billions.
  CorpusReserveInputs in = ReserveInputs();
  in.block_documents = 100000;
  in.mapped_end = 1 << 20;
  in.file_size = uint64_t{1} << 50;
  EXPECT_EQ(CorpusReservation(in), in.budget_bytes / in.document_bytes);
  // An expectation past 2^64 (no overflow in the conversion).
  in.file_size = ~uint64_t{0};
  in.mapped_end = 1;
  EXPECT_EQ(CorpusReservation(in), in.budget_bytes / in.document_bytes);
  // One huge line: one document in the whole file so far, nothing left.
  in = ReserveInputs();
  in.block_documents = 1;
  in.mapped_end = in.file_size;
  EXPECT_EQ(CorpusReservation(in), 1u + 64u);
  // A size of 0, and mapped_end past the size (a file that shrank).
  in = ReserveInputs();
  in.file_size = 0;
  EXPECT_EQ(CorpusReservation(in), 1000u + 64u);
  in.file_size = in.mapped_end / 2;
  EXPECT_EQ(CorpusReservation(in), 1000u + 64u);
  // A first document past the count (a stale estimate): no density.
  in.file_first_document = 5000;
  in.file_size = uint64_t{256} << 20;
  EXPECT_EQ(CorpusReservation(in), 1000u + 64u);
  // No budget: only the vectors' own growth step; zero bytes per document
  // does not divide by zero.
  in = ReserveInputs();
  in.held = 4000;
  in.capacity = 4000;
  in.budget_bytes = 0;
  EXPECT_EQ(CorpusReservation(in), 6000u);
  in.document_bytes = 0;
  EXPECT_EQ(CorpusReservation(in), 6000u);
}

// Under an address-space limit (`ulimit -v`), a file of tiny lines followed
// by huge ones (whose density promises millions of documents) is collected:
// the reservation is a hint capped by what the limit leaves, and never
// fails the run. In a fresh process (the limit is process-wide).
TEST(CorpusReservationDeathTest, ACollectUnderAnAddressSpaceLimitIsNotFailedByTheHint) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan maps terabytes of shadow memory";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test_support::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < (size_t{2} << 20); ++i) {
    text += "{\"text\":\"q" + std::to_string(i) + "\"}\n";
  }
  std::string huge;
  for (int i = 0; huge.size() < (size_t{10} << 20); ++i) {
    huge += "w" + std::to_string((i * 7919) % 200000) + " ";
  }
  for (int i = 0; i < 8; ++i) text += "{\"text\":\"" + huge + "\"}\n";
  const std::string path = dir.Write("tiny_then_huge.jsonl", text);
  text.clear();
  huge.clear();
  EXPECT_EXIT(
      {
        long page = ::sysconf(_SC_PAGESIZE);
        unsigned long long size_pages = 0;
        std::FILE* statm = std::fopen("/proc/self/statm", "r");
        if (statm == nullptr || std::fscanf(statm, "%llu", &size_pages) != 1) _exit(2);
        std::fclose(statm);
        struct rlimit limit {};
        limit.rlim_cur = limit.rlim_max =
            size_pages * static_cast<uint64_t>(page) + (uint64_t{768} << 20);
        if (::setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
        tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
        SketchSelection selection;
        selection.simhash = true;
        auto fingerprinter = CreateCpuFingerprinter(*PresetRecipe("default"), selection);
        if (!fingerprinter.ok()) _exit(4);
        auto reader = DocumentReader::Open({path}, InputOptions{});
        if (!reader.ok()) _exit(5);
        FingerprintedCorpus corpus;
        Status status = CollectFingerprints(**reader, **fingerprinter, FingerprintPipelineOptions{},
                                            false, &corpus);
        _exit(status.ok() && corpus.ids.size() > 100000 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
#endif
}

}  // namespace
}  // namespace neardup
