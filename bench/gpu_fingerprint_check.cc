// neardup_gpu_check: the GPU backend's check and throughput benchmark in one
// self-contained binary, for a machine with a GPU but none of the project's
// build dependencies (scripts/gpu_check.sh carries it there with the shared
// libraries it needs). Prints one summary:
//   - the device, and host-to-device copy bandwidth from pinned memory;
//   - bit-identity: CPU versus CUDA fingerprints (every sketch) on a seeded
//     corpus and, if given, a real JSONL corpus, per test recipe;
//   - throughput per recipe (default, paper) and sketch (SimHash, bottom-k
//     MinHash): end to end (host texts in, Fingerprint structs out) for the
//     CPU backend on all cores and for the CUDA backend (texts anywhere in
//     host memory, and texts back to back in page-locked memory, read in
//     place), with each stage's time per call; and the CUDA kernels alone on
//     one batch already on the device.
// Usage: neardup_gpu_check [--corpus FILE.jsonl] [--bench-mib N] [--quick]
// Exit status 1 if any fingerprint differs.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/cuda_fingerprinter.h"
#include "gpu/cuda_pipeline.h"
#include "gpu/gpu_tables.h"
#include "gpu/gpu_test_util.h"
#include "gpu/gpu_utf8_tables.h"
#include "gpu/gpu_utf8_test_util.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprint_backend.h"

namespace neardup::internal::gpu {
namespace {

template <class T>
T ValueOr(Result<T> result, T fallback) {
  return result.ok() ? *result : fallback;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> ReadCorpus(const std::string& path) {
  std::vector<std::string> texts;
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) {
    std::printf("corpus %s: %s\n", path.c_str(), reader.status().ToString().c_str());
    return texts;
  }
  Document doc;
  while (true) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok() || !*next) break;
    texts.push_back(std::move(doc.text));
  }
  return texts;
}

// Mismatching documents of CUDA versus CPU over every test recipe.
size_t CheckIdentity(const char* name, const std::vector<std::string>& texts) {
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  size_t total_bytes = 0;
  size_t ascii = 0;
  for (const std::string& t : texts) {
    total_bytes += t.size();
    ascii += std::all_of(t.begin(), t.end(), [](char c) { return (c & 0x80) == 0; });
  }
  std::printf("identity %-12s %zu docs, %.1f MB, %.1f%% pure ASCII\n", name, texts.size(),
              total_bytes / 1e6, 100.0 * ascii / std::max<size_t>(texts.size(), 1));
  size_t bad_total = 0;
  for (const Recipe& recipe : GpuTestRecipes()) {
    const SketchSelection selection = AllSketches();
    auto cpu = CreateCpuFingerprinter(recipe, selection).value();
    Result<std::unique_ptr<Fingerprinter>> cuda = CreateCudaFingerprinter(recipe, selection);
    if (!cuda.ok()) {
      std::printf("  %-28s CUDA backend: %s\n", recipe.name.c_str(),
                  cuda.status().ToString().c_str());
      ++bad_total;
      continue;
    }
    std::vector<Fingerprint> expected;
    std::vector<Fingerprint> actual;
    const Status a = cpu->ComputeBatch(views, &expected);
    const Status b = (*cuda)->ComputeBatch(views, &actual);
    size_t bad = 0;
    std::string first;
    if (!a.ok() || !b.ok()) {
      bad = texts.size();
      first = a.ok() ? b.ToString() : a.ToString();
    } else {
      for (size_t i = 0; i < texts.size(); ++i) {
        const std::string diff = FingerprintDifference(actual[i], expected[i], selection, recipe);
        if (!diff.empty() && bad++ == 0) first = "doc " + std::to_string(i) + ": " + diff;
      }
    }
    const FingerprinterStats s = (*cuda)->stats();
    std::printf("  %-28s %s  gpu %llu docs, cpu fallback %llu docs (%.2f%% of bytes)%s%s\n",
                recipe.name.c_str(), bad == 0 ? "IDENTICAL" : "MISMATCH ",
                static_cast<unsigned long long>(s.device_documents),
                static_cast<unsigned long long>(s.host_documents),
                100.0 * s.host_bytes / std::max<double>(1, s.device_bytes + s.host_bytes),
                bad == 0 ? "" : "  first: ", first.c_str());
    bad_total += bad;
  }
  return bad_total;
}

struct Row {
  std::string label;
  double cpu_gbps = 0;
  double cuda_gbps = 0;         // texts anywhere in host memory (packed by the host)
  double cuda_pinned_gbps = 0;  // texts back to back in page-locked memory (read in place)
  double cuda_flat_gbps = 0;    // the same, into a FingerprintBatch (flat arrays)
  double kernel_gbps = 0;
  double h2d_ms = 0;
  double kernel_ms = 0;
  double d2h_ms = 0;
  CudaStageSeconds stages;         // per call, texts anywhere
  CudaStageSeconds pinned_stages;  // per call, texts in page-locked memory
  std::string stages_ms;           // kernel stages of one 256 MiB batch
};

// The median rate of `repeats` ComputeBatch calls after a warm-up call
// (allocations, pools). For a CUDA fingerprinter, *stages (if not null)
// receives the stage seconds per timed call.
// With `flat`, the calls write a reused FingerprintBatch instead of
// Fingerprint structs.
double EndToEndGBps(const Fingerprinter& f, const std::vector<std::string_view>& views,
                    size_t bytes, int repeats, CudaStageSeconds* stages = nullptr,
                    bool flat = false) {
  std::vector<Fingerprint> out;
  FingerprintBatch flat_out;
  auto compute = [&] {
    return flat ? f.ComputeBatch(views, &flat_out) : f.ComputeBatch(views, &out);
  };
  if (!compute().ok()) return 0;
  const CudaStageSeconds before = ValueOr(CudaStageTimes(f), CudaStageSeconds{});
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    if (!compute().ok()) return 0;
    rates.push_back(bytes / Seconds(start) / 1e9);
  }
  if (stages != nullptr) {
    const CudaStageSeconds after = ValueOr(CudaStageTimes(f), CudaStageSeconds{});
    auto per_call = [&](double a, double b) { return (a - b) / repeats; };
    stages->wall = per_call(after.wall, before.wall);
    stages->claim = per_call(after.claim, before.claim);
    stages->pack = per_call(after.pack, before.pack);
    stages->device = per_call(after.device, before.device);
    stages->h2d = per_call(after.h2d, before.h2d);
    stages->kernels = per_call(after.kernels, before.kernels);
    stages->d2h = per_call(after.d2h, before.d2h);
    stages->unpack = per_call(after.unpack, before.unpack);
    stages->cpu = per_call(after.cpu, before.cpu);
    stages->batches = (after.batches - before.batches) / repeats;
    stages->in_place_batches = (after.in_place_batches - before.in_place_batches) / repeats;
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// Texts copied back to back into one page-locked buffer, as a reader that
// decompresses or parses straight into it would leave them: the CUDA
// backend then reads them in place, with no host copy.
struct PinnedTexts {
  PinnedBuffer buffer;
  std::vector<std::string_view> views;
};

// Copies `views` into pinned->buffer (grown if needed) on all cores;
// *copy_seconds (if not null) receives the time of the copy alone.
bool CopyToPinned(const std::vector<std::string_view>& views, PinnedTexts* pinned,
                  double* copy_seconds = nullptr) {
  std::vector<size_t> offsets(views.size() + 1, 0);
  for (size_t i = 0; i < views.size(); ++i) offsets[i + 1] = offsets[i] + views[i].size();
  if (!pinned->buffer.Reserve(std::max<size_t>(offsets.back(), 1)).ok()) return false;
  char* base = pinned->buffer.data();
  const auto start = std::chrono::steady_clock::now();
  tbb::parallel_for(tbb::blocked_range<size_t>(0, views.size(), 256),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        std::memcpy(base + offsets[i], views[i].data(), views[i].size());
                      }
                    });
  if (copy_seconds != nullptr) *copy_seconds = Seconds(start);
  pinned->views.clear();
  for (size_t i = 0; i < views.size(); ++i) {
    pinned->views.emplace_back(base + offsets[i], views[i].size());
  }
  return true;
}

// The kernels alone on one batch of the first 256 MiB of `views`, already
// on the device: row->kernel_ms (median of 5), kernel_gbps, stages_ms, and
// the copies' times. Returns 0, or the exit status of a failure.
int TimeKernels(const Recipe& recipe, const SketchSelection& selection,
                const std::vector<std::string_view>& views, Row* row) {
  const GpuRecipeTables tables = BuildGpuRecipeTables(recipe).value();
  auto pipeline = CudaPipeline::Create(recipe, selection, tables).value();
  PinnedBuffer packed;
  std::vector<uint32_t> offsets = {0};
  size_t batch_bytes = 0;
  for (size_t i = 0; i < views.size() && batch_bytes + views[i].size() <= (size_t{256} << 20);
       ++i) {
    batch_bytes += views[i].size();
    offsets.push_back(static_cast<uint32_t>(batch_bytes));
  }
  if (!packed.Reserve(batch_bytes).ok()) return 4;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    std::memcpy(packed.data() + offsets[i], views[i].data(), views[i].size());
  }
  PackedBatch batch{packed.data(), offsets.data(), offsets.size() - 1};
  BatchSketches sketches;
  BatchTimings timings;
  if (!pipeline->Run(batch, &sketches, &timings).ok()) return 5;
  if (!pipeline->Run(batch, &sketches, &timings).ok()) return 5;
  row->h2d_ms = timings.h2d_ms;
  row->d2h_ms = timings.d2h_ms;
  row->kernel_ms = ValueOr(pipeline->TimeKernelsOnLastBatch(5, &row->stages_ms), 0.0);
  row->kernel_gbps = batch_bytes / (row->kernel_ms * 1e6);
  return 0;
}

void PrintStages(const char* label, const char* input, const CudaStageSeconds& s) {
  std::printf("%-16s %-7s %7.1f %6.1f %6.1f %7.1f %6.1f %7.1f %6.1f %6.1f %6.1f %4llu/%llu\n",
              label, input, s.wall * 1e3, s.claim * 1e3, s.pack * 1e3, s.device * 1e3, s.h2d * 1e3,
              s.kernels * 1e3, s.d2h * 1e3, s.unpack * 1e3, s.cpu * 1e3,
              static_cast<unsigned long long>(s.in_place_batches),
              static_cast<unsigned long long>(s.batches));
}

int Main(int argc, char** argv) {
  std::string corpus_path;
  size_t bench_mib = 1024;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--corpus" && i + 1 < argc) {
      corpus_path = argv[++i];
    } else if (arg == "--bench-mib" && i + 1 < argc) {
      bench_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--corpus FILE.jsonl] [--bench-mib N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::string device;
  const Status device_status = CudaDeviceStatus(&device);
  if (!device_status.ok()) {
    std::printf("no GPU: %s\n", device_status.ToString().c_str());
    return 3;
  }
  std::printf("device: %s\n", device.c_str());
  const double h2d = ValueOr(MeasureHostToDeviceGBps(size_t{1} << 30, 5), 0.0);
  std::printf("host-to-device copy (pinned, 1 GiB): %.1f GB/s\n", h2d);

  // 1. Bit identity.
  std::printf("UTF-8 path: %s\n", GpuUtf8PathEnabled()
                                      ? "on (NEARDUP_GPU_UTF8=1)"
                                      : "off (documents with a byte >= 0x80 go to the CPU)");
  size_t mismatches =
      CheckIdentity("synthetic", SyntheticCorpus(11, quick ? 500 : 4000, 20000, 10));
  // Many scripts, marks, compatibility forms and invalid UTF-8
  // (gpu/gpu_utf8_test_util.h): on the UTF-8 path about half of it runs on
  // the GPU.
  mismatches += CheckIdentity("multiscript", MultiScriptCorpus(12, quick ? 1000 : 4000));
  std::vector<std::string> real;
  if (!corpus_path.empty()) {
    real = ReadCorpus(corpus_path);
    if (!real.empty()) mismatches += CheckIdentity("real", real);
  }

  // 2. Throughput: a seeded corpus of ~bench_mib MiB (64 MiB of distinct
  // documents, repeated), plus the real corpus's share of ASCII if given.
  const std::vector<std::string> base = [&] {
    std::vector<std::vector<std::string>> parts(16);
    tbb::parallel_for(size_t{0}, parts.size(), [&](size_t p) {
      // ~4 MiB each, all ASCII, running text (no token over 40 bytes).
      parts[p] = SyntheticCorpus(1000 + p, 4096, 16000, 0, /*long_tokens=*/false);
    });
    std::vector<std::string> all;
    for (auto& part : parts) {
      for (auto& t : part) all.push_back(std::move(t));
    }
    return all;
  }();
  size_t base_bytes = 0;
  for (const std::string& t : base) base_bytes += t.size();
  std::vector<std::string_view> views;
  size_t bytes = 0;
  while (bytes < bench_mib << 20) {
    for (const std::string& t : base) {
      views.push_back(t);
      bytes += t.size();
    }
  }
  std::printf("\nthroughput corpus: %zu docs, %.0f MB (%.0f MB distinct), mean %.0f bytes/doc\n",
              views.size(), bytes / 1e6, base_bytes / 1e6, double(bytes) / views.size());
  // The host's share: copying every document into one pinned buffer on all
  // cores (what packing batches costs at best). The last copy stays, as the
  // page-locked input of the in-place rows.
  double pack_gbps = 0;
  auto pinned = std::make_unique<PinnedTexts>();
  if (!CopyToPinned(views, pinned.get())) return 4;  // allocates
  {
    std::vector<double> rates;
    for (int r = 0; r < 3; ++r) {
      double seconds = 0;
      CopyToPinned(views, pinned.get(), &seconds);
      rates.push_back(bytes / seconds / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    pack_gbps = rates[1];
  }
  std::vector<Row> rows;
  for (const char* preset : {"default", "paper"}) {
    for (int sketch = 0; sketch < 2; ++sketch) {
      const Recipe recipe = PresetRecipe(preset).value();
      SketchSelection selection;
      (sketch == 0 ? selection.simhash : selection.minhash) = true;
      Row row;
      row.label = std::string(preset) + (sketch == 0 ? " simhash" : " minhash");
      auto cpu = CreateCpuFingerprinter(recipe, selection).value();
      auto cuda = CreateCudaFingerprinter(recipe, selection).value();
      row.cpu_gbps = EndToEndGBps(*cpu, views, bytes, quick ? 1 : 3);
      const int repeats = quick ? 1 : 3;
      row.cuda_gbps = EndToEndGBps(*cuda, views, bytes, repeats, &row.stages);
      row.cuda_pinned_gbps = EndToEndGBps(*cuda, pinned->views, bytes, repeats, &row.pinned_stages);
      row.cuda_flat_gbps = EndToEndGBps(*cuda, pinned->views, bytes, repeats, nullptr, true);
      // The kernels alone, on one 256 MiB batch on the device.
      const int status = TimeKernels(recipe, selection, views, &row);
      if (status != 0) return status;
      rows.push_back(row);
      std::printf("  %-16s done\n", row.label.c_str());
      std::fflush(stdout);
    }
  }
  // The real corpus (every document, non-ASCII ones going to the CPU),
  // repeated to the same size: end to end only.
  std::vector<std::string> real_rows;
  if (!real.empty()) {
    std::vector<std::string_view> real_views;
    size_t real_bytes = 0;
    while (real_bytes < bench_mib << 20) {
      for (const std::string& t : real) {
        real_views.push_back(t);
        real_bytes += t.size();
      }
    }
    for (int sketch = 0; sketch < 2; ++sketch) {
      SketchSelection selection;
      (sketch == 0 ? selection.simhash : selection.minhash) = true;
      const Recipe recipe = PresetRecipe("default").value();
      auto cpu = CreateCpuFingerprinter(recipe, selection).value();
      auto cuda = CreateCudaFingerprinter(recipe, selection).value();
      const double cpu_gbps = EndToEndGBps(*cpu, real_views, real_bytes, quick ? 1 : 2);
      const double cuda_gbps = EndToEndGBps(*cuda, real_views, real_bytes, quick ? 1 : 2);
      const FingerprinterStats st = cuda->stats();
      double in_place_gbps = 0;
      if (sketch == 0) pinned.reset();  // the synthetic corpus's copy: memory for this one
      if (sketch == 0 && !real_views.empty()) {
        pinned = std::make_unique<PinnedTexts>();
        if (!CopyToPinned(real_views, pinned.get())) pinned.reset();
      }
      if (pinned != nullptr) {
        in_place_gbps = EndToEndGBps(*cuda, pinned->views, real_bytes, quick ? 1 : 2);
      }
      char line[240];
      std::snprintf(line, sizeof(line),
                    "real corpus x%zu (%.0f MB) default %s: CPU %.2f GB/s, CUDA %.2f GB/s, "
                    "in place %.2f GB/s (%.1f%% of bytes on the CPU fallback)",
                    real_views.size() / real.size(), real_bytes / 1e6,
                    sketch == 0 ? "simhash" : "minhash", cpu_gbps, cuda_gbps, in_place_gbps,
                    100.0 * st.host_bytes / std::max<double>(1, st.host_bytes + st.device_bytes));
      real_rows.push_back(line);
    }
  }

  // The UTF-8 path's kernels (NEARDUP_GPU_UTF8=1): one 256 MiB batch of
  // the multi-script corpus, and of the real corpus, repeated (a batch with
  // a byte >= 0x80 runs them; documents they do not cover are still
  // computed on the device, and dropped).
  std::vector<std::string> utf8_rows;
  if (GpuUtf8PathEnabled()) {
    std::vector<std::string> multiscript = MultiScriptCorpus(13, 20000);
    for (const std::vector<std::string>* corpus : {&multiscript, &real}) {
      if (corpus->empty()) continue;
      std::vector<std::string_view> corpus_views;
      size_t corpus_bytes = 0;
      while (corpus_bytes < (size_t{256} << 20)) {
        for (const std::string& t : *corpus) {
          corpus_views.push_back(t);
          corpus_bytes += t.size();
        }
      }
      SketchSelection selection;
      selection.simhash = true;
      Row row;
      const int status =
          TimeKernels(PresetRecipe("default").value(), selection, corpus_views, &row);
      if (status != 0) return status;
      char line[400];
      std::snprintf(line, sizeof(line), "UTF-8 kernels, %s corpus, default simhash: %.1f GB/s (%s)",
                    corpus == &real ? "real" : "multiscript", row.kernel_gbps,
                    row.stages_ms.c_str());
      utf8_rows.push_back(line);
    }
  }

  // Batch size and streams, for the end-to-end figure (the in-place rows
  // read the synthetic corpus from page-locked memory again).
  if (!real.empty()) {
    pinned = std::make_unique<PinnedTexts>();
    if (!CopyToPinned(views, pinned.get())) return 4;
  }
  std::vector<std::string> sweep;
  for (size_t batch_mib : {16, 32, 64, 128}) {
    for (int streams : {2, 4, 6}) {
      CudaFingerprinterOptions options;
      options.batch_bytes = batch_mib << 20;
      options.streams = streams;
      SketchSelection selection;
      selection.simhash = true;
      auto cuda = CreateCudaFingerprinter(PresetRecipe("default").value(), selection, options);
      if (!cuda.ok()) continue;
      char line[160];
      std::snprintf(line, sizeof(line),
                    "  batch %3zu MiB, %d streams: default simhash %.2f GB/s, in place %.2f GB/s",
                    batch_mib, streams, EndToEndGBps(**cuda, views, bytes, quick ? 1 : 2),
                    EndToEndGBps(**cuda, pinned->views, bytes, quick ? 1 : 2));
      sweep.push_back(line);
    }
  }

  std::printf("\n==== neardup GPU check summary ====\n");
  std::printf(
      "device: %s; H2D pinned %.1f GB/s; host memcpy of the corpus into pinned memory "
      "(all cores) %.1f GB/s\n",
      device.c_str(), h2d, pack_gbps);
  std::printf("bit identity: %s (%zu mismatching document-recipe pairs); UTF-8 path %s\n",
              mismatches == 0 ? "PASS" : "FAIL", mismatches, GpuUtf8PathEnabled() ? "on" : "off");
  std::printf("%-16s %9s %9s %9s %9s %9s   per 256 MiB batch: %6s %6s %6s\n", "recipe sketch",
              "CPU GB/s", "CUDA GB/s", "in place", "flat", "kernels", "H2D ms", "kern", "D2H");
  for (const Row& r : rows) {
    std::printf("%-16s %9.2f %9.2f %9.2f %9.2f %9.1f   %25.1f %6.1f %6.1f\n", r.label.c_str(),
                r.cpu_gbps, r.cuda_gbps, r.cuda_pinned_gbps, r.cuda_flat_gbps, r.kernel_gbps,
                r.h2d_ms, r.kernel_ms, r.d2h_ms);
  }
  std::printf(
      "(flat = in place into a FingerprintBatch, flat arrays; session 7, first run on a "
      "GPU here)\n");
  std::printf(
      "CUDA end to end, ms per call: wall, then busy time per stage summed over lanes "
      "(lanes overlap; h2d/kernels/d2h are stream-event times within device):\n");
  std::printf("%-16s %-7s %7s %6s %6s %7s %6s %7s %6s %6s %6s %s\n", "recipe sketch", "input",
              "wall", "claim", "pack", "device", "h2d", "kernels", "d2h", "unpack", "cpu",
              "in place/batches");
  for (const Row& r : rows) {
    PrintStages(r.label.c_str(), "copied", r.stages);
    PrintStages(r.label.c_str(), "pinned", r.pinned_stages);
  }
  std::printf("kernel stages, ms per 256 MiB batch:\n");
  for (const Row& r : rows) std::printf("%-16s %s\n", r.label.c_str(), r.stages_ms.c_str());
  for (const std::string& line : real_rows) std::printf("%s\n", line.c_str());
  for (const std::string& line : utf8_rows) std::printf("%s\n", line.c_str());
  std::printf(
      "end to end by batch size and streams (default is 64 MiB, 3 streams; in place = "
      "texts in page-locked memory):\n");
  for (const std::string& line : sweep) std::printf("%s\n", line.c_str());
  return mismatches == 0 ? 0 : 1;
}

}  // namespace
}  // namespace neardup::internal::gpu

int main(int argc, char** argv) { return neardup::internal::gpu::Main(argc, argv); }
