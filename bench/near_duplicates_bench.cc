// Near-duplicate search at scale and its verification kernel on real data.
//
// BM_JaccardAtLeastRealSketches/<threshold x 100>: JaccardAtLeast pairs/s on
//   one core, on k = 128 bottom-k sketches of the SpamAssassin bodies
//   (cache/corpora/spamassassin.jsonl, `default` recipe): 90% random pairs of
//   real bodies, 10% pairs of a body and a synthetic near-duplicate of it
//   (word edits at 1%, 2%, 5% or 10%, bench/accuracy/synthetic_text.h).
// BM_JaccardAtLeastRealSketchesSummaries/threshold/pairs_api: the same pairs
//   with a BottomKSummary per sketch (one-pair call, or JaccardAtLeastPairs);
//   BM_SummarizeRealSketches: the one-time cost of those summaries.
// BM_AllPairsMinHash/docs/exact/fn_weight_pct: FindNearDuplicatePairs
//   (MinHash, threshold 0.8, k = 128, all cores; verification by sketch or
//   exact; LSH false_negative_weight in percent, false_positive_weight the
//   rest) over synthetic documents'
//   sketches: each document is 100 to 500 random 64-bit features; 1% of the
//   documents are planted near-duplicates of another, with exact Jaccard
//   uniform in [0.8, 1]. Reports the time of the call, peak RSS of the process
//   (getrusage; the sketches are most of it) and recall on the planted pairs.
//   Sketches are built straight from the features (the same builders the
//   fingerprinter uses); with verify_exact each document also carries the
//   32-bit ids of its features as its chunk set.
// Run:
//   scripts/fetch_corpora.sh
//   build/release/bench/near_duplicates_bench --benchmark_min_time=1
// Figures: docs/ACCURACY.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "accuracy/synthetic_text.h"
#include "neardup/fingerprinter.h"
#include "neardup/minhash.h"
#include "neardup/near_duplicates.h"
#include "neardup/similarity.h"
#include "util/mix.h"

namespace neardup {
namespace {

using accuracy::EditWords;
using accuracy::SplitWords;
using accuracy::Uniform01;
using accuracy::UniformBelow;

constexpr int kNumHashes = 128;

struct SketchPairs {
  std::vector<BottomKSketch> sketches;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  double near_duplicate_fraction = 0;
};

const SketchPairs& RealSketchPairs() {
  static const SketchPairs* data = [] {
    auto* d = new SketchPairs;
    accuracy::LoadedCorpus corpus =
        accuracy::LoadJsonlOrDie(NEARDUP_SOURCE_DIR "/cache/corpora/spamassassin.jsonl");
    internal::SplitMix64 rng(7);
    std::vector<std::string_view> texts(corpus.texts.begin(), corpus.texts.end());
    std::vector<std::string_view> vocabulary;
    for (std::string_view text : texts) {
      for (std::string_view word : SplitWords(text)) vocabulary.push_back(word);
    }
    // One edited copy of each body with at least 50 words.
    constexpr double kRates[] = {0.01, 0.02, 0.05, 0.10};
    std::vector<std::string> copies;
    std::vector<uint32_t> copy_source;
    for (size_t i = 0; i < corpus.texts.size(); ++i) {
      std::vector<std::string_view> words = SplitWords(texts[i]);
      if (words.size() < 50) continue;
      copies.push_back(EditWords(words, kRates[UniformBelow(rng, 4)], vocabulary, rng));
      copy_source.push_back(static_cast<uint32_t>(i));
    }
    const size_t num_real = texts.size();
    texts.insert(texts.end(), copies.begin(), copies.end());
    Recipe recipe = *PresetRecipe("default");
    recipe.minhash.num_hashes = kNumHashes;
    SketchSelection selection;
    selection.minhash = true;
    auto fingerprinter = std::move(CreateCpuFingerprinter(recipe, selection)).value();
    std::vector<Fingerprint> fps;
    if (!fingerprinter->ComputeBatch(texts, &fps).ok()) std::abort();
    for (Fingerprint& fp : fps) d->sketches.push_back(std::move(fp.minhash));

    constexpr size_t kPairs = 1 << 20;
    size_t near = 0;
    while (d->pairs.size() < kPairs) {
      if (Uniform01(rng) < 0.1) {
        size_t c = UniformBelow(rng, copies.size());
        d->pairs.emplace_back(copy_source[c], static_cast<uint32_t>(num_real + c));
        ++near;
      } else {
        d->pairs.emplace_back(static_cast<uint32_t>(UniformBelow(rng, num_real)),
                              static_cast<uint32_t>(UniformBelow(rng, num_real)));
      }
    }
    d->near_duplicate_fraction = static_cast<double>(near) / kPairs;
    return d;
  }();
  return *data;
}

void BM_JaccardAtLeastRealSketches(benchmark::State& state) {
  const SketchPairs& data = RealSketchPairs();
  const double threshold = static_cast<double>(state.range(0)) / 100.0;
  uint64_t accepted = 0;
  for (auto _ : state) {
    for (const auto& [a, b] : data.pairs) {
      double estimate = 0;
      accepted += *JaccardAtLeast(data.sketches[a], data.sketches[b], threshold, &estimate);
      benchmark::DoNotOptimize(estimate);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * data.pairs.size()));
  state.counters["accepted_fraction"] =
      static_cast<double>(accepted) / static_cast<double>(state.iterations() * data.pairs.size());
  state.counters["near_dup_fraction"] = data.near_duplicate_fraction;
}
BENCHMARK(BM_JaccardAtLeastRealSketches)->Arg(50)->Arg(80);

// The same pairs with a BottomKSummary per sketch (computed once, outside
// the timed loop: BM_SummarizeRealSketches is that cost). Arg 1: 0 = the
// one-pair call with summaries, 1 = JaccardAtLeastPairs over all pairs (what
// FindNearDuplicatePairs' verification calls).
void BM_JaccardAtLeastRealSketchesSummaries(benchmark::State& state) {
  const SketchPairs& data = RealSketchPairs();
  const double threshold = static_cast<double>(state.range(0)) / 100.0;
  std::vector<const BottomKSketch*> pointers;
  std::vector<BottomKSummary> summaries;
  for (const BottomKSketch& s : data.sketches) {
    pointers.push_back(&s);
    summaries.push_back(SummarizeBottomK(s));
  }
  std::vector<std::pair<uint64_t, uint64_t>> pairs(data.pairs.begin(), data.pairs.end());
  std::vector<uint8_t> accepted(pairs.size());
  std::vector<double> estimates(pairs.size());
  uint64_t num_accepted = 0;
  for (auto _ : state) {
    if (state.range(1) == 0) {
      for (const auto& [a, b] : data.pairs) {
        double estimate = 0;
        num_accepted += *JaccardAtLeast(data.sketches[a], summaries[a], data.sketches[b],
                                        summaries[b], threshold, &estimate);
        benchmark::DoNotOptimize(estimate);
      }
    } else {
      num_accepted +=
          JaccardAtLeastPairs(pointers, summaries, pairs, threshold, accepted, estimates);
      benchmark::DoNotOptimize(estimates.data());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * data.pairs.size()));
  state.counters["accepted_fraction"] = static_cast<double>(num_accepted) /
                                        static_cast<double>(state.iterations() * data.pairs.size());
  state.counters["sketches"] = static_cast<double>(data.sketches.size());
  // The share of pairs the summaries cannot reject (those read the values).
  uint64_t passed = 0;
  for (const auto& [a, b] : data.pairs) {
    const size_t most = std::max(summaries[a].size, summaries[b].size);
    const size_t bound = std::min<size_t>(std::min(summaries[a].size, summaries[b].size),
                                          MaxCommonValues(summaries[a], summaries[b]));
    passed += most > 0 && static_cast<double>(bound) / static_cast<double>(most) >= threshold;
  }
  state.counters["summary_pass_fraction"] =
      static_cast<double>(passed) / static_cast<double>(data.pairs.size());
}
BENCHMARK(BM_JaccardAtLeastRealSketchesSummaries)
    ->ArgNames({"threshold", "pairs_api"})
    ->Args({50, 0})
    ->Args({50, 1})
    ->Args({80, 0})
    ->Args({80, 1});

// The one-time cost of the summaries: sketches summarised per second.
void BM_SummarizeRealSketches(benchmark::State& state) {
  const SketchPairs& data = RealSketchPairs();
  std::vector<BottomKSummary> summaries(data.sketches.size());
  for (auto _ : state) {
    for (size_t i = 0; i < data.sketches.size(); ++i) {
      summaries[i] = SummarizeBottomK(data.sketches[i]);
    }
    benchmark::DoNotOptimize(summaries.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * data.sketches.size()));
}
BENCHMARK(BM_SummarizeRealSketches);

// Current resident set, bytes (Linux /proc/self/statm).
double ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

struct PlantedPair {
  uint32_t a;
  uint32_t b;
  double jaccard;
};

// Documents 0 .. n - planted - 1 are random; document n - planted + j is a
// near-duplicate of document j * stride. Each document's features are a
// SplitMix64 stream of its own seed; a copy takes its source's features and
// replaces the first `replaced` of them with fresh ones, so that
// J = (n - replaced) / (n + replaced) exactly (64-bit features do not collide).
void BM_AllPairsMinHash(benchmark::State& state) {
  const auto num_docs = static_cast<size_t>(state.range(0));
  const bool verify_exact = state.range(1) != 0;
  const double false_negative_weight = static_cast<double>(state.range(2)) / 100.0;
  const size_t num_planted = num_docs / 100;
  const size_t num_random = num_docs - num_planted;
  const size_t stride = num_random / num_planted;

  auto features_of = [](uint64_t doc, std::vector<uint64_t>* out) {
    internal::SplitMix64 rng(internal::Mix64(doc ^ 0x6e6561726475700aULL));
    out->resize(100 + UniformBelow(rng, 401));
    for (uint64_t& f : *out) f = rng.Next();
  };
  std::vector<PlantedPair> planted(num_planted);
  std::vector<Fingerprint> fps(num_docs);
  struct Builders {
    BottomKBuilder bottom_k{kNumHashes};
    KValueBuilder kvalue{kNumHashes, 0};
    std::vector<uint64_t> features;
  };
  tbb::enumerable_thread_specific<Builders> builders;
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, num_docs, 1024), [&](const tbb::blocked_range<size_t>& range) {
        Builders& b = builders.local();
        for (size_t i = range.begin(); i != range.end(); ++i) {
          if (i < num_random) {
            features_of(i, &b.features);
          } else {
            const size_t j = i - num_random;
            const size_t source = j * stride;
            features_of(source, &b.features);
            internal::SplitMix64 rng(internal::Mix64(i) + 1);
            const double target = 0.8 + 0.2 * Uniform01(rng);
            const double n = static_cast<double>(b.features.size());
            const auto replaced = static_cast<size_t>(n * (1 - target) / (1 + target));
            for (size_t f = 0; f < replaced; ++f) b.features[f] = rng.Next();
            planted[j] = {static_cast<uint32_t>(source), static_cast<uint32_t>(i),
                          (n - replaced) / (n + replaced)};
          }
          b.bottom_k.Reset();
          b.kvalue.Reset();
          for (uint64_t f : b.features) {
            b.bottom_k.Add(f);
            b.kvalue.Add(f);
          }
          Fingerprint& fp = fps[i];
          fp.minhash = b.bottom_k.Finish();
          fp.kvalue_minhash = b.kvalue.Finish();
          fp.num_tokens = b.features.size();
          if (verify_exact) {
            fp.chunks.clear();
            for (uint64_t f : b.features) {
              fp.chunks.push_back(static_cast<uint32_t>(f >> 32));
            }
            std::sort(fp.chunks.begin(), fp.chunks.end());
            fp.chunks.erase(std::unique(fp.chunks.begin(), fp.chunks.end()), fp.chunks.end());
          }
        }
      });
  builders.clear();

  Recipe recipe = *PresetRecipe("default");
  recipe.minhash.num_hashes = kNumHashes;
  NearDuplicateOptions options;
  options.method = NearDuplicateMethod::kMinHash;
  options.threshold = 0.8;
  options.verify_exact = verify_exact;
  options.false_negative_weight = false_negative_weight;
  options.false_positive_weight = 1.0 - false_negative_weight;
  const double resident_before = ResidentBytes();
  NearDuplicateReport report;
  std::vector<SimilarPair> pairs;
  for (auto _ : state) {
    Result<std::vector<SimilarPair>> result = FindNearDuplicatePairs(fps, recipe, options, &report);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    pairs = std::move(result).value();
  }
  // Recall on planted pairs, by exact Jaccard; pairs are sorted by (a, b).
  std::sort(planted.begin(), planted.end(), [](const PlantedPair& x, const PlantedPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  uint64_t found = 0, found_85 = 0, planted_85 = 0, other = 0;
  size_t p = 0;
  for (const SimilarPair& pair : pairs) {
    while (p < planted.size() &&
           (planted[p].a < pair.a || (planted[p].a == pair.a && planted[p].b < pair.b))) {
      ++p;
    }
    if (p < planted.size() && planted[p].a == pair.a && planted[p].b == pair.b) {
      ++found;
      found_85 += planted[p].jaccard >= 0.85;
    } else {
      ++other;
    }
  }
  for (const PlantedPair& pp : planted) planted_85 += pp.jaccard >= 0.85;
  state.counters["docs"] = static_cast<double>(num_docs);
  state.counters["planted"] = static_cast<double>(num_planted);
  state.counters["recall"] = static_cast<double>(found) / static_cast<double>(num_planted);
  state.counters["recall_J>=0.85"] =
      static_cast<double>(found_85) / static_cast<double>(planted_85);
  state.counters["other_pairs"] = static_cast<double>(other);
  state.counters["candidates"] = static_cast<double>(report.candidates);
  state.counters["exact_checks"] = static_cast<double>(report.exact_checks);
  state.counters["bands"] = report.lsh.params.num_bands;
  state.counters["rows"] = report.lsh.params.rows_per_band;
  state.counters["index_MB"] = static_cast<double>(report.index_bytes) / 1e6;
  state.counters["rss_before_MB"] = resident_before / 1e6;
  state.counters["peak_rss_MB"] = PeakResidentBytes() / 1e6;
}
BENCHMARK(BM_AllPairsMinHash)
    ->ArgNames({"docs", "exact", "fn_weight_pct"})
    ->Args({100000, 0, 50})
    ->Args({1000000, 0, 50})
    ->Args({1000000, 1, 50})
    ->Args({1000000, 1, 95})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
