#include "neardup/fingerprint_pipeline.h"
#include "engine/fingerprint_json.h"
#include "neardup/stage_time.h"
#include "support/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
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
