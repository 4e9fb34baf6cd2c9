#include "gpu/cuda_fingerprinter.h"

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda_pipeline.h"
#include "gpu/gpu_tables.h"

namespace neardup::internal::gpu {
namespace {

// Documents of this size or more go to the CPU (batch offsets are 32-bit).
constexpr size_t kMaxGpuDocumentBytes = size_t{1} << 30;

bool IsAscii(std::string_view text) {
  // Eight bytes at a time; the compiler vectorises the OR.
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    any |= w;
  }
  for (; i < text.size(); ++i) any |= static_cast<unsigned char>(text[i]);
  return (any & 0x8080808080808080ULL) == 0;
}

// memcpy into the pinned batch buffer with non-temporal stores where the
// copy is long: the buffer is read next by the GPU's DMA engine, not by this
// core, so filling the cache with it (and reading each line before writing
// it) only costs host memory bandwidth, the bound of the whole backend.
void CopyToBatch(char* dst, const char* src, size_t n) {
#if defined(__x86_64__)
  if (n >= 256) {
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    std::memcpy(dst, src, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
    }
    std::memcpy(dst + i, src + i, n - i);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

// Adds the seconds since `start` to *total (atomically: lanes run at once).
void AddSeconds(std::chrono::steady_clock::time_point start, std::atomic<double>* total) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double old = total->load();
  while (!total->compare_exchange_weak(old, old + s)) {
  }
}

// One stream's state: its pipeline and reusable host buffers.
struct Lane {
  std::unique_ptr<CudaPipeline> pipeline;
  PinnedBuffer bytes;
  std::vector<uint32_t> offsets;
  BatchSketches sketches;
};

class CudaFingerprinter final : public Fingerprinter {
 public:
  using Clock = std::chrono::steady_clock;

  CudaFingerprinter(Recipe recipe, SketchSelection selection, std::unique_ptr<Fingerprinter> cpu,
                    CudaFingerprinterOptions options, std::vector<std::unique_ptr<Lane>> lanes)
      : recipe_(std::move(recipe)),
        selection_(selection),
        cpu_(std::move(cpu)),
        options_(options),
        lanes_(std::move(lanes)) {}

  const Recipe& recipe() const override { return recipe_; }
  const SketchSelection& selection() const override { return selection_; }
  std::string_view backend_name() const override { return "cuda"; }

  FingerprinterStats stats() const override {
    FingerprinterStats s;
    s.device_documents = device_documents_.load();
    s.device_bytes = device_bytes_.load();
    s.host_documents = host_documents_.load();
    s.host_bytes = host_bytes_.load();
    return s;
  }

  Status Compute(std::string_view text, Fingerprint* out) const override {
    host_documents_ += 1;
    host_bytes_ += text.size();
    return cpu_->Compute(text, out);
  }

  Status ComputeBatch(std::span<const std::string_view> texts,
                      std::vector<Fingerprint>* out) const override {
    out->resize(texts.size());
    if (lanes_.empty()) {  // a recipe the GPU path does not cover
      return ComputeOnCpu(texts, std::vector<size_t>(), /*all=*/true, out);
    }
    const Clock::time_point classify_start = Clock::now();
    std::vector<uint8_t> on_gpu(texts.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, texts.size(), 256),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t i = range.begin(); i != range.end(); ++i) {
                          on_gpu[i] = texts[i].size() < kMaxGpuDocumentBytes && IsAscii(texts[i]);
                        }
                      });
    std::vector<size_t> gpu_docs;
    std::vector<size_t> cpu_docs;
    for (size_t i = 0; i < texts.size(); ++i) (on_gpu[i] ? gpu_docs : cpu_docs).push_back(i);
    // Batches: runs of GPU documents up to batch_bytes each.
    std::vector<size_t> batch_starts = {0};
    size_t bytes = 0;
    for (size_t j = 0; j < gpu_docs.size(); ++j) {
      const size_t size = texts[gpu_docs[j]].size();
      if (bytes + size > options_.batch_bytes && j > batch_starts.back()) {
        batch_starts.push_back(j);
        bytes = 0;
      }
      bytes += size;
    }
    batch_starts.push_back(gpu_docs.size());
    const size_t num_batches = batch_starts.size() - 1;
    AddSeconds(classify_start, &classify_seconds_);

    Status cpu_status;
    tbb::task_group cpu_work;
    if (!cpu_docs.empty()) {
      cpu_work.run([&] {
        const Clock::time_point start = Clock::now();
        cpu_status = ComputeOnCpu(texts, cpu_docs, /*all=*/false, out);
        AddSeconds(start, &cpu_seconds_);
      });
    }
    std::vector<Status> lane_status(lanes_.size());
    {
      std::lock_guard<std::mutex> lock(gpu_mutex_);
      std::vector<std::thread> threads;
      for (size_t l = 0; l < lanes_.size() && l < num_batches; ++l) {
        threads.emplace_back([&, l] {
          for (size_t b = l; b < num_batches && lane_status[l].ok(); b += lanes_.size()) {
            lane_status[l] = RunBatch(texts, gpu_docs, batch_starts[b], batch_starts[b + 1],
                                      lanes_[l].get(), out);
          }
        });
      }
      for (std::thread& t : threads) t.join();
    }
    cpu_work.wait();
    for (const Status& s : lane_status) NEARDUP_RETURN_IF_ERROR(s);
    return cpu_status;
  }

 private:
  Status ComputeOnCpu(std::span<const std::string_view> texts, const std::vector<size_t>& which,
                      bool all, std::vector<Fingerprint>* out) const {
    std::vector<std::string_view> subset;
    if (!all) {
      subset.reserve(which.size());
      for (size_t i : which) subset.push_back(texts[i]);
    }
    std::span<const std::string_view> input =
        all ? texts : std::span<const std::string_view>(subset);
    std::vector<Fingerprint> results;
    NEARDUP_RETURN_IF_ERROR(cpu_->ComputeBatch(input, &results));
    uint64_t total = 0;
    for (size_t j = 0; j < input.size(); ++j) {
      total += input[j].size();
      (*out)[all ? j : which[j]] = std::move(results[j]);
    }
    host_documents_ += input.size();
    host_bytes_ += total;
    return Status::Ok();
  }

  Status RunBatch(std::span<const std::string_view> texts, const std::vector<size_t>& gpu_docs,
                  size_t first, size_t last, Lane* lane, std::vector<Fingerprint>* out) const {
    const size_t num_docs = last - first;
    Clock::time_point start = Clock::now();
    lane->offsets.resize(num_docs + 1);
    size_t total = 0;
    for (size_t j = 0; j < num_docs; ++j) {
      lane->offsets[j] = static_cast<uint32_t>(total);
      total += texts[gpu_docs[first + j]].size();
    }
    lane->offsets[num_docs] = static_cast<uint32_t>(total);
    NEARDUP_RETURN_IF_ERROR(lane->bytes.Reserve(std::max<size_t>(total, 1)));
    char* dst = lane->bytes.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, num_docs, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t j = range.begin(); j != range.end(); ++j) {
                          const std::string_view text = texts[gpu_docs[first + j]];
                          if (!text.empty()) {
                            CopyToBatch(dst + lane->offsets[j], text.data(), text.size());
                          }
                        }
#if defined(__x86_64__)
                        _mm_sfence();  // the streamed stores before the DMA
#endif
                      });
    PackedBatch batch;
    batch.bytes = lane->bytes.data();
    batch.offsets = lane->offsets.data();
    batch.num_docs = num_docs;
    AddSeconds(start, &pack_seconds_);
    start = Clock::now();
    NEARDUP_RETURN_IF_ERROR(lane->pipeline->Run(batch, &lane->sketches, nullptr));
    AddSeconds(start, &device_seconds_);
    start = Clock::now();
    const BatchSketches& s = lane->sketches;
    const size_t k = static_cast<size_t>(recipe_.minhash.num_hashes);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, num_docs, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t j = range.begin(); j != range.end(); ++j) {
                          Fingerprint& f = (*out)[gpu_docs[first + j]];
                          f.num_tokens = s.num_tokens[j];
                          f.invalid_utf8_sequences = 0;
                          if (selection_.simhash) {
                            f.simhash = s.simhash_high[j];
                            if (recipe_.simhash.bits == 128) {
                              f.simhash128 = SimHash128{s.simhash_high[j], s.simhash_low[j]};
                            }
                          }
                          if (selection_.minhash) {
                            f.minhash.k = static_cast<uint32_t>(k);
                            const uint64_t* v = s.minhash + j * k;
                            f.minhash.values.assign(v, v + s.minhash_count[j]);
                          }
                          if (selection_.kvalue_minhash) {
                            const uint64_t* v = s.kvalue + j * k;
                            f.kvalue_minhash.values.assign(v, v + k);
                            f.kvalue_minhash.empty = s.kvalue_empty[j] != 0;
                          }
                          if (selection_.chunks) {
                            const uint32_t* c = s.chunk_ids;
                            f.chunks.assign(c + s.chunk_offsets[j], c + s.chunk_offsets[j + 1]);
                          }
                        }
                      });
    AddSeconds(start, &unpack_seconds_);
    device_documents_ += num_docs;
    device_bytes_ += total;
    return Status::Ok();
  }

 public:
  CudaStageSeconds StageSeconds() const {
    return CudaStageSeconds{classify_seconds_.load(), pack_seconds_.load(), device_seconds_.load(),
                            unpack_seconds_.load(), cpu_seconds_.load()};
  }

 private:
  const Recipe recipe_;
  const SketchSelection selection_;
  const std::unique_ptr<Fingerprinter> cpu_;
  const CudaFingerprinterOptions options_;
  // A lane's buffers are scratch, used under gpu_mutex_.
  const std::vector<std::unique_ptr<Lane>> lanes_;
  mutable std::mutex gpu_mutex_;
  mutable std::atomic<uint64_t> device_documents_{0};
  mutable std::atomic<uint64_t> device_bytes_{0};
  mutable std::atomic<uint64_t> host_documents_{0};
  mutable std::atomic<uint64_t> host_bytes_{0};
  mutable std::atomic<double> classify_seconds_{0};
  mutable std::atomic<double> pack_seconds_{0};
  mutable std::atomic<double> device_seconds_{0};
  mutable std::atomic<double> unpack_seconds_{0};
  mutable std::atomic<double> cpu_seconds_{0};
};

}  // namespace

Result<CudaStageSeconds> CudaStageTimes(const Fingerprinter& fingerprinter) {
  const auto* cuda = dynamic_cast<const CudaFingerprinter*>(&fingerprinter);
  if (cuda == nullptr) return InvalidArgumentError("not a CUDA fingerprinter");
  return cuda->StageSeconds();
}

Result<std::unique_ptr<Fingerprinter>> CreateCudaFingerprinter(
    const Recipe& recipe, const SketchSelection& selection,
    const CudaFingerprinterOptions& options) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Fingerprinter> cpu,
                           CreateCpuFingerprinter(recipe, selection));
  NEARDUP_RETURN_IF_ERROR(CudaDeviceStatus(nullptr));
  if (options.streams < 1) {
    return InvalidArgumentError("CUDA streams (" + std::to_string(options.streams) +
                                ") must be at least 1");
  }
  std::vector<std::unique_ptr<Lane>> lanes;
  if (GpuCoversRecipe(recipe, nullptr)) {
    NEARDUP_ASSIGN_OR_RETURN(GpuRecipeTables tables, BuildGpuRecipeTables(recipe));
    for (int i = 0; i < options.streams; ++i) {
      auto lane = std::make_unique<Lane>();
      NEARDUP_ASSIGN_OR_RETURN(lane->pipeline, CudaPipeline::Create(recipe, selection, tables));
      lanes.push_back(std::move(lane));
    }
  }
  return std::unique_ptr<Fingerprinter>(
      new CudaFingerprinter(recipe, selection, std::move(cpu), options, std::move(lanes)));
}

}  // namespace neardup::internal::gpu
