// LshIndex benchmarks: inserts/s (single thread and InsertBulk on all
// cores), queries/s against 1M stored sketches, AllPairCandidates on 1M
// sketches with 1% planted near-duplicates, memory per document, and the
// slowest single Insert while an index grows to 1M (BM_InsertPause, with
// the inserts' CPU p50/p99/p99.9 and those over 0.1 ms since session 21).
//
// Data: synthetic k = 128 MinHash sketches, a pure function of the document
// number (SplitMix64, fixed seed), so no data files are needed. Document d is,
// with probability 1%, a near-duplicate of one of the 1000 documents before
// it with 10% of its values replaced (Jaccard about 0.8); otherwise random.
// Args: {num_bands, rows_per_band}: {16, 8} and the threshold-0.8 choice
// {9, 13}. Run: build/release/bench/lsh_bench
//
// The insert benchmarks also report the timed region's CPU time split into
// user_ns_per_doc and sys_ns_per_doc (getrusage of the benchmark thread):
// the sys part is mostly first-touch page faults of the index's arrays,
// which vary a lot from run to run on a virtual machine.
//
// BM_ChooseLshParams/<num_hashes>/<threshold %>/<exhaustive>: choosing the
// bands (ChooseLshParams, pruned; exhaustive 1: every shape, as before
// session 15), process CPU (on every core it runs on: session 15's figures
// were taken under `taskset -c 1`, one core).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "index/lsh_params_exhaustive.h"
#include "neardup/lsh_index.h"
#include "neardup/lsh_params.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::Mix64;
using internal::SplitMix64;

constexpr int kNumHashes = 128;
constexpr uint64_t kNumDocs = 1'000'000;
constexpr uint64_t kBatch = 16384;
constexpr uint64_t kSeed = 0x15b0;

bool IsPlanted(uint64_t d) { return d > 0 && Mix64(d ^ kSeed) % 100 == 0; }

void MakeSketch(uint64_t d, uint64_t* out) {
  if (IsPlanted(d)) {
    const uint64_t base = d - 1 - Mix64(d + kSeed) % std::min<uint64_t>(d, 1000);
    MakeSketch(base, out);
    SplitMix64 rng(Mix64(d) ^ 0xc0ffee);
    for (int i = 0; i < kNumHashes; ++i) {
      const uint64_t r = rng.Next();
      if (r % 10 == 0) out[i] = rng.Next();
    }
    return;
  }
  SplitMix64 rng(Mix64(d ^ kSeed) + kSeed);
  for (int i = 0; i < kNumHashes; ++i) out[i] = rng.Next();
}

// Sketches [first, first + count) row-major, and their ids (= d).
void MakeBatch(uint64_t first, uint64_t count, std::vector<uint64_t>& ids,
               std::vector<uint64_t>& sketches) {
  ids.resize(count);
  sketches.resize(count * kNumHashes);
  for (uint64_t i = 0; i < count; ++i) {
    ids[i] = first + i;
    MakeSketch(first + i, sketches.data() + i * kNumHashes);
  }
}

LshIndex MakeIndex(const benchmark::State& state) {
  Result<LshIndex> index = LshIndex::Create(
      {static_cast<int>(state.range(0)), static_cast<int>(state.range(1))}, kNumHashes);
  NEARDUP_CHECK(index.ok()) << index.status();
  return std::move(index).value();
}

// The split of an insert benchmark's CPU time into user and system time.
// Linux attributes CPU time to user or system by sampling at timer ticks, so
// a split over each short timed region (a batch takes a few ms) is
// unreliable. Instead the system time is read over a whole iteration (from
// after the untimed setup to the end of the inserts, one window of about a
// second), in which the untimed batch generation adds almost none, and the
// user time is the timed regions' precise thread CPU time minus that.
// Usage per iteration: BeginIteration(); then Start()/Stop() around each
// timed region; EndIteration() before the untimed teardown.
class CpuSplit {
 public:
  void BeginIteration() { sys_start_ns_ = SysNs(); }
  void EndIteration() { sys_ns_ += SysNs() - sys_start_ns_; }
  void Start() { cpu_start_ns_ = ThreadCpuNs(); }
  void Stop() { cpu_ns_ += ThreadCpuNs() - cpu_start_ns_; }
  void Report(benchmark::State& state, double docs) const {
    state.counters["user_ns_per_doc"] = (cpu_ns_ - sys_ns_) / docs;
    state.counters["sys_ns_per_doc"] = sys_ns_ / docs;
  }

 private:
  static double SysNs() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_stime.tv_sec * 1e9 + usage.ru_stime.tv_usec * 1e3;
  }
  static double ThreadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + static_cast<double>(ts.tv_nsec);
  }
  double sys_start_ns_ = 0;
  double cpu_start_ns_ = 0;
  double sys_ns_ = 0;
  double cpu_ns_ = 0;
};

// Frees the index (untimed) and hands the freed memory back to the kernel,
// so that every iteration builds into fresh memory and pays its first-touch
// page faults, as a one-shot build does. Without it, malloc may hand the
// second iteration the first one's already-mapped pages and the system time
// would depend on the allocator's state.
void DropIndex(benchmark::State& state, LshIndex& index) {
  index = MakeIndex(state);
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void ReportMemory(benchmark::State& state, const LshIndex& index) {
  state.counters["bytes_per_doc"] =
      static_cast<double>(index.MemoryBytes()) / static_cast<double>(index.size());
}

// Builds a 1M index from empty with single-threaded Insert calls. With
// `reserve`, after Reserve(1M) (outside the timed region): what the inserts
// cost without growing arrays and tables.
void RunInsert(benchmark::State& state, bool reserve) {
  std::vector<uint64_t> ids, sketches;
  CpuSplit split;
  for (auto _ : state) {
    state.PauseTiming();
    LshIndex index = MakeIndex(state);
    if (reserve) NEARDUP_CHECK(index.Reserve(kNumDocs).ok());
    split.BeginIteration();
    state.ResumeTiming();
    for (uint64_t first = 0; first < kNumDocs; first += kBatch) {
      state.PauseTiming();
      // Exactly kNumDocs in all (the last batch is shorter), so the count
      // matches items_per_second and stays within Reserve(kNumDocs).
      const uint64_t count = std::min(kBatch, kNumDocs - first);
      MakeBatch(first, count, ids, sketches);
      state.ResumeTiming();
      split.Start();
      for (uint64_t i = 0; i < count; ++i) {
        const Status status =
            index.Insert(ids[i], std::span(sketches).subspan(i * kNumHashes, kNumHashes));
        if (!status.ok()) state.SkipWithError(status.ToString().c_str());
      }
      split.Stop();
    }
    state.PauseTiming();
    split.EndIteration();
    ReportMemory(state, index);
    DropIndex(state, index);  // free outside the timed region
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kNumDocs));
  split.Report(state, static_cast<double>(state.iterations() * kNumDocs));
}
// The slowest single Insert (thread CPU) while an index grows from empty to
// 1M, one insert at a time: what one add of a stream whose window first
// grows can stall its writer lock for (docs/SERVER.md "Pauses"; session 12).
// Counters: the slowest insert's CPU ms; the 8 slowest (insert number: ms)
// go to stderr, to tell growth steps from noise.
void BM_InsertPause(benchmark::State& state) {
  constexpr size_t kSlowest = 8;
  std::vector<std::pair<double, uint64_t>> slowest;
  std::vector<uint64_t> sketch(kNumHashes);
  std::vector<double> all_ms;  // every insert's, for the percentiles
  for (auto _ : state) {
    LshIndex index = MakeIndex(state);
    all_ms.clear();
    all_ms.reserve(kNumDocs);
    for (uint64_t d = 0; d < kNumDocs; ++d) {
      MakeSketch(d, sketch.data());
      timespec start, end;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
      const Status status = index.Insert(d, sketch);
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
      if (!status.ok()) {
        state.SkipWithError(status.ToString().c_str());
        break;
      }
      const double ms = static_cast<double>(end.tv_sec - start.tv_sec) * 1e3 +
                        (end.tv_nsec - start.tv_nsec) * 1e-6;
      all_ms.push_back(ms);
      if (slowest.size() < kSlowest || ms > slowest.back().first) {
        if (slowest.size() == kSlowest) slowest.pop_back();
        slowest.emplace_back(ms, d);
        std::sort(slowest.begin(), slowest.end(), std::greater<>());
      }
    }
    state.PauseTiming();
    DropIndex(state, index);
    state.ResumeTiming();
  }
  std::fprintf(stderr, "BM_InsertPause slowest inserts (insert number: thread CPU ms):");
  for (const auto& [ms, d] : slowest)
    std::fprintf(stderr, " %llu:%.1f", static_cast<unsigned long long>(d), ms);
  std::fprintf(stderr, "\n");
  state.counters["worst_insert_cpu_ms"] = slowest.empty() ? 0 : slowest.front().first;
  // Session 21: the distribution, and the inserts over 0.1 ms (growth
  // steps, page faults) with the CPU they took in all.
  double slow_ms = 0;
  size_t slow = 0;
  for (double ms : all_ms) {
    if (ms > 0.1) {
      ++slow;
      slow_ms += ms;
    }
  }
  std::sort(all_ms.begin(), all_ms.end());
  const auto percentile_us = [&](double p) {
    if (all_ms.empty()) return 0.0;
    return all_ms[static_cast<size_t>(p * static_cast<double>(all_ms.size() - 1))] * 1e3;
  };
  state.counters["p50_us"] = percentile_us(0.5);
  state.counters["p99_us"] = percentile_us(0.99);
  state.counters["p999_us"] = percentile_us(0.999);
  state.counters["inserts_over_0.1ms"] = static_cast<double>(slow);
  state.counters["their_cpu_ms"] = slow_ms;
}
void BM_ChooseLshParams(benchmark::State& state) {
  LshParamsOptions options;
  options.num_hashes = static_cast<int>(state.range(0));
  options.threshold = static_cast<double>(state.range(1)) / 100.0;
  const bool exhaustive = state.range(2) != 0;
  for (auto _ : state) {
    Result<LshParamsChoice> choice =
        exhaustive ? internal::ChooseLshParamsExhaustive(options) : ChooseLshParams(options);
    benchmark::DoNotOptimize(choice);
  }
}
BENCHMARK(BM_ChooseLshParams)
    ->ArgsProduct({{128, 1024}, {50, 80, 90}, {0, 1}})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_InsertPause)->Args({16, 8})->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Insert(benchmark::State& state) { RunInsert(state, false); }
void BM_InsertReserved(benchmark::State& state) { RunInsert(state, true); }
BENCHMARK(BM_Insert)->Args({16, 8})->Args({9, 13})->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_InsertReserved)
    ->Args({16, 8})
    ->Args({9, 13})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// Builds a 1M index from empty with InsertBulk batches of 4000 documents:
// below the parallel threshold, so on the calling thread only. The batched
// path fills one band table at a time with prefetches ahead. With
// `reserve`, after Reserve(1M) (outside the timed region), as
// FindNearDuplicatePairs builds its index: no array and table growth.
void RunInsertBulkOneThread(benchmark::State& state, bool reserve) {
  constexpr uint64_t kSmallBulk = 4000;
  std::vector<uint64_t> ids, sketches;
  CpuSplit split;
  for (auto _ : state) {
    state.PauseTiming();
    LshIndex index = MakeIndex(state);
    if (reserve) NEARDUP_CHECK(index.Reserve(kNumDocs).ok());
    split.BeginIteration();
    state.ResumeTiming();
    for (uint64_t first = 0; first + kSmallBulk <= kNumDocs; first += kSmallBulk) {
      state.PauseTiming();
      MakeBatch(first, kSmallBulk, ids, sketches);
      state.ResumeTiming();
      split.Start();
      const Status status = index.InsertBulk(ids, sketches);
      split.Stop();
      if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    }
    state.PauseTiming();
    split.EndIteration();
    ReportMemory(state, index);
    DropIndex(state, index);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(kNumDocs / kSmallBulk * kSmallBulk));
  split.Report(state,
               static_cast<double>(state.iterations() * (kNumDocs / kSmallBulk * kSmallBulk)));
}
void BM_InsertBulkOneThread(benchmark::State& state) { RunInsertBulkOneThread(state, false); }
void BM_InsertBulkOneThreadReserved(benchmark::State& state) {
  RunInsertBulkOneThread(state, true);
}
BENCHMARK(BM_InsertBulkOneThread)
    ->Args({16, 8})
    ->Args({9, 13})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK(BM_InsertBulkOneThreadReserved)
    ->Args({16, 8})
    ->Args({9, 13})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// Builds a 1M index from empty with InsertBulk batches of 64K (all cores).
void BM_InsertBulk(benchmark::State& state) {
  constexpr uint64_t kBulk = 4 * kBatch;
  std::vector<uint64_t> ids, sketches;
  for (auto _ : state) {
    state.PauseTiming();
    LshIndex index = MakeIndex(state);
    state.ResumeTiming();
    for (uint64_t b = 0; b < kNumDocs / kBulk; ++b) {
      state.PauseTiming();
      MakeBatch(b * kBulk, kBulk, ids, sketches);
      state.ResumeTiming();
      const Status status = index.InsertBulk(ids, sketches);
      if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    }
    state.PauseTiming();
    ReportMemory(state, index);
    DropIndex(state, index);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kNumDocs / kBulk * kBulk));
}
BENCHMARK(BM_InsertBulk)
    ->Args({16, 8})
    ->Args({9, 13})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseRealTime();

// One 1M index per (b, r), built once with InsertBulk and shared.
const LshIndex& SharedIndex(const benchmark::State& state) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<LshIndex>> cache;
  auto& slot = cache[{state.range(0), state.range(1)}];
  if (!slot) {
    slot = std::make_unique<LshIndex>(MakeIndex(state));
    std::vector<uint64_t> ids, sketches;
    for (uint64_t first = 0; first < kNumDocs; first += kBatch) {
      MakeBatch(first, std::min(kBatch, kNumDocs - first), ids, sketches);
      NEARDUP_CHECK(slot->InsertBulk(ids, sketches).ok());
    }
  }
  return *slot;
}

// Queries against 1M stored sketches: half near-duplicates of stored
// documents (10% of values changed), half unrelated sketches.
void BM_Query(benchmark::State& state) {
  const LshIndex& index = SharedIndex(state);
  constexpr uint64_t kQueries = 16384;
  std::vector<uint64_t> queries(kQueries * kNumHashes);
  SplitMix64 rng(kSeed);
  for (uint64_t q = 0; q < kQueries; ++q) {
    uint64_t* out = queries.data() + q * kNumHashes;
    if (q % 2 == 0) {
      MakeSketch(rng.Next() % kNumDocs, out);
      for (int i = 0; i < kNumHashes; ++i) {
        if (rng.Next() % 10 == 0) out[i] = rng.Next();
      }
    } else {
      MakeSketch(kNumDocs + q, out);
    }
  }
  uint64_t q = 0;
  size_t found = 0;
  for (auto _ : state) {
    const std::vector<uint64_t> hits =
        *index.Query(std::span(queries).subspan(q * kNumHashes, kNumHashes));
    found += hits.size();
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % kQueries;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["candidates_per_query"] =
      static_cast<double>(found) / static_cast<double>(state.iterations());
  ReportMemory(state, index);
}
BENCHMARK(BM_Query)->Args({16, 8})->Args({9, 13});

// All candidate pairs of the 1M index; arg 2 is bands_per_pass.
void BM_AllPairCandidates(benchmark::State& state) {
  const LshIndex& index = SharedIndex(state);
  size_t pairs = 0;
  for (auto _ : state) {
    const auto result = index.AllPairCandidates(static_cast<int>(state.range(2)));
    pairs = result.size();
    benchmark::DoNotOptimize(result.data());
  }
  state.counters["pairs"] = static_cast<double>(pairs);
}
BENCHMARK(BM_AllPairCandidates)
    ->Args({16, 8, 1})
    ->Args({16, 8, 4})
    ->Args({16, 8, 16})
    ->Args({9, 13, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
