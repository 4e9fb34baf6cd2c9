// The parallel chunked pipeline against DocumentReader::Next, the serial
// reference: the same documents, skip reports, errors and formatted output,
// whatever the thread count and the chunk size (tiny chunks put a boundary
// inside almost every line).
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <filesystem>
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

// With `views`, through RunFingerprintViewPipeline (no Documents made; the
// outcome's raw_records are then left empty).
PipelineOutcome RunPipeline(const std::vector<std::string>& inputs, InputOptions options,
                            size_t batch_bytes, int threads, bool views) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  PipelineOutcome outcome;
  options.on_skip = [&](const SkippedRecord& r) { outcome.read.skipped.push_back(r); };
  auto reader = DocumentReader::Open(inputs, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto fingerprinter = MinhashAndSimhash();
  FingerprintPipelineOptions pipeline;
  pipeline.batch_bytes = batch_bytes;
  pipeline.batch_documents = 2;
  if (views) {
    auto as_documents = [](const DocumentViews& docs) {
      std::vector<Document> documents(docs.ids.size());
      for (size_t i = 0; i < documents.size(); ++i) {
        documents[i].id = docs.ids[i];
        documents[i].text = docs.texts[i];
      }
      return documents;
    };
    outcome.read.status = RunFingerprintViewPipeline(
        **reader, *fingerprinter, pipeline,
        [&](const DocumentViews& docs, std::span<const Fingerprint> fps, std::string* out) {
          Format(as_documents(docs), fps, *fingerprinter, out);
        },
        [&](const DocumentViews& docs, std::span<const Fingerprint> fps,
            std::string_view formatted) {
          outcome.formatted.append(formatted);
          std::vector<Document> documents = as_documents(docs);
          Format(documents, fps, *fingerprinter, &outcome.formatted_by_sink);
          for (Document& doc : documents) outcome.read.documents.push_back(std::move(doc));
          return Status::Ok();
        });
  } else {
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
  }
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
    // Plain files are chunked from a mapping unless map_files is off; the
    // serial reference always reads a stream.
    // The view path (the CLI's) at some thread counts, the Document path
    // at all.
    struct Run {
      int threads;
      bool map_files;
      bool views;
    };
    for (Run run : {Run{1, true, false}, Run{2, true, false}, Run{3, true, false},
                    Run{8, true, false}, Run{1, false, false}, Run{3, false, false},
                    Run{1, true, true}, Run{3, true, true}, Run{2, false, true}}) {
      const int threads = run.threads;
      SCOPED_TRACE("batch_bytes " + std::to_string(batch_bytes) + ", threads " +
                   std::to_string(threads) + ", map_files " + std::to_string(run.map_files) +
                   ", views " + std::to_string(run.views));
      InputOptions run_options = options;
      run_options.map_files = run.map_files;
      PipelineOutcome got = RunPipeline(inputs, run_options, batch_bytes, threads, run.views);
      EXPECT_EQ(got.read.status.ToString(), reference.status.ToString());
      ASSERT_EQ(got.read.documents.size(), reference.documents.size());
      for (size_t i = 0; i < reference.documents.size(); ++i) {
        EXPECT_EQ(got.read.documents[i].id, reference.documents[i].id) << i;
        EXPECT_EQ(got.read.documents[i].text, reference.documents[i].text) << i;
        if (!run.views) {
          EXPECT_EQ(got.read.documents[i].raw_record, reference.documents[i].raw_record) << i;
        }
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
    switch (rng() % 15) {
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
      case 8:  // escapes everywhere: the id, a surrogate pair, every short escape
        out += "{\"id\": \"\\u0065sc" + std::to_string(i) + "\", \"text\": \"\\ud83d\\ude00 " +
               words + "\\\"q\\\" \\\\ \\/ \\b\\f\\r\\t\\u00e9\\u20AC\"}\n";
        break;
      case 9:  // invalid escapes: a lone surrogate, an unknown escape
        out += rng() % 2 == 0
                   ? "{\"id\": \"ls" + std::to_string(i) + "\", \"text\": \"a \\ud800 b\"}\n"
                   : "{\"id\": \"ue" + std::to_string(i) + "\", \"text\": \"a \\x b\"}\n";
        break;
      case 10:  // invalid UTF-8 next to escapes, and a numeric id
        out += "{\"id\": " + std::to_string(i) + ", \"text\": \"\\n\xFF " + words + "\\u00e9\"}\n";
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
    return temp_.Write(name, bytes);
  }

  test_support::TempDir temp_;
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

TEST_F(FingerprintPipelineBlocksTest, MappedInputEdges) {
  InputOptions options;
  options.max_document_bytes = 100;
  const std::string line = "{\"id\": \"p\", \"text\": \"page sized\"}\n";
  // Exactly one page: the padding past the last line is the extra zero page.
  std::string page_file;
  while (page_file.size() + line.size() <= 4096) page_file += line;
  page_file += std::string(4095 - page_file.size(), ' ') + "\n";
  ASSERT_EQ(page_file.size(), 4096u);
  ExpectSameAsReader({Write("page.jsonl", page_file)}, options, {1, 64, 4096});
  // A last line without "\n", too long, ending in "\r"; one too long with
  // "\r\n"; one of exactly max_document_bytes + 1 with its "\r".
  const std::string text = "{\"text\": \"" + std::string(150, 'z') + "\"}";
  const std::string edge = "{\"text\": \"" + std::string(100 - 12, 'q') + "\"}\r\n";
  ExpectSameAsReader({Write("tail1.jsonl", line + text + "\r\n" + edge + line + text + "\r")},
                     options, {1, 16, 64, 4096});
  ExpectSameAsReader({Write("tail2.jsonl", text + "\n" + line + text)}, options, {1, 16, 4096});
}

// The records dedup writes for `keep`, read the old way: DocumentReader::Next
// with keep_raw_records.
std::string KeptRecordsSerially(const std::vector<std::string>& inputs, InputOptions options,
                                const std::vector<bool>& keep, std::vector<std::string>* ids) {
  options.keep_raw_records = true;
  ReadOutcome reference = ReadAll(inputs, options);
  EXPECT_TRUE(reference.status.ok()) << reference.status;
  std::string out;
  for (size_t i = 0; i < reference.documents.size(); ++i) {
    ids->push_back(reference.documents[i].id);
    if (keep[i % keep.size()]) out += reference.documents[i].raw_record + "\n";
  }
  return out;
}

Status CopyKept(const std::vector<std::string>& inputs, InputOptions options,
                const std::vector<std::string>& ids, const std::vector<bool>& keep,
                size_t batch_bytes, int threads, std::string* out) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  auto reader = DocumentReader::Open(inputs, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  FingerprintPipelineOptions pipeline;
  pipeline.batch_bytes = batch_bytes;
  return CopyKeptRecords(**reader, ids, keep, pipeline, [&](std::string_view records) {
    out->append(records);
    return Status::Ok();
  });
}

TEST_F(FingerprintPipelineBlocksTest, CopyKeptRecordsWritesWhatTheSerialPassWrote) {
  InputOptions options;
  options.max_document_bytes = 400;
  Write("d/a.jsonl", MessyJsonl(6, 120, true));
  Write("d/b.jsonl.gz", internal::testing::Gzip(MessyJsonl(7, 60, false)));
  Write("d/c.jsonl.zst", internal::testing::Zstd(MessyJsonl(8, 60, true)));
  const std::vector<std::string> inputs = {(dir_ / "d").string(),
                                           Write("e.jsonl", MessyJsonl(9, 50, false))};
  std::vector<std::string> ids;
  const std::vector<bool> pattern = {true, false, false, true, true};
  const std::string expected = KeptRecordsSerially(inputs, options, pattern, &ids);
  std::vector<bool> keep(ids.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = pattern[i % pattern.size()];
  ASSERT_GT(expected.size(), 1000u);
  for (bool map_files : {true, false}) {
    for (size_t batch_bytes : {size_t{1}, size_t{300}, size_t{1} << 20}) {
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE("map_files " + std::to_string(map_files) + ", batch_bytes " +
                     std::to_string(batch_bytes) + ", threads " + std::to_string(threads));
        InputOptions run_options = options;
        run_options.map_files = map_files;
        std::string got;
        EXPECT_TRUE(CopyKept(inputs, run_options, ids, keep, batch_bytes, threads, &got).ok());
        EXPECT_EQ(got, expected);
      }
    }
  }
}

TEST_F(FingerprintPipelineBlocksTest, CopyKeptRecordsNoticesChangedInputs) {
  const std::string path = Write("a.jsonl", MessyJsonl(10, 80, false));
  std::vector<std::string> ids;
  const std::vector<bool> all = {true};
  KeptRecordsSerially({path}, InputOptions{}, all, &ids);
  ASSERT_GT(ids.size(), 10u);
  std::string got;
  // An id that differs, one document too many, one too few.
  std::vector<std::string> renamed = ids;
  renamed[7] = "other";
  Status status =
      CopyKept({path}, InputOptions{}, renamed, std::vector<bool>(ids.size(), true), 64, 2, &got);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("(document 7)"), std::string::npos) << status;
  std::vector<std::string> fewer(ids.begin(), ids.end() - 1);
  status =
      CopyKept({path}, InputOptions{}, fewer, std::vector<bool>(fewer.size(), true), 64, 2, &got);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  std::vector<std::string> more = ids;
  more.push_back("extra");
  status =
      CopyKept({path}, InputOptions{}, more, std::vector<bool>(more.size(), true), 64, 2, &got);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status;
}

TEST_F(FingerprintPipelineBlocksTest, RealCorpusWhenPresent) {
  const std::string path = std::string(NEARDUP_SOURCE_DIR) + "/cache/corpora/spamassassin.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  ExpectSameAsReader({path}, InputOptions{}, {size_t{1} << 20});
}

}  // namespace
}  // namespace neardup
