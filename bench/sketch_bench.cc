// Sketch throughput: SimHash, bottom-k and k-value builders (features/s),
// bottom-k Jaccard with and without early abort (pairs/s), exact Jaccard of
// chunk sets. Synthetic data from SplitMix64 (feature hashes are uniform
// 64-bit values, as xxh3 produces).
//
//   cmake --preset release && cmake --build --preset release --target sketch_bench
//   build/release/bench/sketch_bench --benchmark_min_time=0.2s
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "neardup/chunk_set.h"
#include "neardup/minhash.h"
#include "neardup/simhash.h"
#include "neardup/similarity.h"
#include "sketch/bottom_k_kernels.h"
#include "sketch/sketch_kernels.h"
#include "util/mix.h"

namespace neardup {
namespace {

std::vector<uint64_t> RandomFeatures(uint64_t seed, size_t n) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> features(n);
  for (auto& f : features) f = rng.Next();
  return features;
}

// Features of one document per call, `range(0)` features each.
void BM_SimHashAdd(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const std::vector<uint64_t> features = RandomFeatures(1, 1000);
  SimHashAccumulator acc(bits);
  for (auto _ : state) {
    acc.Reset();
    for (uint64_t f : features) acc.Add(f);
    benchmark::DoNotOptimize(acc.Finish64());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_SimHashAdd)->Arg(64)->Arg(128);

void BM_SimHashAddMany(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const std::vector<uint64_t> features = RandomFeatures(1, 1000);
  SimHashAccumulator acc(bits);
  for (auto _ : state) {
    acc.Reset();
    acc.AddMany(features);
    benchmark::DoNotOptimize(acc.Finish64());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_SimHashAddMany)->Arg(64)->Arg(128);

// One document of range(0) features per iteration (Reset, Add..., Finish).
void BM_BottomKAdd(benchmark::State& state) {
  const std::vector<uint64_t> features = RandomFeatures(2, static_cast<size_t>(state.range(0)));
  BottomKBuilder builder(128);
  for (auto _ : state) {
    builder.Reset();
    for (uint64_t f : features) builder.Add(f);
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_BottomKAdd)->Arg(100)->Arg(1000)->Arg(10000);

// AddMany in batches of 256, as the fingerprinter calls it.
void BM_BottomKAddMany(benchmark::State& state) {
  const std::vector<uint64_t> features = RandomFeatures(2, static_cast<size_t>(state.range(0)));
  BottomKBuilder builder(128);
  for (auto _ : state) {
    builder.Reset();
    for (size_t at = 0; at < features.size(); at += 256) {
      builder.AddMany(std::span<const uint64_t>(features.data() + at,
                                                std::min<size_t>(256, features.size() - at)));
    }
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_BottomKAddMany)->Arg(100)->Arg(1000)->Arg(10000);

// The sort inside BottomKBuilder's flush (the best kernel this CPU runs;
// NEARDUP_CPU_PATH lowers it), on n uniform values of a known range, 64
// different inputs in turn.
void BM_BottomKSort(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<uint64_t> inputs = RandomFeatures(4, 64 * n);
  const internal::BottomKKernel kernel = internal::ActiveSketchKernels().bottom_k;
  std::vector<uint64_t> values(n);
  std::vector<uint64_t> scratch(internal::SortScratchSize(n));
  size_t round = 0;
  for (auto _ : state) {
    const uint64_t* input = inputs.data() + (round++ % 64) * n;
    kernel.sort_ascending(input, n, 0, UINT64_MAX, values.data(), scratch.data());
    benchmark::DoNotOptimize(values.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.SetLabel(std::string(kernel.name));
}
// 170 stands for the first threshold flush before session 18 (169 values;
// 154 now), kept so that the recorded figures stay comparable.
BENCHMARK(BM_BottomKSort)->Arg(40)->Arg(170)->Arg(400);

void BM_KValueAdd(benchmark::State& state) {
  const std::vector<uint64_t> features = RandomFeatures(3, static_cast<size_t>(state.range(0)));
  KValueBuilder builder(128, 7);
  for (auto _ : state) {
    builder.Reset();
    for (uint64_t f : features) builder.Add(f);
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_KValueAdd)->Arg(100)->Arg(1000)->Arg(10000);

// 1024 documents of 100..5000 distinct features (log-uniform) and 4096
// candidate pairs among them: 90% unrelated (Jaccard ~0, what most LSH
// candidates and all-pairs scans are), 10% near-duplicates (Jaccard ~0.6-0.9).
// LargePairs: the same shape with 16384 documents (about 17 MB of sketches,
// beyond the L2 cache, as on a real corpus) and 65536 pairs.
struct PairData {
  std::vector<BottomKSketch> sketches;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
};

PairData MakePairData(size_t num_docs, size_t num_pairs) {
  const size_t kDocs = num_docs;
  {
    PairData d;
    internal::SplitMix64 rng(11);
    std::vector<std::vector<uint64_t>> docs;
    for (size_t i = 0; i < kDocs; ++i) {
      const double u = static_cast<double>(rng.Next() >> 11) / 9007199254740992.0;
      const auto n = static_cast<size_t>(100 * std::pow(50.0, u));
      if (i % 2 == 1) {
        // A near-duplicate of the previous document: a share of its
        // features replaced.
        std::vector<uint64_t> doc = docs.back();
        const size_t replace = doc.size() * (5 + rng.Next() % 20) / 100;
        for (size_t r = 0; r < replace; ++r) doc[rng.Next() % doc.size()] = rng.Next();
        docs.push_back(doc);
      } else {
        docs.push_back(RandomFeatures(rng.Next(), n));
      }
    }
    for (const auto& doc : docs) {
      BottomKBuilder builder(128);
      for (uint64_t f : doc) builder.Add(f);
      d.sketches.push_back(builder.Finish());
    }
    for (size_t p = 0; p < num_pairs; ++p) {
      if (p % 10 == 0) {
        const auto even = static_cast<uint32_t>(rng.Next() % (kDocs / 2) * 2);
        d.pairs.emplace_back(even, even + 1);
      } else {
        d.pairs.emplace_back(static_cast<uint32_t>(rng.Next() % kDocs),
                             static_cast<uint32_t>(rng.Next() % kDocs));
      }
    }
    return d;
  }
}

const PairData& Pairs() {
  static const PairData data = MakePairData(1024, 4096);
  return data;
}

const PairData& LargePairs() {
  static const PairData data = MakePairData(16384, 65536);
  return data;
}

void BM_BottomKEstimateJaccard(benchmark::State& state) {
  const PairData& data = Pairs();
  for (auto _ : state) {
    double total = 0;
    for (const auto& [x, y] : data.pairs)
      total += *EstimateJaccard(data.sketches[x], data.sketches[y]);
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.pairs.size()));
}
BENCHMARK(BM_BottomKEstimateJaccard);

// Args: threshold x 100, and 1 for LargePairs.
void BM_BottomKJaccardAtLeast(benchmark::State& state) {
  const PairData& data = state.range(1) != 0 ? LargePairs() : Pairs();
  const double threshold = static_cast<double>(state.range(0)) / 100.0;
  int64_t hits = 0;
  for (auto _ : state) {
    for (const auto& [x, y] : data.pairs) {
      double estimate;
      hits += *JaccardAtLeast(data.sketches[x], data.sketches[y], threshold, &estimate);
    }
  }
  benchmark::DoNotOptimize(hits);
  state.counters["hit_rate"] =
      static_cast<double>(hits) / static_cast<double>(state.iterations() * data.pairs.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.pairs.size()));
}
BENCHMARK(BM_BottomKJaccardAtLeast)->Args({50, 0})->Args({80, 0})->Args({50, 1})->Args({80, 1});

// The same pairs through JaccardAtLeastBatch, all pairs in one call.
void BM_BottomKJaccardAtLeastBatch(benchmark::State& state) {
  const PairData& data = state.range(1) != 0 ? LargePairs() : Pairs();
  const double threshold = static_cast<double>(state.range(0)) / 100.0;
  std::vector<const BottomKSketch*> left;
  std::vector<const BottomKSketch*> right;
  for (const auto& [x, y] : data.pairs) {
    left.push_back(&data.sketches[x]);
    right.push_back(&data.sketches[y]);
  }
  std::vector<uint8_t> accepted(left.size());
  std::vector<double> estimates(left.size());
  int64_t hits = 0;
  for (auto _ : state) {
    hits += static_cast<int64_t>(JaccardAtLeastBatch(left, right, threshold, accepted, estimates));
    benchmark::DoNotOptimize(estimates.data());
  }
  state.counters["hit_rate"] =
      static_cast<double>(hits) / static_cast<double>(state.iterations() * data.pairs.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.pairs.size()));
}
BENCHMARK(BM_BottomKJaccardAtLeastBatch)
    ->Args({50, 0})
    ->Args({80, 0})
    ->Args({50, 1})
    ->Args({80, 1});

// The same pairs with a BottomKSummary per sketch (computed once, outside
// the timed loop; BM_SummarizeBottomK is that cost), through
// JaccardAtLeastPairs. Args: threshold x 100, and 1 for LargePairs.
void BM_BottomKJaccardAtLeastPairs(benchmark::State& state) {
  const PairData& data = state.range(1) != 0 ? LargePairs() : Pairs();
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
  int64_t hits = 0;
  for (auto _ : state) {
    hits += static_cast<int64_t>(
        JaccardAtLeastPairs(pointers, summaries, pairs, threshold, accepted, estimates));
    benchmark::DoNotOptimize(estimates.data());
  }
  state.counters["hit_rate"] =
      static_cast<double>(hits) / static_cast<double>(state.iterations() * data.pairs.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.pairs.size()));
}
BENCHMARK(BM_BottomKJaccardAtLeastPairs)
    ->Args({50, 0})
    ->Args({80, 0})
    ->Args({50, 1})
    ->Args({80, 1});

void BM_SummarizeBottomK(benchmark::State& state) {
  const PairData& data = Pairs();
  std::vector<BottomKSummary> summaries(data.sketches.size());
  for (auto _ : state) {
    for (size_t i = 0; i < data.sketches.size(); ++i) {
      summaries[i] = SummarizeBottomK(data.sketches[i]);
    }
    benchmark::DoNotOptimize(summaries.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(data.sketches.size()));
}
BENCHMARK(BM_SummarizeBottomK);

void BM_KValueEstimateJaccard(benchmark::State& state) {
  std::vector<KValueSketch> sketches;
  for (uint64_t d = 0; d < 256; ++d) {
    KValueBuilder builder(128, 1);
    for (uint64_t f : RandomFeatures(d, 1000)) builder.Add(f);
    sketches.push_back(builder.Finish());
  }
  for (auto _ : state) {
    double total = 0;
    for (size_t p = 0; p + 1 < sketches.size(); ++p) {
      total += *EstimateJaccard(sketches[p], sketches[p + 1]);
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(sketches.size() - 1));
}
BENCHMARK(BM_KValueEstimateJaccard);

void BM_ExactJaccard1000(benchmark::State& state) {
  // Two 1000-element chunk sets sharing about half their elements.
  internal::SplitMix64 rng(5);
  std::vector<uint32_t> a, b;
  while (a.size() < 1000 || b.size() < 1000) {
    const auto id = static_cast<uint32_t>(rng.Next());
    const uint64_t r = rng.Next() % 3;
    if (r != 1 && a.size() < 1000) a.push_back(id);
    if (r != 0 && b.size() < 1000) b.push_back(id);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExactJaccard(a, b));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExactJaccard1000);

void BM_ChunkSetBuild(benchmark::State& state) {
  const std::vector<uint64_t> features = RandomFeatures(6, 1000);
  ChunkSetBuilder builder(1);
  for (auto _ : state) {
    builder.Reset();
    for (uint64_t f : features) builder.Add(f);
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(features.size()));
}
BENCHMARK(BM_ChunkSetBuild);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
