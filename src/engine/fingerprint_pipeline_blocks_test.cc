// The parallel chunked pipeline against DocumentReader::Next, the serial
// reference: the same documents, skip reports, errors and formatted output,
// whatever the thread count and the chunk size (tiny chunks put a boundary
// inside almost every line).
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/fingerprint_json.h"
#include "io/io_test_util.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/recipe.h"

namespace neardup {
namespace {

using internal::testing::ReadAll;
using internal::testing::ReadOutcome;

// What the pipeline delivered, in the reference's shape.
struct PipelineOutcome {
  ReadOutcome read;
  std::string formatted;
  std::string formatted_by_sink;  // the same lines, formatted serially
};

std::unique_ptr<Fingerprinter> MinhashAndSimhash() {
  SketchSelection selection;
  selection.simhash = true;
  selection.minhash = true;
  return std::move(CreateCpuFingerprinter(*PresetRecipe("default"), selection)).value();
}

void Format(std::span<const Document> documents, std::span<const Fingerprint> fingerprints,
            const Fingerprinter& fingerprinter, std::string* out) {
  for (size_t i = 0; i < documents.size(); ++i) {
    internal::AppendFingerprintJson(out, documents[i].id, fingerprints[i],
                                    fingerprinter.selection(), 64, "r");
    out->push_back('\n');
  }
}

PipelineOutcome RunPipeline(const std::vector<std::string>& inputs, InputOptions options,
                            size_t batch_bytes, int threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  PipelineOutcome outcome;
  options.on_skip = [&](const SkippedRecord& r) { outcome.read.skipped.push_back(r); };
  auto reader = DocumentReader::Open(inputs, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto fingerprinter = MinhashAndSimhash();
  FingerprintPipelineOptions pipeline;
  pipeline.batch_bytes = batch_bytes;
  pipeline.batch_documents = 2;
  outcome.read.status = RunFingerprintPipeline(
      **reader, *fingerprinter, pipeline,
      [&](std::span<const Document> docs, std::span<const Fingerprint> fps, std::string* out) {
        Format(docs, fps, *fingerprinter, out);
      },
      [&](std::span<const Document> docs, std::span<const Fingerprint> fps,
          std::string_view formatted) {
        outcome.formatted.append(formatted);
        Format(docs, fps, *fingerprinter, &outcome.formatted_by_sink);
        for (const Document& doc : docs) outcome.read.documents.push_back(doc);
        return Status::Ok();
      });
  EXPECT_EQ((*reader)->documents_read(), outcome.read.documents.size());
  EXPECT_EQ((*reader)->records_skipped(), outcome.read.skipped.size());
  return outcome;
}

// The reference's formatted output: one Compute per document.
std::string FormatSerially(const ReadOutcome& reference) {
  auto fingerprinter = MinhashAndSimhash();
  std::string out;
  for (const Document& doc : reference.documents) {
    Fingerprint fp;
    EXPECT_TRUE(fingerprinter->Compute(doc.text, &fp).ok());
    Format(std::span<const Document>(&doc, 1), std::span<const Fingerprint>(&fp, 1), *fingerprinter,
           &out);
  }
  return out;
}

void ExpectSameAsReader(const std::vector<std::string>& inputs, const InputOptions& options,
                        const std::vector<size_t>& batch_sizes) {
  ReadOutcome reference = ReadAll(inputs, options);
  const std::string expected = FormatSerially(reference);
  for (size_t batch_bytes : batch_sizes) {
    for (int threads : {1, 2, 3, 8}) {
      SCOPED_TRACE("batch_bytes " + std::to_string(batch_bytes) + ", threads " +
                   std::to_string(threads));
      PipelineOutcome got = RunPipeline(inputs, options, batch_bytes, threads);
      EXPECT_EQ(got.read.status.ToString(), reference.status.ToString());
      ASSERT_EQ(got.read.documents.size(), reference.documents.size());
      for (size_t i = 0; i < reference.documents.size(); ++i) {
        EXPECT_EQ(got.read.documents[i].id, reference.documents[i].id) << i;
        EXPECT_EQ(got.read.documents[i].text, reference.documents[i].text) << i;
        EXPECT_EQ(got.read.documents[i].raw_record, reference.documents[i].raw_record) << i;
      }
      ASSERT_EQ(got.read.skipped.size(), reference.skipped.size());
      for (size_t i = 0; i < reference.skipped.size(); ++i) {
        EXPECT_EQ(got.read.skipped[i].source, reference.skipped[i].source) << i;
        EXPECT_EQ(got.read.skipped[i].line, reference.skipped[i].line) << i;
        EXPECT_EQ(got.read.skipped[i].id, reference.skipped[i].id) << i;
        EXPECT_EQ(got.read.skipped[i].reason, reference.skipped[i].reason) << i;
      }
      EXPECT_EQ(got.formatted, expected);
      EXPECT_EQ(got.formatted_by_sink, expected);
    }
  }
}

// Seeded lines of every kind the reader treats specially.
std::string MessyJsonl(uint64_t seed, int lines, bool bom) {
  std::mt19937_64 rng(seed);
  std::string out = bom ? "\xEF\xBB\xBF" : "";
  for (int i = 0; i < lines; ++i) {
    std::string words;
    const int num_words = static_cast<int>(rng() % 40);
    for (int w = 0; w < num_words; ++w) words += "w" + std::to_string(rng() % 50) + " ";
    switch (rng() % 12) {
      case 0:
        out += "\n";  // empty
        break;
      case 1:
        out += " \t \r\n";  // blank
        break;
      case 2:
        out += "{\"text\": \"no id " + words + "\"}\r\n";  // id from the line number
        break;
      case 3:
        out += "{\"id\": \"bad" + std::to_string(i) + "\", \"text\": \"unterminated\n";
        break;
      case 4:
        out += "[1, 2]\n";  // not an object
        break;
      case 5:
        out += "{\"id\": 7, \"title\": \"no text\"}\n";
        break;
      case 6:
        out += "{\"id\": \"utf" + std::to_string(i) + "\", \"text\": \"caf\xC3 " + words + "\"}\n";
        break;
      case 7:
        out += "{\"id\": \"long" + std::to_string(i) + "\", \"text\": \"" +
               std::string(300 + rng() % 300, 'x') + "\"}\n";  // over max_document_bytes
        break;
      default:
        out += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + words + "\\n esc\"}\n";
    }
  }
  out += "{\"text\": \"last line without a newline\"}";
  return out;
}

class FingerprintPipelineBlocksTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  internal::testing::TempDir temp_;
  std::filesystem::path dir_ = temp_.dir();
};

TEST_F(FingerprintPipelineBlocksTest, MessyJsonlIsReadAsTheReaderReadsIt) {
  InputOptions options;
  options.max_document_bytes = 400;
  options.keep_raw_records = true;
  const std::string path = Write("messy.jsonl", MessyJsonl(1, 300, /*bom=*/true));
  ExpectSameAsReader({path}, options, {1, 5, 64, 1000, size_t{8} << 20});
}

TEST_F(FingerprintPipelineBlocksTest, ADirectoryOfMixedAndCompressedInputs) {
  InputOptions options;
  options.max_document_bytes = 400;
  Write("d/a.jsonl", MessyJsonl(2, 80, false));
  Write("d/b.txt", "a plain text document with some words");
  Write("d/c.txt", std::string(1000, 'y'));  // over max_document_bytes
  Write("d/e.jsonl.gz", internal::testing::Gzip(MessyJsonl(3, 80, true)));
  Write("d/f.jsonl.zst", internal::testing::Zstd(MessyJsonl(4, 80, false)));
  Write("d/g.txt", "another text");
  Write("d/h.jsonl", "");
  Write("d/sub/i.txt", "deeper text");
  ExpectSameAsReader({(dir_ / "d").string(), Write("top.jsonl", MessyJsonl(5, 30, false))}, options,
                     {1, 37, 4096});
}

TEST_F(FingerprintPipelineBlocksTest, ATruncatedStreamFailsAfterTheSameDocuments) {
  std::string lines;
  for (int i = 0; i < 400; ++i) {
    lines += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"words of line " +
             std::to_string(i) + "\"}\n";
  }
  std::string gz = internal::testing::Gzip(lines);
  gz.resize(gz.size() * 2 / 3);
  const std::string path = Write("cut.jsonl.gz", gz);
  ReadOutcome reference = ReadAll({path});
  ASSERT_FALSE(reference.status.ok());
  ASSERT_GT(reference.documents.size(), 0u);
  ExpectSameAsReader({path}, InputOptions{}, {1, 100, 4096});
}

TEST_F(FingerprintPipelineBlocksTest, LinesLongerThanTheChunk) {
  std::string lines;
  for (int i = 0; i < 20; ++i) {
    lines += "{\"text\": \"" + std::string(5000 * (i % 4), 'a' + i % 26) + " end\"}\n";
  }
  InputOptions options;
  options.max_document_bytes = 12000;  // lines of ~15000 bytes are passed over
  ExpectSameAsReader({Write("long.jsonl", lines)}, options, {1, 4096});
}

TEST_F(FingerprintPipelineBlocksTest, RealCorpusWhenPresent) {
  const std::string path = std::string(NEARDUP_SOURCE_DIR) + "/cache/corpora/spamassassin.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  ExpectSameAsReader({path}, InputOptions{}, {size_t{1} << 20});
}

}  // namespace
}  // namespace neardup
