#include "neardup/fingerprint_pipeline.h"
#include "support/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <filesystem>
#include <fstream>
#include <string>
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

}  // namespace
}  // namespace neardup
