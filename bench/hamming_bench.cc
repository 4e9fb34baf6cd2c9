// HammingIndex benchmarks, side by side with FAISS's IndexBinaryMultiHash and
// IndexBinaryHash on the same codes and queries.
//
// Workload of the classic `simhash` library's published figures: 1M random
// 64-bit fingerprints, 1M random queries, k = 3 (it used 5 blocks). Every
// benchmark's last argument is the thread count (1, or all cores).
// Environment: NEARDUP_BENCH_N (entries, default 1000000),
// NEARDUP_BENCH_JOIN_N (clustered entries for the all-pairs run, default
// 1000000; the docs report 10000000).
//
//   build/release/bench/hamming_bench --benchmark_filter=...
#include <malloc.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include "index/hamming_test_util.h"
#include "neardup/hamming_index.h"
#include "util/mix.h"

#ifdef NEARDUP_HAVE_FAISS
#include <faiss/IndexBinaryHash.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <omp.h>
#endif

namespace neardup {
namespace {

constexpr int kMaxDistance = 3;

size_t EnvSize(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Data {
  std::vector<HammingEntry> entries;
  std::vector<uint64_t> codes;
  std::vector<uint64_t> queries;
};

const Data& GetData() {
  static const Data* data = [] {
    auto* d = new Data;
    const size_t n = EnvSize("NEARDUP_BENCH_N", 1'000'000);
    internal::SplitMix64 rng(2011);
    for (size_t i = 0; i < n; ++i) {
      d->codes.push_back(rng.Next());
      d->entries.push_back({d->codes.back(), i});
    }
    for (size_t i = 0; i < n; ++i) d->queries.push_back(rng.Next());
    return d;
  }();
  return *data;
}

size_t HeapBytes() { return mallinfo2().uordblks; }

HammingIndexOptions Options(int num_blocks) {
  return {.num_blocks = num_blocks, .max_distance = kMaxDistance};
}

HammingIndex BuildIndex(int num_blocks) {
  auto built = HammingIndex::Build(Options(num_blocks), GetData().entries);
  NEARDUP_CHECK(built.ok());
  return std::move(built).value();
}

// Args: {num_blocks, threads}.
void BM_Build(benchmark::State& state) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  const Data& d = GetData();
  size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();  // mallinfo2 walks the heap: keep it out of the timing
    size_t before = HeapBytes();
    state.ResumeTiming();
    HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
    state.PauseTiming();  // freeing is not building
    bytes = HeapBytes() - before;
    state.counters["index_bytes_per_entry"] =
        static_cast<double>(index.MemoryBytes()) / d.entries.size();
    index = HammingIndex::Create(Options(5)).value();
    state.ResumeTiming();
  }
  state.counters["heap_bytes_per_entry"] = static_cast<double>(bytes) / d.entries.size();
  state.SetItemsProcessed(state.iterations() * d.entries.size());
}

// A rank's share of the tables, as neardup-mpi builds it: tables
// [t * rank / ranks, t * (rank + 1) / ranks) of t = C(m, 3), one thread.
// Args: {num_blocks, ranks, rank}.
void BM_BuildTables(benchmark::State& state) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 1);
  const Data& d = GetData();
  const HammingIndexOptions options = Options(static_cast<int>(state.range(0)));
  const uint64_t t = HammingNumTables(options.num_blocks, options.max_distance);
  const uint64_t ranks = static_cast<uint64_t>(state.range(1));
  const uint64_t rank = static_cast<uint64_t>(state.range(2));
  size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    size_t before = HeapBytes();
    state.ResumeTiming();
    auto built = HammingIndex::Build(options, d.entries, t * rank / ranks, t * (rank + 1) / ranks);
    NEARDUP_CHECK(built.ok());
    state.PauseTiming();
    bytes = HeapBytes() - before;
    state.counters["index_bytes_per_entry"] =
        static_cast<double>(built->MemoryBytes()) / d.entries.size();
    state.counters["tables"] = static_cast<double>(built->table_end() - built->table_begin());
    built = HammingIndex::Create(Options(5));
    state.ResumeTiming();
  }
  state.counters["heap_bytes_per_entry"] = static_cast<double>(bytes) / d.entries.size();
  state.SetItemsProcessed(state.iterations() * d.entries.size());
}

void BM_InsertBulk(benchmark::State& state) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  const Data& d = GetData();
  for (auto _ : state) {
    auto index = HammingIndex::Create(Options(static_cast<int>(state.range(0))));
    auto added = index->InsertBulk(d.entries);
    NEARDUP_CHECK(added.ok() && *added == d.entries.size());
    state.PauseTiming();
    index = HammingIndex::Create(Options(5));  // free outside the timing
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * d.entries.size());
}

void BM_FindFirstBulk(benchmark::State& state) {
  HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  const Data& d = GetData();
  size_t found = 0;
  for (auto _ : state) {
    auto first = index.FindFirstBulk(d.queries);
    found = 0;
    for (const auto& f : first) found += f.has_value();
  }
  state.counters["queries_with_match"] = static_cast<double>(found);
  state.SetItemsProcessed(state.iterations() * d.queries.size());
}

void BM_FindAllBulk(benchmark::State& state) {
  HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  const Data& d = GetData();
  size_t matches = 0;
  for (auto _ : state) matches = index.FindAllBulk(d.queries).matches.size();
  state.counters["matches"] = static_cast<double>(matches);
  state.SetItemsProcessed(state.iterations() * d.queries.size());
}

void BM_RemoveBulk(benchmark::State& state) {
  const Data& d = GetData();
  for (auto _ : state) {
    state.PauseTiming();
    HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
    state.ResumeTiming();
    NEARDUP_CHECK(index.RemoveBulk(d.entries) == d.entries.size());
    state.PauseTiming();
    index = HammingIndex::Create(Options(5)).value();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * d.entries.size());
}

// Single inserts into a 1M index: the buffer, runs and merges, amortised.
void BM_InsertSingle(benchmark::State& state) {
  HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  internal::SplitMix64 rng(7);
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) NEARDUP_CHECK(index.Insert({rng.Next(), rng.Next()}).ok());
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

void BM_SelfJoinRandom(benchmark::State& state) {
  HammingIndex index = BuildIndex(static_cast<int>(state.range(0)));
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  size_t pairs = 0;
  for (auto _ : state) pairs = index.SelfJoin().size();
  state.counters["pairs"] = static_cast<double>(pairs);
  state.SetItemsProcessed(state.iterations() * GetData().entries.size());
}

// All-pairs clustering over clustered fingerprints (groups of 1..8 within 0..3
// bits of a centre).
void BM_ClustersClustered(benchmark::State& state) {
  const size_t n = EnvSize("NEARDUP_BENCH_JOIN_N", 1'000'000);
  std::vector<uint64_t> fps = testing::MakeFingerprints(n, true, kMaxDistance, 99);
  std::vector<HammingEntry> entries(n);
  for (size_t i = 0; i < n; ++i) entries[i] = {fps[i], i};
  fps = {};
  auto index = HammingIndex::Build(Options(static_cast<int>(state.range(0))), entries);
  NEARDUP_CHECK(index.ok());
  entries = {};
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, state.range(1));
  size_t clusters = 0, members = 0;
  for (auto _ : state) {
    HammingClusters c = index->Clusters();
    clusters = c.num_clusters();
    members = c.members.size();
  }
  state.counters["clusters"] = static_cast<double>(clusters);
  state.counters["clustered_entries"] = static_cast<double>(members);
  state.counters["entries"] = static_cast<double>(n);
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Open(benchmark::State& state) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "neardup_hamming_bench.ndh").string();
  NEARDUP_CHECK(BuildIndex(static_cast<int>(state.range(0))).Save(path).ok());
  for (auto _ : state) {
    auto opened = HammingIndex::Open(path);
    NEARDUP_CHECK(opened.ok());
    benchmark::DoNotOptimize(opened->size());
  }
  state.counters["file_bytes_per_entry"] =
      static_cast<double>(std::filesystem::file_size(path)) / GetData().entries.size();
  std::filesystem::remove(path);
}

void OursArgs(benchmark::internal::Benchmark* b) {
  const int all = static_cast<int>(std::thread::hardware_concurrency());
  for (int m : {5, 6}) {
    b->Args({m, 1});
    if (all > 1) b->Args({m, all});
  }
  b->ArgNames({"blocks", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_Build)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_BuildTables)
    ->Args({5, 1, 0})
    ->Args({5, 2, 0})
    ->Args({5, 2, 1})
    ->Args({6, 1, 0})
    ->Args({6, 2, 0})
    ->Args({6, 2, 1})
    ->Args({6, 4, 3})
    ->ArgNames({"blocks", "ranks", "rank"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);
BENCHMARK(BM_InsertBulk)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_FindFirstBulk)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_FindAllBulk)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_RemoveBulk)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_InsertSingle)->Args({5, 1})->Args({6, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SelfJoinRandom)->Apply(OursArgs)->Iterations(3);
BENCHMARK(BM_ClustersClustered)->Apply(OursArgs)->Iterations(2);
BENCHMARK(BM_Open)->Args({5, 1})->Args({6, 1})->Unit(benchmark::kMicrosecond);

#ifdef NEARDUP_HAVE_FAISS
// FAISS peers. Binary codes: the 8 bytes of each fingerprint. FAISS's range
// search keeps distances < radius, so radius 4 = distance <= 3.
using FaissId = faiss::IndexBinary::idx_t;

const uint8_t* Bytes(const std::vector<uint64_t>& v) {
  return reinterpret_cast<const uint8_t*>(v.data());
}

// nhash tables of b bits; with nhash * b = 64 and nflip = 0 the multi-hash
// index is exact at radius 3 only with nhash >= 4 (pigeonhole), so: 4 x 16.
std::unique_ptr<faiss::IndexBinaryMultiHash> FaissMultiHash() {
  auto index = std::make_unique<faiss::IndexBinaryMultiHash>(64, 4, 16);
  index->add(static_cast<FaissId>(GetData().codes.size()), Bytes(GetData().codes));
  return index;
}

// Args: {threads}.
void BM_FaissMultiHashAdd(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    size_t before = HeapBytes();
    state.ResumeTiming();
    auto index = FaissMultiHash();
    state.PauseTiming();
    bytes = HeapBytes() - before;
    index.reset();
    state.ResumeTiming();
  }
  state.counters["heap_bytes_per_entry"] = static_cast<double>(bytes) / GetData().codes.size();
  state.SetItemsProcessed(state.iterations() * GetData().codes.size());
}

void BM_FaissMultiHashRangeSearch(benchmark::State& state) {
  auto index = FaissMultiHash();
  omp_set_num_threads(static_cast<int>(state.range(0)));
  const auto& q = GetData().queries;
  size_t matches = 0;
  for (auto _ : state) {
    faiss::RangeSearchResult result(static_cast<FaissId>(q.size()));
    index->range_search(static_cast<FaissId>(q.size()), Bytes(q), kMaxDistance + 1, &result);
    matches = result.lims[q.size()];
  }
  state.counters["matches"] = static_cast<double>(matches);
  state.SetItemsProcessed(state.iterations() * q.size());
}

// The nearest neighbour among the hash candidates (FAISS's closest analogue of
// find_first).
void BM_FaissMultiHashSearch1(benchmark::State& state) {
  auto index = FaissMultiHash();
  omp_set_num_threads(static_cast<int>(state.range(0)));
  const auto& q = GetData().queries;
  std::vector<int32_t> distances(q.size());
  std::vector<FaissId> labels(q.size());
  for (auto _ : state) {
    index->search(static_cast<FaissId>(q.size()), Bytes(q), 1, distances.data(), labels.data());
  }
  size_t found = 0;
  for (size_t i = 0; i < q.size(); ++i) found += labels[i] >= 0 && distances[i] <= kMaxDistance;
  state.counters["queries_with_match"] = static_cast<double>(found);
  state.SetItemsProcessed(state.iterations() * q.size());
}

// One hash table on the first b bits, exact at radius 3 with nflip = 3
// (every key within 3 flips is probed). Args: {b, threads}; queries are a
// 20K subset (it is slow).
void BM_FaissHashRangeSearch(benchmark::State& state) {
  faiss::IndexBinaryHash index(64, static_cast<int>(state.range(0)));
  index.nflip = kMaxDistance;
  index.add(static_cast<FaissId>(GetData().codes.size()), Bytes(GetData().codes));
  omp_set_num_threads(static_cast<int>(state.range(1)));
  std::vector<uint64_t> q(GetData().queries.begin(), GetData().queries.begin() + 20000);
  for (auto _ : state) {
    faiss::RangeSearchResult result(static_cast<FaissId>(q.size()));
    index.range_search(static_cast<FaissId>(q.size()), Bytes(q), kMaxDistance + 1, &result);
    benchmark::DoNotOptimize(result.lims[q.size()]);
  }
  state.SetItemsProcessed(state.iterations() * q.size());
}

void FaissArgs(benchmark::internal::Benchmark* b) {
  const int all = static_cast<int>(std::thread::hardware_concurrency());
  b->Arg(1);
  if (all > 1) b->Arg(all);
  b->ArgNames({"threads"})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
}

BENCHMARK(BM_FaissMultiHashAdd)->Apply(FaissArgs);
BENCHMARK(BM_FaissMultiHashRangeSearch)->Apply(FaissArgs);
BENCHMARK(BM_FaissMultiHashSearch1)->Apply(FaissArgs);
BENCHMARK(BM_FaissHashRangeSearch)
    ->Args({16, 1})
    ->Args({24, 1})
    ->ArgNames({"bits", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
#endif

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
