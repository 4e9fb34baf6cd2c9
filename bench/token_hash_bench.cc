// XXH3 token hashing alone (text/token_hash_avx512.h) on real text: the
// default preset's normalized documents are scanned into word spans once,
// then each iteration hashes every document's spans. bytes_per_second is
// normalized text bytes per CPU second; tokens_per_second the spans.
// BM_Xxh3SpansAvx512 is the kernel, BM_Xxh3SpansScalar the inline scalar
// routine per token (the reference for what the kernel saves).
//
// Data: cache/corpora/spamassassin.jsonl (scripts/fetch_corpora.sh), or any
// JSONL file named by NEARDUP_BENCH_CORPUS, e.g. the translated man pages of
// scripts/make_i18n_corpus.sh:
//   NEARDUP_BENCH_CORPUS=cache/corpora/manpages_i18n.jsonl
//     build/release/bench/token_hash_bench --benchmark_min_time=1
// (one command line).
// docs/FINGERPRINT_SPEED.md (round 5, utf8-xxh3) has the figures.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "hash/cpu_path.h"
#include "hash/feature_hash.h"
#include "neardup/recipe.h"
#include "text/normalizer.h"
#include "text/token_hash_avx512.h"
#include "text/token_scan.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<std::string> texts;  // normalized
  std::vector<std::vector<internal::TokenSpan>> spans;
  uint64_t bytes = 0;
  uint64_t tokens = 0;
};

const Corpus& LoadCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const Recipe recipe = *PresetRecipe("default");
    for (const std::string& raw : bench::LoadBenchTexts("token_hash_bench")) {
      std::string normalized;
      internal::Normalize(raw, recipe.normalization, &normalized, nullptr);
      c->texts.push_back(std::move(normalized));
    }
    const internal::CpuPath cpu_path = internal::CpuSupports(internal::CpuPath::kAvx512)
                                           ? internal::CpuPath::kAvx512
                                           : internal::CpuPath::kPortable;
    for (const std::string& text : c->texts) {
      std::vector<internal::TokenSpan> spans;
      internal::TokenScanner scanner(recipe.tokenizer, cpu_path, text);
      internal::TokenSpan block[256];
      while (size_t n = scanner.Next(block, 256)) spans.insert(spans.end(), block, block + n);
      c->bytes += text.size();
      c->tokens += spans.size();
      c->spans.push_back(std::move(spans));
    }
    return c;
  }();
  return *corpus;
}

template <bool kAvx512>
void BM_Xxh3Spans(benchmark::State& state) {
  if (kAvx512 && !internal::CpuSupports(internal::CpuPath::kAvx512)) {
    state.SkipWithError("no AVX-512");
    return;
  }
  const Corpus& corpus = LoadCorpus();
  std::vector<uint64_t> out;
  for (auto _ : state) {
    for (size_t d = 0; d < corpus.texts.size(); ++d) {
      const std::vector<internal::TokenSpan>& spans = corpus.spans[d];
      out.resize(spans.size());
      if constexpr (kAvx512) {
        internal::Xxh3SpansAvx512(corpus.texts[d], spans.data(), spans.size(), 0, out.data());
      } else {
        const std::string_view text = corpus.texts[d];
        for (size_t i = 0; i < spans.size(); ++i) {
          out[i] = internal::Xxh3Hash(text.substr(spans[i].begin, spans[i].length), 0);
        }
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.bytes));
  state.counters["tokens_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * corpus.tokens), benchmark::Counter::kIsRate);
}

void BM_Xxh3SpansAvx512(benchmark::State& state) { BM_Xxh3Spans<true>(state); }
void BM_Xxh3SpansScalar(benchmark::State& state) { BM_Xxh3Spans<false>(state); }
BENCHMARK(BM_Xxh3SpansAvx512);
BENCHMARK(BM_Xxh3SpansScalar);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
