// Extraction throughput per format (neardup/document_extractor.h): MB/s of
// input file per core (bytes_per_second, from the thread's CPU time) and of
// extracted text (the text_MB/s counter), one thread, on synthetic
// documents of ~200 KB of text (deterministic pseudo-words in paragraphs;
// the fixtures' writers of src/extract/extract_test_util.h): a 40-page PDF
// with Flate-compressed content streams, a DOCX and an ODT with 400
// paragraphs and a table, an HTML page, a WARC of 50 HTML responses.
// BM_Parallel extracts 16 DOCX files with ExtractDocumentsInParallel
// (real time, all oneTBB workers).
//   build/release/bench/extract_bench --benchmark_min_time=0.5
// Figures: docs/BENCHMARKS.md ("Document extraction").
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "extract/extract_test_util.h"
#include "neardup/document_extractor.h"

namespace neardup {
namespace {

using namespace internal::testing;  // the fixture writers

std::vector<std::string> Paragraphs(size_t count) {
  std::mt19937_64 rng(21);
  static const char* kSyllables[] = {"ta", "ri", "mon", "el", "sa", "ko", "ven", "du", "li", "ar"};
  std::vector<std::string> paragraphs;
  for (size_t p = 0; p < count; ++p) {
    std::string text;
    for (int w = 0; w < 80; ++w) {
      if (w > 0) text += ' ';
      for (int s = 0, n = 1 + static_cast<int>(rng() % 3); s < n; ++s)
        text += kSyllables[rng() % 10];
    }
    paragraphs.push_back(text);
  }
  return paragraphs;
}

std::string Pdf() {
  std::vector<std::vector<std::string>> pages(40);
  std::vector<std::string> paragraphs = Paragraphs(400);
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    for (const std::string& line : Wrap(paragraphs[i], 90)) pages[i / 10].push_back(line);
  }
  return MakeTextPdf(pages, 8);
}

std::string Docx() {
  std::string body;
  for (const std::string& p : Paragraphs(400)) body += "<w:p><w:r><w:t>" + p + "</w:t></w:r></w:p>";
  body += "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>a cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>";
  return MakeDocx(DocxXml(body));
}

std::string Odt() {
  std::string body;
  for (const std::string& p : Paragraphs(400)) body += "<text:p>" + p + "</text:p>\n";
  return MakeOdt(OdtXml(body));
}

std::string Html() {
  std::string html =
      "<!DOCTYPE html><html><head><title>bench</title><script>var x = 1;</script>"
      "</head><body><nav><a href=/>home</a></nav>";
  for (const std::string& p : Paragraphs(400)) html += "<div class=c><p>" + p + "</p></div>\n";
  return html + "</body></html>";
}

std::string Warc() {
  std::string warc;
  std::vector<std::string> paragraphs = Paragraphs(400);
  for (int r = 0; r < 50; ++r) {
    std::string page = "<html><head><title>r</title></head><body>";
    for (int p = 0; p < 8; ++p) page += "<p>" + paragraphs[r * 8 + p] + "</p>";
    warc += WarcRecord("response", "http://example.com/" + std::to_string(r),
                       "2024-01-01T00:00:00Z", "application/http; msgtype=response",
                       HttpResponse("text/html", page + "</body></html>"));
  }
  return warc;
}

void Run(benchmark::State& state, const std::string& file, DocumentFormat format) {
  uint64_t text_bytes = 0;
  for (auto _ : state) {
    Result<ExtractionResult> result = ExtractDocuments(file, "bench", format, {});
    if (!result.ok()) {
      state.SkipWithError(result.status().message().c_str());
      return;
    }
    for (const ExtractedDocument& doc : result->documents) text_bytes += doc.text.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.size()));
  state.counters["text_MB/s"] =
      benchmark::Counter(static_cast<double>(text_bytes) / 1e6, benchmark::Counter::kIsRate);
  state.counters["file_KB"] = static_cast<double>(file.size()) / 1e3;
}

void BM_Pdf(benchmark::State& state) {
  static const std::string file = Pdf();
  Run(state, file, DocumentFormat::kPdf);
}
void BM_Docx(benchmark::State& state) {
  static const std::string file = Docx();
  Run(state, file, DocumentFormat::kDocx);
}
void BM_Odt(benchmark::State& state) {
  static const std::string file = Odt();
  Run(state, file, DocumentFormat::kOdt);
}
void BM_Html(benchmark::State& state) {
  static const std::string file = Html();
  Run(state, file, DocumentFormat::kHtml);
}
void BM_Warc(benchmark::State& state) {
  static const std::string file = Warc();
  Run(state, file, DocumentFormat::kWarc);
}
BENCHMARK(BM_Pdf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Docx)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Odt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Html)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Warc)->Unit(benchmark::kMillisecond);

void BM_Parallel(benchmark::State& state) {
  static const std::string file = Docx();
  std::vector<ExtractionInput> inputs(16, ExtractionInput{file, "bench", DocumentFormat::kDocx});
  for (auto _ : state) {
    std::vector<Result<ExtractionResult>> results = ExtractDocumentsInParallel(inputs, {});
    benchmark::DoNotOptimize(results);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * inputs.size() * file.size()));
}
BENCHMARK(BM_Parallel)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
