// The stream's id index (src/stream/stream_id_index.h) per add: a window of
// `window` ids turning over, each step as StreamState does it for an added
// document (a lookup that misses, the insert, the oldest id erased), plus
// the id hash alone. Session 12 changed the hash from std::hash to keyed
// SipHash-1-3; the figures before and after are in docs/BENCHMARKS.md
// ("Session 12, cleanup"), with the commands.
//
// The index benchmark uses only the index's API, so the same file builds
// against an older tree (the before figure), as the Release build compiles
// it: g++ -std=c++20 -O3 -DNDEBUG -I<tree>/src bench/stream_id_index_bench.cc
// [<tree>/src/hash/siphash.cc] -lbenchmark -lpthread
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "stream/stream_id_index.h"

#if __has_include("hash/siphash.h")
#include "hash/siphash.h"
#define NEARDUP_BENCH_HAVE_SIPHASH 1
#endif

namespace {

// Ids like a client's: "doc-" and a number (9-14 bytes, inside std::string's
// buffer), or with a 24-byte prefix (past it) when `long_ids`.
std::vector<std::string> MakeIds(size_t n, bool long_ids) {
  std::vector<std::string> ids;
  ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ids.push_back((long_ids ? "tenant-7/collection-a/doc-" : "doc-") +
                  std::to_string(1000003 * i % 100000007));
  }
  return ids;
}

// range(0): the window; range(1): 1 for long ids.
void BM_IdIndexAdd(benchmark::State& state) {
  const size_t window = static_cast<size_t>(state.range(0));
  const std::vector<std::string> ids = MakeIds(4 * window, state.range(1) != 0);
  neardup::internal::StreamIdIndex index;
  size_t next = 0;
  for (; next < window; ++next) index.Insert(ids[next], next);
  for (auto _ : state) {
    const std::string& id = ids[next % ids.size()];
    benchmark::DoNotOptimize(index.Find(id));
    benchmark::DoNotOptimize(index.Insert(id, next));
    benchmark::DoNotOptimize(index.Erase(ids[(next - window) % ids.size()]));
    ++next;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IdIndexAdd)->Args({10000, 0})->Args({100000, 0})->Args({100000, 1});

void BM_StdHash(benchmark::State& state) {
  const std::vector<std::string> ids = MakeIds(1024, state.range(0) != 0);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::hash<std::string_view>{}(ids[i++ & 1023]));
  }
}
BENCHMARK(BM_StdHash)->Arg(0)->Arg(1);

#ifdef NEARDUP_BENCH_HAVE_SIPHASH
template <int kCompressionRounds, int kFinalizationRounds>
void BM_SipHash(benchmark::State& state) {
  const std::vector<std::string> ids = MakeIds(1024, state.range(0) != 0);
  const neardup::internal::SipKey key = neardup::internal::RandomSipKey();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        neardup::internal::SipHash<kCompressionRounds, kFinalizationRounds>(key, ids[i++ & 1023]));
  }
}
BENCHMARK(BM_SipHash<1, 3>)->Arg(0)->Arg(1);
BENCHMARK(BM_SipHash<2, 4>)->Arg(0)->Arg(1);
#endif

}  // namespace

BENCHMARK_MAIN();
