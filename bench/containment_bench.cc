// The containment engine on a synthetic archive built from real text.
//
// Archive: NEARDUP_CONTAINMENT_BENCH_DOCS documents (default 100000), each a
// window of 150..600 words of a real text (cache/corpora/brown.jsonl and
// spamassassin.jsonl, texts of >= 100 words), word-edited at a rate uniform
// in [0, 10%] (insertions, deletions, substitutions from the corpus
// vocabulary, bench/accuracy/synthetic_text.h), and in a quarter of them a
// pasted passage of 40..120 words of another text. Windows of one source
// overlap, so documents share text the way an archive with reuse does.
// Seeded: the same archive every run. `default` recipe (word 5-shingles).
//
// BM_Fingerprint              chunk sets + SimHash of the archive (all cores)
// BM_IndexBuild               ChunkIndex::Build of the archive's chunk sets;
//                             postings per CPU-second (process CPU time, so a
//                             loaded machine does not flatter or hurt it)
// BM_CollectionIngest         Collection commits of 20000 documents (segments
//                             with zstd texts, index merge, SQLite catalog)
// BM_FullTopN                 ComputeSimilarities, full: top 10, min 0.1
// BM_IncrementalAdd1000       commit of 1000 new documents, then the
//                             incremental ComputeSimilarities
// BM_IncrementalModify1000    the same for new texts of 1000 archive documents
// BM_Query/<eighths>          1000 new documents checked against an index of
//                             the first <eighths>/8 of the archive:
//                             fingerprint + ContainmentSearcher::Search
//                             (cap 1000, top 10); p50 / p99 per query
// BM_QueryTiers/<tiers>/<d>   the queries of BM_Query (fingerprinted first,
//                             not timed) against the whole archive split
//                             into <tiers> tiers (each a quarter of the one
//                             before, as the merge policy leaves them; every
//                             <d>th document dead, none for 0), /1 the same
//                             live documents as one merged index: search CPU
//                             ms per query and a hash of the answers (equal
//                             for every /<tiers> with the same <d>); 9 and
//                             12 tiers: what a burst of small commits leaves
//                             (max_index_tiers 12) before an idle full merge;
//                             bench/collection/tier_search.sh
// BM_QueryCollection/<top>    QueryDocument on the collection (external ids
//                             from SQLite) with passages for the best <top>
// Every benchmark reports the peak RSS of the process so far (getrusage).
// Run:
//   cmake --build --preset release --target containment_bench
//   build/release/bench/containment_bench
// Figures: docs/CONTAINMENT.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "accuracy/archive_text.h"
#include "neardup/collection.h"
#include "neardup/containment.h"
#include "neardup/containment_engine.h"
#include "neardup/fingerprinter.h"
#include "util/mix.h"

namespace neardup {
namespace {

constexpr uint32_t kCap = 1000;
constexpr size_t kQueries = 1000;
constexpr size_t kIncremental = 1000;

size_t ArchiveDocs() {
  const char* env = std::getenv("NEARDUP_CONTAINMENT_BENCH_DOCS");
  return env != nullptr ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : 100000;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double PeakRssMiB() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

struct Archive {
  accuracy::ArchiveTextMaker maker;
  std::vector<std::string> texts;
  std::vector<std::string> extra;    // the incremental add
  std::vector<std::string> queries;  // never added
  std::unique_ptr<Fingerprinter> fingerprinter;
  std::vector<Fingerprint> fingerprints;
  std::filesystem::path dir;
  std::unique_ptr<Collection> collection;
};

Archive& TheArchive() {
  static Archive* archive = [] {
    auto* a = new Archive;
    internal::SplitMix64 rng(20240601);
    const size_t docs = ArchiveDocs();
    a->texts.reserve(docs);
    for (size_t i = 0; i < docs; ++i) a->texts.push_back(a->maker.Make(rng));
    for (size_t i = 0; i < kIncremental; ++i) a->extra.push_back(a->maker.Make(rng));
    for (size_t i = 0; i < kQueries; ++i) a->queries.push_back(a->maker.Make(rng));
    Recipe recipe = *PresetRecipe("default");
    a->fingerprinter =
        std::move(CreateCpuFingerprinter(recipe, {.simhash = true, .chunks = true})).value();
    a->dir = std::filesystem::temp_directory_path() /
             ("neardup_containment_bench_" + std::to_string(getpid()));
    std::filesystem::remove_all(a->dir);
    return a;
  }();
  return *archive;
}

// Benchmarks run in declaration order and build on each other's state;
// these build what is missing, so any --benchmark_filter subset runs.
std::vector<Fingerprint>& Fingerprints(Archive& a) {
  if (a.fingerprints.empty()) {
    std::vector<std::string_view> views(a.texts.begin(), a.texts.end());
    if (!a.fingerprinter->ComputeBatch(views, &a.fingerprints).ok()) std::abort();
  }
  return a.fingerprints;
}

std::vector<IncomingDocument> Incoming(const std::vector<std::string>& texts,
                                       const std::vector<Fingerprint>& fingerprints, size_t begin,
                                       size_t end, const std::string& prefix) {
  std::vector<IncomingDocument> out;
  for (size_t i = begin; i < end; ++i) {
    out.push_back({prefix + std::to_string(i), "", texts[i], fingerprints[i].chunks,
                   fingerprints[i].simhash});
  }
  return out;
}

void Ingest(Archive& a) {
  std::filesystem::remove_all(a.dir);
  a.collection.reset();
  if (!Collection::Create(a.dir.string(), a.fingerprinter->recipe(), {}).ok()) std::abort();
  a.collection = std::move(Collection::Open(a.dir.string(),
                                            {.mode = Collection::Mode::kReadWrite, .clock = {}}))
                     .value();
  const std::vector<Fingerprint>& fingerprints = Fingerprints(a);
  for (size_t begin = 0; begin < a.texts.size(); begin += 20000) {
    const size_t end = std::min(a.texts.size(), begin + 20000);
    if (!a.collection->Commit(Incoming(a.texts, fingerprints, begin, end, "d"), {}).ok()) {
      std::abort();
    }
  }
}

Collection& TheCollection(Archive& a) {
  if (a.collection == nullptr) Ingest(a);
  return *a.collection;
}

void ReportCommon(benchmark::State& state, double cpu_seconds) {
  state.counters["cpu_s"] = cpu_seconds;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_Fingerprint(benchmark::State& state) {
  Archive& a = TheArchive();
  uint64_t bytes = 0;
  for (const std::string& t : a.texts) bytes += t.size();
  std::vector<std::string_view> views(a.texts.begin(), a.texts.end());
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    if (!a.fingerprinter->ComputeBatch(views, &a.fingerprints).ok()) std::abort();
    cpu += CpuSeconds() - c0;
  }
  uint64_t postings = 0;
  for (const Fingerprint& f : a.fingerprints) postings += f.chunks.size();
  state.counters["docs"] = static_cast<double>(a.texts.size());
  state.counters["MB_text"] = static_cast<double>(bytes) / 1e6;
  state.counters["postings"] = static_cast<double>(postings);
  state.counters["MB_per_cpu_s"] = static_cast<double>(bytes) / 1e6 / cpu;
  ReportCommon(state, cpu);
}

void BM_IndexBuild(benchmark::State& state) {
  Archive& a = TheArchive();
  std::vector<ChunkDocument> docs;
  const std::vector<Fingerprint>& fingerprints = Fingerprints(a);
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    docs.push_back({static_cast<uint32_t>(i), fingerprints[i].chunks});
  }
  double cpu = 0;
  uint64_t postings = 0, bytes = 0;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    Result<ChunkIndex> index = ChunkIndex::Build(docs);
    cpu += CpuSeconds() - c0;
    if (!index.ok()) std::abort();
    postings = index->num_postings();
    bytes = index->MemoryBytes();
  }
  state.counters["postings"] = static_cast<double>(postings);
  state.counters["postings_per_cpu_s"] =
      static_cast<double>(postings) * static_cast<double>(state.iterations()) / cpu;
  state.counters["bytes_per_posting"] = static_cast<double>(bytes) / static_cast<double>(postings);
  ReportCommon(state, cpu / static_cast<double>(state.iterations()));
}

void BM_CollectionIngest(benchmark::State& state) {
  Archive& a = TheArchive();
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    Ingest(a);
    cpu += CpuSeconds() - c0;
  }
  CollectionStats stats = *a.collection->Stats();
  state.counters["index_file_bytes_per_posting"] =
      static_cast<double>(stats.index_bytes) / static_cast<double>(stats.index_postings);
  state.counters["segment_MB"] = static_cast<double>(stats.segment_bytes) / 1e6;
  state.counters["boilerplate_keys"] = static_cast<double>(stats.boilerplate_keys);
  ReportCommon(state, cpu);
}

void BM_FullTopN(benchmark::State& state) {
  Archive& a = TheArchive();
  double cpu = 0;
  SimilarStats stats;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    if (!ComputeSimilarities(TheCollection(a),
                             {.top_n = 10, .min_similarity = 0.1, .force_full = true}, &stats)
             .ok()) {
      std::abort();
    }
    cpu += CpuSeconds() - c0;
  }
  state.counters["rows"] = static_cast<double>(stats.rows);
  state.counters["postings_visited"] = static_cast<double>(stats.search.postings_visited);
  state.counters["postings_per_cpu_s"] = static_cast<double>(stats.search.postings_visited) / cpu;
  ReportCommon(state, cpu);
}

// A commit of `texts` under `ids` (new ids add, existing ones modify), then
// the incremental ComputeSimilarities (after a full one when no table is
// stored yet).
void RunIncremental(benchmark::State& state, const std::vector<std::string>& ids,
                    const std::vector<std::string>& texts) {
  Archive& a = TheArchive();
  Collection& collection = TheCollection(a);
  const SimilarOptions options{.top_n = 10, .min_similarity = 0.1};
  if (!collection.StoredSimilarityParams()->has_value() &&
      !ComputeSimilarities(collection, options).ok()) {
    std::abort();
  }
  std::vector<Fingerprint> fingerprints;
  std::vector<std::string_view> views(texts.begin(), texts.end());
  if (!a.fingerprinter->ComputeBatch(views, &fingerprints).ok()) std::abort();
  std::vector<IncomingDocument> incoming;
  for (size_t i = 0; i < texts.size(); ++i) {
    incoming.push_back({ids[i], "", texts[i], fingerprints[i].chunks, fingerprints[i].simhash});
  }
  double cpu = 0, commit_s = 0, similar_s = 0;
  SimilarStats stats;
  for (auto _ : state) {
    const double c0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    if (!collection.Commit(incoming, {}).ok()) std::abort();
    const auto t1 = std::chrono::steady_clock::now();
    if (!ComputeSimilarities(collection, options, &stats).ok()) std::abort();
    const auto t2 = std::chrono::steady_clock::now();
    cpu += CpuSeconds() - c0;
    commit_s += std::chrono::duration<double>(t1 - t0).count();
    similar_s += std::chrono::duration<double>(t2 - t1).count();
  }
  state.counters["commit_s"] = commit_s;
  state.counters["similar_s"] = similar_s;
  state.counters["recomputed"] = static_cast<double>(stats.recomputed);
  state.counters["merged"] = static_cast<double>(stats.merged);
  state.counters["incremental"] = stats.full ? 0 : 1;
  ReportCommon(state, cpu);
}

void BM_IncrementalAdd1000(benchmark::State& state) {
  const std::vector<std::string>& texts = TheArchive().extra;
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) ids.push_back("x" + std::to_string(i));
  RunIncremental(state, ids, texts);
}

// 1000 archive documents spread over the archive get new texts: each old
// version is retired, so every list that held one is recomputed.
void BM_IncrementalModify1000(benchmark::State& state) {
  Archive& a = TheArchive();
  internal::SplitMix64 rng(77);
  const size_t step = std::max<size_t>(1, a.texts.size() / kIncremental);
  std::vector<std::string> ids, texts;
  for (size_t i = 0; i < a.texts.size() && ids.size() < kIncremental; i += step) {
    ids.push_back("d" + std::to_string(i));
    texts.push_back(a.maker.Make(rng));
  }
  RunIncremental(state, ids, texts);
}

double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1))];
}

void BM_Query(benchmark::State& state) {
  Archive& a = TheArchive();
  const size_t n = Fingerprints(a).size() * static_cast<size_t>(state.range(0)) / 8;
  std::vector<ChunkDocument> docs;
  for (size_t i = 0; i < n; ++i)
    docs.push_back({static_cast<uint32_t>(i), a.fingerprints[i].chunks});
  ChunkIndex index = std::move(ChunkIndex::Build(docs)).value();
  ContainmentSearcher searcher(index);
  ContainmentOptions options{.max_document_frequency = kCap, .top_n = 10, .min_similarity = 0.1};
  std::vector<double> latencies, search_only;
  ContainmentSearchStats stats;
  Fingerprint f;
  for (auto _ : state) {
    for (const std::string& q : a.queries) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!a.fingerprinter->Compute(q, &f).ok()) std::abort();
      const auto t1 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(searcher.Search(f.chunks, options, kNoDocument, &stats));
      const auto t2 = std::chrono::steady_clock::now();
      latencies.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      search_only.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
  }
  state.counters["docs"] = static_cast<double>(n);
  state.counters["postings"] = static_cast<double>(index.num_postings());
  state.counters["p50_ms"] = Percentile(latencies, 0.5);
  state.counters["p99_ms"] = Percentile(latencies, 0.99);
  state.counters["search_p50_ms"] = Percentile(search_only, 0.5);
  state.counters["search_p99_ms"] = Percentile(search_only, 0.99);
  state.counters["visited_per_query"] =
      static_cast<double>(stats.postings_visited) / static_cast<double>(latencies.size());
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_QueryTiers(benchmark::State& state) {
  Archive& a = TheArchive();
  const std::vector<Fingerprint>& fingerprints = Fingerprints(a);
  const size_t n = fingerprints.size();
  const int64_t num_tiers = state.range(0);
  if (n < static_cast<size_t>(num_tiers)) {  // the bounds below would wrap
    state.SkipWithError("fewer documents than tiers");
    return;
  }
  std::vector<size_t> bounds = {0};
  // At least one document a tier (the last of 12 hold one or two, as a
  // burst of tiny commits leaves them).
  for (int64_t t = 0; t + 1 < num_tiers; ++t) {
    const size_t next = bounds.back() + std::max<size_t>(1, (n - bounds.back()) * 3 / 4);
    bounds.push_back(std::min(next, n - static_cast<size_t>(num_tiers - 1 - t)));
  }
  bounds.push_back(n);
  std::vector<ChunkIndex> tiers;
  for (size_t t = 0; t + 1 < bounds.size(); ++t) {
    std::vector<ChunkDocument> docs;
    for (size_t i = bounds[t]; i < bounds[t + 1]; ++i) {
      docs.push_back({static_cast<uint32_t>(i), fingerprints[i].chunks});
    }
    tiers.push_back(std::move(ChunkIndex::Build(docs)).value());
  }
  std::vector<uint32_t> live;
  const int64_t dead_every = state.range(1);  // 0: no dead document
  for (size_t i = 0; i < n; ++i) {
    if (dead_every == 0 || i % static_cast<size_t>(dead_every) != 7) {
      live.push_back(static_cast<uint32_t>(i));
    }
  }
  TieredChunkIndex index = std::move(TieredChunkIndex::Create(std::move(tiers), live)).value();
  if (num_tiers == 1) index = std::move(index.Merged()).value();
  std::vector<std::vector<uint32_t>> queries;
  Fingerprint f;
  for (const std::string& q : a.queries) {
    if (!a.fingerprinter->Compute(q, &f).ok()) std::abort();
    queries.push_back(f.chunks);
  }
  ContainmentSearcher searcher(index);
  ContainmentOptions options{.max_document_frequency = kCap, .top_n = 10, .min_similarity = 0.1};
  ContainmentSearchStats stats;
  uint64_t answers = 0;
  size_t searches = 0;
  const double cpu_start = CpuSeconds();
  for (auto _ : state) {
    for (const std::vector<uint32_t>& q : queries) {
      for (const ContainmentMatch& m : searcher.Search(q, options, kNoDocument, &stats)) {
        answers = internal::Mix64(answers + (uint64_t{m.doc} << 20) + m.shared);
      }
      ++searches;
    }
  }
  const double cpu = CpuSeconds() - cpu_start;
  state.counters["tiers"] = static_cast<double>(index.num_tiers());
  state.counters["cpu_ms_per_query"] = cpu * 1e3 / static_cast<double>(searches);
  state.counters["visited_per_query"] =
      static_cast<double>(stats.postings_visited) / static_cast<double>(searches);
  state.counters["answers_hash"] = static_cast<double>(answers % 1000000);
}

void BM_QueryCollection(benchmark::State& state) {
  Archive& a = TheArchive();
  QueryOptions options{
      .top_n = 10, .min_similarity = 0.1, .passages_top = static_cast<size_t>(state.range(0))};
  std::vector<double> latencies;
  for (auto _ : state) {
    for (size_t i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      Result<QueryResult> r =
          QueryDocument(TheCollection(a), *a.fingerprinter, a.queries[i], options);
      const auto t1 = std::chrono::steady_clock::now();
      if (!r.ok()) std::abort();
      latencies.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  state.counters["p50_ms"] = Percentile(latencies, 0.5);
  state.counters["p99_ms"] = Percentile(latencies, 0.99);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void Cleanup(benchmark::State& state) {
  for (auto _ : state) {
    Archive& a = TheArchive();
    a.collection.reset();
    std::filesystem::remove_all(a.dir);
  }
}

BENCHMARK(BM_Fingerprint)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IndexBuild)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CollectionIngest)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FullTopN)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IncrementalAdd1000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IncrementalModify1000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_QueryCollection)
    ->Arg(0)
    ->Arg(3)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Query)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_QueryTiers)
    ->Args({1, 50})
    ->Args({3, 50})
    ->Args({6, 50})
    ->Args({3, 0})
    ->Args({6, 0})
    ->Args({9, 50})
    ->Args({12, 50})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(Cleanup)->Iterations(1);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
