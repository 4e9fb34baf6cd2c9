// Fingerprint throughput on real text: MB/s for each preset and sketch, on one
// thread (Compute per document) and on all cores (ComputeBatch).
//
// Data: the SpamAssassin bodies fetched by scripts/fetch_corpora.sh
// (cache/corpora/spamassassin.jsonl), or any JSONL file named by
// NEARDUP_BENCH_CORPUS. Run:
//   scripts/fetch_corpora.sh
//   build/release/bench/fingerprint_bench --benchmark_min_time=1s
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "neardup/document_reader.h"
#include "neardup/fingerprinter.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<std::string> texts;
  std::vector<std::string_view> views;
  uint64_t bytes = 0;
};

const Corpus& LoadCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const char* env = std::getenv("NEARDUP_BENCH_CORPUS");
    std::string path =
        env != nullptr ? env : NEARDUP_SOURCE_DIR "/cache/corpora/spamassassin.jsonl";
    Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
    if (!reader.ok()) {
      std::fprintf(stderr, "fingerprint_bench: %s (run scripts/fetch_corpora.sh)\n",
                   reader.status().ToString().c_str());
      std::exit(1);
    }
    Document doc;
    while (true) {
      Result<bool> next = (*reader)->Next(&doc);
      if (!next.ok() || !*next) break;
      c->bytes += doc.text.size();
      c->texts.push_back(std::move(doc.text));
    }
    c->views.assign(c->texts.begin(), c->texts.end());
    return c;
  }();
  return *corpus;
}

enum Sketch { kSimHash, kMinHash, kKValue, kChunks, kAll };

SketchSelection Select(int sketch) {
  SketchSelection s;
  s.simhash = sketch == kSimHash || sketch == kAll;
  s.minhash = sketch == kMinHash || sketch == kAll;
  s.kvalue_minhash = sketch == kKValue || sketch == kAll;
  s.chunks = sketch == kChunks || sketch == kAll;
  return s;
}

void Run(benchmark::State& state, const char* preset, int minhash_shingles, bool batch) {
  const Corpus& corpus = LoadCorpus();
  Recipe recipe = *PresetRecipe(preset);
  if (minhash_shingles > 0) recipe.minhash.shingle_width = minhash_shingles;
  auto fingerprinter =
      std::move(CreateCpuFingerprinter(recipe, Select(static_cast<int>(state.range(0))))).value();
  std::vector<Fingerprint> out;
  Fingerprint one;
  for (auto _ : state) {
    if (batch) {
      Status s = fingerprinter->ComputeBatch(corpus.views, &out);
      benchmark::DoNotOptimize(out.data());
    } else {
      for (std::string_view text : corpus.views) {
        Status s = fingerprinter->Compute(text, &one);
        benchmark::DoNotOptimize(one.simhash);
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.bytes));
  state.counters["docs"] = static_cast<double>(corpus.texts.size());
}

void SingleThread(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, false);
}
void AllCores(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, true);
}

#define NEARDUP_FINGERPRINT_BENCH(fn, preset, shingles, name) \
  BENCHMARK_CAPTURE(fn, name, preset, shingles)               \
      ->ArgName("sketch")                                     \
      ->Arg(kSimHash)                                         \
      ->Arg(kMinHash)                                         \
      ->Arg(kKValue)                                          \
      ->Arg(kChunks)                                          \
      ->Arg(kAll)                                             \
      ->Unit(benchmark::kMillisecond)                         \
      ->UseRealTime()

NEARDUP_FINGERPRINT_BENCH(SingleThread, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "default", 3, default_minhash_k3);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "paper", 0, paper);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "short", 0, short);
NEARDUP_FINGERPRINT_BENCH(AllCores, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH(AllCores, "paper", 0, paper);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
