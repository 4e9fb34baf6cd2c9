// NearDuplicateStream write and recovery costs (docs/SERVER.md, "Measured"):
//   BM_StreamAdd/<batch>/<sync>: adding the corpus' documents to a durable
//     stream, one Add each (batch 1) or AddBatch of <batch> documents; sync 1
//     fsyncs as the service does, 0 measures everything but the disk. CPU is
//     the whole process's (AddBatch fingerprints on oneTBB's threads).
//     Counters: documents/s and the log's bytes per document.
//   BM_LogAppend/<batch>/<framed>: the write-ahead log alone (no fsync):
//     3000 records of 2.7 KB (a kept MinHash document's add record) appended
//     one by one (Append, batch 1: one write() each), or <batch> records a
//     write() with AppendBatch (framed 0: the log frames them into its
//     buffer) or with AppendFramed (framed 1: the records framed by the
//     caller into one reused buffer and written without a copy, the path of
//     a stream's AddBatch since session 13): the per-record cost of the log.
//   BM_StreamRecovery/<from snapshot>: OpenExisting of a stream whose log
//     holds every document (0: no snapshot since its creation, replay cost
//     per log record) or whose snapshot does (1: Snapshot() before closing).
//   BM_StreamAddPause/<documents>/<durable>: the longest single Add among
//     <documents> synthetic 3 KB texts (random words, every fifth an edited
//     copy, as bench/server/http_load posts), in memory (0) or durable
//     without fsync with 16 MiB snapshots (1): what one add can stall every
//     other request for (growth of the state's arrays and tables, a
//     snapshot). The time column includes making the texts: read the
//     counters. Counters: the worst add's wall and thread-CPU milliseconds,
//     the adds over 1 ms, memory_bytes (Stats) and resident bytes (growth
//     of the process's RSS) per document. The window of a million documents
//     (memory per document, docs/SERVER.md): run it with
//     --benchmark_filter=BM_StreamAddPause/1000000 (~4.3 GB, a minute or two).
//     It lists its 8 slowest adds (add number: thread CPU ms) on stderr, to
//     tell growth steps (at powers of two of the kept documents) from noise.
//     Latency counters (session 21): the adds' wall p50/p99/p99.9 in ms, and
//     the adds over 0.5 ms split by whether the stream's memory_bytes rose
//     by 64 KiB or more across the add (an index table, band array or
//     segment allocated: a growth step) or not (other causes: page
//     faults, the host), with the wall ms each group took in all.
//   BM_StreamRollOver/<log KiB>/<writers>: batch latency (p50/p99/max) of
//     durable adds by concurrent writers with the log rolled over every
//     <log KiB> (session 16; see the benchmark).
//   BM_StreamSpareLog/<background>: durable single adds (fdatasync) by one
//     writer, the log rolled over every 96 KiB: the latency of the add
//     after which the log rolled over (its writer made the next log ahead
//     before session 20, or with background 0) against the others
//     (session 20; see the benchmark).
// The corpus: NEARDUP_BENCH_CORPUS or cache/corpora/spamassassin.jsonl
// (bench/bench_corpus.h); NEARDUP_BENCH_STREAM_DOCS caps the documents used
// (default 3000).
#include <benchmark/benchmark.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_corpus.h"
#include "neardup/stream.h"
#include "neardup/write_ahead_log.h"
#include "util/mix.h"

namespace neardup::bench {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& Texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all = LoadBenchTexts("stream_bench");
    const char* cap = std::getenv("NEARDUP_BENCH_STREAM_DOCS");
    all.resize(
        std::min<size_t>(all.size(), cap != nullptr ? std::strtoull(cap, nullptr, 10) : 3000));
    return all;
  }();
  return texts;
}

const std::vector<std::string>& Ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (size_t i = 0; i < Texts().size(); ++i) out.push_back("doc-" + std::to_string(i));
    return out;
  }();
  return ids;
}

std::string BenchDir(const char* name) {
  return (fs::temp_directory_path() /
          (std::string("neardup-") + name + "-" + std::to_string(static_cast<long>(::getpid()))))
      .string();
}

// A new durable stream in `dir`, what an earlier run left there removed
// first; null, with the benchmark skipped, when it cannot be opened.
std::unique_ptr<NearDuplicateStream> OpenEmptyStream(benchmark::State& state,
                                                     const std::string& dir,
                                                     const StreamOpenOptions& options) {
  fs::remove_all(dir);
  auto stream = NearDuplicateStream::Open(dir, {}, options);
  if (!stream.ok()) {
    state.SkipWithError(stream.status().ToString().c_str());
    return nullptr;
  }
  return std::move(*stream);
}

// Adds every document in batches of `batch` (1: Add); returns the log bytes.
uint64_t AddAll(NearDuplicateStream& stream, size_t batch, benchmark::State& state) {
  const std::vector<std::string>& texts = Texts();
  const std::vector<std::string>& ids = Ids();
  std::vector<StreamDocument> documents;
  for (size_t i = 0; i < texts.size(); ++i) {
    documents.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
  }
  for (size_t first = 0; first < documents.size(); first += batch) {
    const size_t n = std::min(batch, documents.size() - first);
    if (batch == 1) {
      if (!stream.Add(documents[first].id, documents[first].text, documents[first].time).ok()) {
        state.SkipWithError("Add failed");
      }
    } else if (!stream.AddBatch(std::span(documents).subspan(first, n)).ok()) {
      state.SkipWithError("AddBatch failed");
    }
  }
  return stream.Stats().log_bytes;
}

void BM_StreamAdd(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  StreamOpenOptions options;
  options.sync = state.range(1) != 0;
  options.snapshot_log_bytes = uint64_t{1} << 40;  // the log alone: its bytes per document
  const std::string dir = BenchDir("stream-add");
  uint64_t log_bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::unique_ptr<NearDuplicateStream> stream = OpenEmptyStream(state, dir, options);
    if (stream == nullptr) break;
    state.ResumeTiming();
    log_bytes = AddAll(*stream, batch, state);
  }
  fs::remove_all(dir);
  const double documents = static_cast<double>(Texts().size());
  state.counters["documents/s"] = benchmark::Counter(
      documents * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["log_bytes/doc"] = static_cast<double>(log_bytes) / documents;
}
BENCHMARK(BM_StreamAdd)
    ->ArgsProduct({{1, 100}, {0, 1}})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

void BM_LogAppend(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  const bool framed = state.range(1) == 1;
  constexpr size_t kRecords = 3000;
  std::string group;         // framed: the group's records, reused
  std::vector<size_t> ends;  // framed: where each ends in `group`
  const std::vector<std::string> payloads(kRecords, std::string(2700, 'p'));
  const std::string dir = BenchDir("log-append");
  fs::create_directories(dir);
  const std::string path = dir + "/log";
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove(path);
    auto log = WriteAheadLog::Open(path, 0, {.sync = false});
    if (!log.ok()) {
      state.SkipWithError(log.status().ToString().c_str());
      break;
    }
    state.ResumeTiming();
    for (size_t first = 0; first < kRecords; first += batch) {
      const size_t n = std::min(batch, kRecords - first);
      bool ok;
      if (batch == 1) {
        ok = (*log)->Append(payloads[first]).ok();
      } else if (framed) {
        group.clear();
        ends.clear();
        for (size_t i = first; i < first + n; ++i) {
          AppendLogRecord(payloads[i], &group);
          ends.push_back(group.size());
        }
        ok = (*log)->AppendFramed(group, ends).ok();
      } else {
        ok = (*log)->AppendBatch(std::span(payloads).subspan(first, n)).ok();
      }
      if (!ok) state.SkipWithError("append failed");
    }
  }
  fs::remove_all(dir);
  state.counters["s/record"] = benchmark::Counter(
      static_cast<double>(kRecords),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LogAppend)
    ->Args({1, 0})
    ->Args({128, 0})
    ->Args({128, 1})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// BM_StreamRecovery/<snapshot>: reopening a stream of the bench texts from
// its log alone (0: a window that only grows writes no snapshot, session
// 14) or from a snapshot of them (1: Snapshot() before closing).
void BM_StreamRecovery(benchmark::State& state) {
  const bool from_snapshot = state.range(0) != 0;
  StreamOpenOptions options;
  options.sync = false;
  options.snapshot_log_bytes = uint64_t{1} << 40;
  const std::string dir = BenchDir("stream-recovery");
  {
    const std::unique_ptr<NearDuplicateStream> stream = OpenEmptyStream(state, dir, options);
    if (stream == nullptr) return;
    AddAll(*stream, 100, state);
    if (from_snapshot && !stream->Snapshot().ok()) state.SkipWithError("Snapshot failed");
  }
  uint64_t records = 0;
  for (auto _ : state) {
    auto stream = NearDuplicateStream::OpenExisting(dir, options);
    if (!stream.ok()) {
      state.SkipWithError(stream.status().ToString().c_str());
      break;
    }
    records = (*stream)->recovery().replayed_records + (*stream)->recovery().snapshot_documents;
  }
  fs::remove_all(dir);
  state.counters["records"] = static_cast<double>(records);
  state.counters["s/1M records"] = benchmark::Counter(
      static_cast<double>(records) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_StreamRecovery)
    ->Arg(0)
    ->Arg(1)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// Texts of about 3 KB of words w0..w19999 (SplitMix64), every fifth an
// edited copy of one of the 64 texts before it; made one at a time, so a
// million of them need no memory.
class SyntheticTexts {
 public:
  const std::string& Next() {
    if (++made_ % 5 == 0 && !recent_.empty()) {
      text_ = recent_[Random() % recent_.size()];
      text_.replace(Random() % (text_.size() / 2), 5, "edits");
      return text_;
    }
    text_.clear();
    while (text_.size() < 3000) text_ += "w" + std::to_string(Random() % 20000) + " ";
    if (recent_.size() < 64) {
      recent_.push_back(text_);
    } else {
      recent_[made_ % 64] = text_;
    }
    return text_;
  }

 private:
  uint64_t Random() { return random_.Next(); }
  internal::SplitMix64 random_{0x5eed};
  uint64_t made_ = 0;
  std::string text_;
  std::vector<std::string> recent_;
};

// Resident bytes of this process now (/proc/self/statm).
uint64_t ResidentBytes() {
  unsigned long long pages_total = 0;
  unsigned long long pages_resident = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  const int read = std::fscanf(statm, "%llu %llu", &pages_total, &pages_resident);
  std::fclose(statm);
  return read == 2 ? pages_resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// How many of the slowest adds BM_StreamAddPause lists on stderr.
constexpr size_t kSlowestAdds = 8;

void BM_StreamAddPause(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  const bool durable = state.range(1) != 0;
  StreamOpenOptions options;
  options.sync = false;
  options.snapshot_log_bytes = uint64_t{16} << 20;
  const std::string dir = BenchDir("stream-pause");
  double worst_wall = 0;
  double worst_cpu = 0;
  uint64_t over_1ms = 0;
  uint64_t memory_bytes = 0;
  uint64_t resident_before = 0;
  uint64_t resident_after = 0;
  // The slowest adds by thread CPU: (cpu seconds, add number), for the report.
  std::vector<std::pair<double, size_t>> slowest;
  // Every add's wall seconds, for the percentiles.
  std::vector<double> walls;
  // Adds over 0.5 ms with and without a memory step (count, wall seconds).
  constexpr double kSlowAdd = 0.5e-3;
  constexpr uint64_t kGrowthBytes = uint64_t{64} << 10;
  uint64_t slow_growth = 0;
  uint64_t slow_other = 0;
  double slow_growth_wall = 0;
  double slow_other_wall = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(dir);
    auto stream = durable ? NearDuplicateStream::Open(dir, {}, options)
                          : NearDuplicateStream::Create(StreamConfig{});
    if (!stream.ok()) {
      state.SkipWithError(stream.status().ToString().c_str());
      break;
    }
    SyntheticTexts texts;
    resident_before = ResidentBytes();
    walls.clear();
    walls.reserve(count);
    uint64_t memory_before = (*stream)->Stats().memory_bytes;
    state.ResumeTiming();
    for (size_t i = 0; i < count; ++i) {
      const std::string id = "d" + std::to_string(i);
      const std::string& text = texts.Next();
      const auto wall_start = std::chrono::steady_clock::now();
      const double cpu_start = ThreadCpuSeconds();
      if (!(*stream)->Add(id, text, static_cast<int64_t>(i)).ok()) {
        state.SkipWithError("Add failed");
      }
      const double cpu = ThreadCpuSeconds() - cpu_start;
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      worst_wall = std::max(worst_wall, wall);
      worst_cpu = std::max(worst_cpu, cpu);
      over_1ms += wall > 1e-3;
      walls.push_back(wall);
      const uint64_t memory_after = (*stream)->Stats().memory_bytes;
      if (wall > kSlowAdd) {
        if (memory_after >= memory_before + kGrowthBytes) {
          ++slow_growth;
          slow_growth_wall += wall;
        } else {
          ++slow_other;
          slow_other_wall += wall;
        }
      }
      memory_before = memory_after;
      if (slowest.size() < kSlowestAdds || cpu > slowest.back().first) {
        if (slowest.size() == kSlowestAdds) slowest.pop_back();
        slowest.emplace_back(cpu, i);
        std::sort(slowest.begin(), slowest.end(), std::greater<>());
      }
    }
    memory_bytes = (*stream)->Stats().memory_bytes;
    resident_after = ResidentBytes();
  }
  fs::remove_all(dir);
  std::fprintf(stderr, "BM_StreamAddPause/%zu/%d slowest adds (add number: thread CPU ms):", count,
               durable ? 1 : 0);
  for (const auto& [cpu, i] : slowest) std::fprintf(stderr, " %zu:%.1f", i, cpu * 1e3);
  std::fprintf(stderr, "\n");
  std::sort(walls.begin(), walls.end());
  const auto percentile_ms = [&](double p) {
    if (walls.empty()) return 0.0;
    const auto at = static_cast<size_t>(p * static_cast<double>(walls.size() - 1));
    return walls[at] * 1e3;
  };
  state.counters["p50_ms"] = percentile_ms(0.5);
  state.counters["p99_ms"] = percentile_ms(0.99);
  state.counters["p999_ms"] = percentile_ms(0.999);
  state.counters["slow_growth"] = static_cast<double>(slow_growth);
  state.counters["slow_growth_ms"] = slow_growth_wall * 1e3;
  state.counters["slow_other"] = static_cast<double>(slow_other);
  state.counters["slow_other_ms"] = slow_other_wall * 1e3;
  state.counters["worst_add_ms"] = worst_wall * 1e3;
  state.counters["worst_add_cpu_ms"] = worst_cpu * 1e3;
  state.counters["adds_over_1ms"] = static_cast<double>(over_1ms);
  state.counters["memory_bytes/doc"] =
      static_cast<double>(memory_bytes) / static_cast<double>(count);
  state.counters["resident_bytes/doc"] =
      static_cast<double>(resident_after - std::min(resident_after, resident_before)) /
      static_cast<double>(count);
}
BENCHMARK(BM_StreamAddPause)
    ->Args({60000, 0})
    ->Args({60000, 1})
    ->Args({1000000, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// BM_StreamRollOver/<log KiB>/<writers>: durable adds (fdatasync, as the
// server) of 40,000 synthetic 3 KB texts by <writers> threads, each posting
// batches of 50 (~150 KB of text, as bench/server/http_load --batch), to a
// window that only grows, whose log is rolled over to a new file every
// <log KiB> (65536: the server's default 64 MiB, no roll-over here). The
// cost of a roll-over on the add path (session 16): counters p50/p99/max of
// a batch's wall milliseconds, and roll-overs (log files at the end, less
// one). The texts are made before the timing.
void BM_StreamRollOver(benchmark::State& state) {
  const uint64_t log_bytes = static_cast<uint64_t>(state.range(0)) << 10;
  const size_t writers = static_cast<size_t>(state.range(1));
  constexpr size_t kDocuments = 40000;
  constexpr size_t kBatch = 50;
  std::vector<std::string> texts;
  std::vector<std::string> ids;
  SyntheticTexts made;
  for (size_t i = 0; i < kDocuments; ++i) {
    texts.push_back(made.Next());
    ids.push_back("d" + std::to_string(i));
  }
  StreamOpenOptions options;
  options.snapshot_log_bytes = log_bytes;
  const std::string dir = BenchDir("stream-roll");
  std::vector<double> latencies;
  size_t logs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<NearDuplicateStream> opened = OpenEmptyStream(state, dir, options);
    if (opened == nullptr) break;
    NearDuplicateStream& stream = *opened;
    latencies.clear();
    std::mutex latencies_mutex;
    std::atomic<size_t> next_batch{0};
    std::atomic<bool> failed{false};
    state.ResumeTiming();
    std::vector<std::thread> threads;
    for (size_t w = 0; w < writers; ++w) {
      threads.emplace_back([&] {
        std::vector<double> mine;
        std::vector<StreamDocument> batch;
        for (;;) {
          const size_t first = next_batch.fetch_add(kBatch);
          if (first >= kDocuments) break;
          batch.clear();
          for (size_t i = first; i < std::min(kDocuments, first + kBatch); ++i) {
            batch.push_back(StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
          }
          const auto start = std::chrono::steady_clock::now();
          if (!stream.AddBatch(batch).ok()) failed = true;
          mine.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        std::lock_guard<std::mutex> lock(latencies_mutex);
        latencies.insert(latencies.end(), mine.begin(), mine.end());
      });
    }
    for (std::thread& thread : threads) thread.join();
    state.PauseTiming();
    if (failed) state.SkipWithError("AddBatch failed");
    logs = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      logs += entry.path().filename().string().rfind("log-", 0) == 0;
    }
    opened.reset();
    state.ResumeTiming();
  }
  fs::remove_all(dir);
  std::sort(latencies.begin(), latencies.end());
  auto at = [&](double q) {
    return latencies.empty() ? 0.0
                             : latencies[std::min(latencies.size() - 1,
                                                  static_cast<size_t>(q * latencies.size()))];
  };
  state.counters["p50_ms"] = at(0.5) * 1e3;
  state.counters["p99_ms"] = at(0.99) * 1e3;
  state.counters["max_ms"] = latencies.empty() ? 0.0 : latencies.back() * 1e3;
  state.counters["roll_overs"] = static_cast<double>(logs > 0 ? logs - 1 : 0);
  state.counters["documents/s"] =
      benchmark::Counter(static_cast<double>(kDocuments) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
// BM_StreamSpareLog/<background>: 4000 durable single adds (fdatasync, as
// the server) of synthetic 3 KB texts by one writer to a window that only
// grows, its log rolled over every 96 KiB. The add after which the log
// rolled over (Stats().log_bytes fell) is the one whose writer made the
// next log ahead (its creation and a directory fsync) with background 0, as
// every stream did before session 20; with 1 (the default) the snapshot
// thread makes it. Counters: p50 and max wall milliseconds of those adds
// (roll_*) and of the others (other_*), and the roll-overs.
void BM_StreamSpareLog(benchmark::State& state) {
  constexpr size_t kDocuments = 4000;
  StreamOpenOptions options;
  options.snapshot_log_bytes = uint64_t{96} << 10;
  options.background_snapshots = state.range(0) != 0;
  std::vector<std::string> texts;
  SyntheticTexts made;
  for (size_t i = 0; i < kDocuments; ++i) texts.push_back(made.Next());
  const std::string dir = BenchDir("stream-spare");
  std::vector<double> rolls;
  std::vector<double> others;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<NearDuplicateStream> stream = OpenEmptyStream(state, dir, options);
    if (stream == nullptr) break;
    rolls.clear();
    others.clear();
    uint64_t log_bytes = 0;
    state.ResumeTiming();
    for (size_t i = 0; i < kDocuments; ++i) {
      const std::string id = "d" + std::to_string(i);
      const auto start = std::chrono::steady_clock::now();
      if (!stream->Add(id, texts[i], static_cast<int64_t>(i)).ok()) {
        state.SkipWithError("Add failed");
        break;
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const uint64_t now = stream->Stats().log_bytes;
      (now < log_bytes ? rolls : others).push_back(wall);
      log_bytes = now;
    }
    state.PauseTiming();
    stream.reset();
    state.ResumeTiming();
  }
  fs::remove_all(dir);
  const auto at = [](std::vector<double>& v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))] * 1e3;
  };
  state.counters["roll_p50_ms"] = at(rolls, 0.5);
  state.counters["roll_max_ms"] = at(rolls, 1.0);
  state.counters["other_p50_ms"] = at(others, 0.5);
  state.counters["other_p99_ms"] = at(others, 0.99);
  state.counters["other_max_ms"] = at(others, 1.0);
  state.counters["roll_overs"] = static_cast<double>(rolls.size());
}
BENCHMARK(BM_StreamSpareLog)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_StreamRollOver)
    ->Args({1024, 4})
    ->Args({65536, 4})
    ->Args({1024, 8})
    ->Args({65536, 8})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace neardup::bench

BENCHMARK_MAIN();
