// Fingerprint throughput on real text: MB/s for each preset and sketch, on one
// thread (Compute per document; bytes_per_second from the thread's CPU time,
// so other load on a shared machine does not count) and on 1, 2 and all
// cores (ComputeBatch in a oneTBB arena of that many threads; wall time);
// OneThreadFlatBatch is OneThreadBatch into a FingerprintBatch.
// NEARDUP_CPU_PATH=reference|portable|avx2|avx512 picks the implementation
// (hash/cpu_path.h).
//
// Data: the SpamAssassin bodies fetched by scripts/fetch_corpora.sh
// (cache/corpora/spamassassin.jsonl), any JSONL file named by
// NEARDUP_BENCH_CORPUS, or, with NEARDUP_BENCH_CORPUS=synthetic:http_load,
// 3,000 texts of about 3 KB made as bench/server/http_load makes its fresh
// POSTs (8-word phrases of w0..w19999, fixed seeds; no file needed;
// without its edited copies of every fifth document). sketch:5 is
// what a MinHash stream computes per document (MinHash, k-value MinHash,
// chunks; src/engine/near_duplicates.cc, SketchesForNearDuplicates). Run:
//   scripts/fetch_corpora.sh
//   build/release/bench/fingerprint_bench --benchmark_min_time=1
// docs/FINGERPRINT_SPEED.md has the figures.
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_corpus.h"
#include "neardup/fingerprinter.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<std::string> texts;
  std::vector<std::string_view> views;
  uint64_t bytes = 0;
};

uint64_t SplitMix64Next(uint64_t* state) {
  *state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// bench/server/http_load's texts: 4096 phrases of 8 words of w0..w19999,
// about 45 random phrases per 3 KB text.
std::vector<std::string> HttpLoadTexts() {
  uint64_t rng = 0x9b1a5e;
  std::vector<std::string> phrases;
  for (int i = 0; i < 4096; ++i) {
    std::string phrase;
    for (int w = 0; w < 8; ++w) phrase += "w" + std::to_string(SplitMix64Next(&rng) % 20000) + " ";
    phrases.push_back(std::move(phrase));
  }
  std::vector<std::string> texts(3000);
  uint64_t pick = 0x5eed0000;
  for (std::string& text : texts) {
    while (text.size() < 3000) text += phrases[SplitMix64Next(&pick) % phrases.size()];
  }
  return texts;
}

const Corpus& LoadCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const char* env = std::getenv("NEARDUP_BENCH_CORPUS");
    if (env != nullptr && std::strcmp(env, "synthetic:http_load") == 0) {
      c->texts = HttpLoadTexts();
    } else {
      c->texts = bench::LoadBenchTexts("fingerprint_bench");
    }
    for (const std::string& text : c->texts) c->bytes += text.size();
    c->views.assign(c->texts.begin(), c->texts.end());
    return c;
  }();
  return *corpus;
}

enum Sketch { kSimHash, kMinHash, kKValue, kChunks, kAll, kStream };

SketchSelection Select(int sketch) {
  SketchSelection s;
  s.simhash = sketch == kSimHash || sketch == kAll;
  s.minhash = sketch == kMinHash || sketch == kAll || sketch == kStream;
  s.kvalue_minhash = sketch == kKValue || sketch == kAll || sketch == kStream;
  s.chunks = sketch == kChunks || sketch == kAll || sketch == kStream;
  return s;
}

// `flat`: ComputeBatch into a reused FingerprintBatch instead of a vector of
// Fingerprint structs.
void Run(benchmark::State& state, const char* preset, int minhash_shingles, int threads,
         bool flat = false) {
  const Corpus& corpus = LoadCorpus();
  Recipe recipe = *PresetRecipe(preset);
  if (minhash_shingles > 0) recipe.minhash.shingle_width = minhash_shingles;
  auto fingerprinter =
      std::move(CreateCpuFingerprinter(recipe, Select(static_cast<int>(state.range(0))))).value();
  std::vector<Fingerprint> out;
  FingerprintBatch flat_out;
  Fingerprint one;
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  for (auto _ : state) {
    if (threads != 0) {
      arena.execute([&] {
        if (flat) {
          Status s = fingerprinter->ComputeBatch(corpus.views, &flat_out);
          benchmark::DoNotOptimize(flat_out.num_tokens().data());
        } else {
          Status s = fingerprinter->ComputeBatch(corpus.views, &out);
          benchmark::DoNotOptimize(out.data());
        }
      });
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

// Compute on the calling thread; throughput per CPU second.
void SingleThread(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, 0);
}
void OneThreadBatch(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, 1);
}
void OneThreadFlatBatch(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, 1, /*flat=*/true);
}
void TwoThreads(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, 2);
}
void AllCores(benchmark::State& state, const char* preset, int shingles) {
  Run(state, preset, shingles, -1);
}

#define NEARDUP_FINGERPRINT_ARGS(b) \
  b->ArgName("sketch")              \
      ->Arg(kSimHash)               \
      ->Arg(kMinHash)               \
      ->Arg(kKValue)                \
      ->Arg(kChunks)                \
      ->Arg(kAll)                   \
      ->Arg(kStream)                \
      ->Unit(benchmark::kMillisecond)
#define NEARDUP_FINGERPRINT_BENCH(fn, preset, shingles, name) \
  NEARDUP_FINGERPRINT_ARGS(BENCHMARK_CAPTURE(fn, name, preset, shingles))
#define NEARDUP_FINGERPRINT_BENCH_WALL(fn, preset, shingles, name) \
  NEARDUP_FINGERPRINT_ARGS(BENCHMARK_CAPTURE(fn, name, preset, shingles))->UseRealTime()

NEARDUP_FINGERPRINT_BENCH(SingleThread, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "default-v1", 0, default_v1);  // before issue 20
NEARDUP_FINGERPRINT_BENCH(SingleThread, "default", 3, default_minhash_k3);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "paper", 0, paper);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "paper", 3, paper_minhash_k3);
NEARDUP_FINGERPRINT_BENCH(SingleThread, "short", 0, short);
NEARDUP_FINGERPRINT_BENCH_WALL(OneThreadBatch, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH_WALL(OneThreadBatch, "paper", 0, paper);
NEARDUP_FINGERPRINT_BENCH_WALL(OneThreadFlatBatch, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH_WALL(OneThreadFlatBatch, "paper", 0, paper);
NEARDUP_FINGERPRINT_BENCH_WALL(TwoThreads, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH_WALL(TwoThreads, "paper", 0, paper);
NEARDUP_FINGERPRINT_BENCH_WALL(AllCores, "default", 0, default);
NEARDUP_FINGERPRINT_BENCH_WALL(AllCores, "paper", 0, paper);
// The digest route (docs/EXLSH.md) computes SimHash only: one MD5 per shingle.
#define NEARDUP_DIGEST_BENCH(fn, preset, name) \
  BENCHMARK_CAPTURE(fn, name, preset, 0)       \
      ->ArgName("sketch")                      \
      ->Arg(kSimHash)                          \
      ->Unit(benchmark::kMillisecond)
NEARDUP_DIGEST_BENCH(SingleThread, "exlsh", exlsh);
NEARDUP_DIGEST_BENCH(SingleThread, "exlsh-chars", exlsh_chars);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
