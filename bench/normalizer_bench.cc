// Normalizer throughput (text/normalizer.h) on real text: MB/s of
// Normalize per document, one thread, by CPU path and options (the default
// preset's nfkc + case_fold; the paper preset's, which also removes
// punctuation). bytes_per_second is from the thread's CPU time.
//
// Data: cache/corpora/spamassassin.jsonl (scripts/fetch_corpora.sh), or any
// JSONL file named by NEARDUP_BENCH_CORPUS, e.g. the translated man pages of
// scripts/make_i18n_corpus.sh:
//   NEARDUP_BENCH_CORPUS=cache/corpora/manpages_i18n.jsonl
//     build/release/bench/normalizer_bench --benchmark_min_time=1
// (one command line).
// docs/FINGERPRINT_SPEED.md has the figures.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "hash/cpu_path.h"
#include "text/normalizer.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<std::string> texts;
  uint64_t bytes = 0;
};

const Corpus& LoadCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    c->texts = bench::LoadBenchTexts("normalizer_bench");
    for (const std::string& text : c->texts) c->bytes += text.size();
    return c;
  }();
  return *corpus;
}

void BM_Normalize(benchmark::State& state, internal::CpuPath path, bool remove_punctuation) {
  if (!internal::CpuSupports(path)) {
    state.SkipWithError("CPU path not supported");
    return;
  }
  const Corpus& corpus = LoadCorpus();
  NormalizationOptions options;
  options.remove_punctuation = remove_punctuation;
  std::string out;
  for (auto _ : state) {
    for (const std::string& text : corpus.texts) {
      internal::Normalize(text, options, &out, nullptr, path);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.bytes));
}

BENCHMARK_CAPTURE(BM_Normalize, default_portable, internal::CpuPath::kPortable, false)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Normalize, default_avx512, internal::CpuPath::kAvx512, false)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Normalize, paper_portable, internal::CpuPath::kPortable, true)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Normalize, paper_avx512, internal::CpuPath::kAvx512, true)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
