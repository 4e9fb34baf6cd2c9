#include "gpu/cuda_fingerprinter.h"

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda_pipeline.h"
#include "gpu/gpu_tables.h"

namespace neardup::internal::gpu {
namespace {

// Documents of this size or more go to the CPU (batch offsets are 32-bit).
constexpr size_t kMaxGpuDocumentBytes = size_t{1} << 30;

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

// A FingerprintInput in page-locked memory (a PinnedBuffer): the lanes find
// its texts back to back there and let the GPU read them in place.
class PinnedFingerprintInput final : public FingerprintInput {
 public:
  bool page_locked() const override { return true; }

 protected:
  Result<char*> Reallocate(size_t capacity, size_t keep) override {
    auto grown = std::make_unique<PinnedBuffer>();
    NEARDUP_RETURN_IF_ERROR(grown->Reserve(capacity));
    if (keep > 0) std::memcpy(grown->data(), buffer_->data(), keep);
    buffer_ = std::move(grown);
    return buffer_->data();
  }

 private:
  std::unique_ptr<PinnedBuffer> buffer_;
};

Result<std::unique_ptr<FingerprintInput>> NewPinnedFingerprintInput(size_t initial_bytes) {
  std::unique_ptr<FingerprintInput> input = std::make_unique<PinnedFingerprintInput>();
  NEARDUP_RETURN_IF_ERROR(input->Reserve(initial_bytes));
  return input;
}

// One stream's state: its pipeline and reusable host buffers.
struct Lane {
  std::unique_ptr<CudaPipeline> pipeline;
  PinnedBuffer bytes;
  std::vector<uint32_t> offsets;
  BatchSketches sketches;
};

// The state one ComputeBatch call shares between its lanes and the calling
// thread: the cursor from which lanes claim batches (so a lane that finishes
// early takes the next one), and the documents the lanes hand to the CPU
// backend, which the calling thread fingerprints while the lanes go on.
struct CallState {
  std::span<const std::string_view> texts;
  // One of the two outputs: Fingerprint structs, or the flat batch (whose
  // chunk part l is lane l's and the last part the CPU's).
  std::vector<Fingerprint>* out = nullptr;
  FingerprintBatch* flat = nullptr;
  std::mutex mutex;
  std::condition_variable wake;
  size_t next = 0;  // the first document no lane has claimed
  std::vector<std::vector<size_t>> for_cpu;
  size_t lanes_running = 0;
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
        lanes_(std::move(lanes)),
        layout_(FingerprintBatchLayout::For(recipe_, selection_)) {}

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

  // The lanes claim batches of consecutive documents, pack them (or use them
  // in place when they already lie back to back in page-locked memory), run
  // them on the GPU and unpack the results; documents the GPU flags as
  // non-ASCII (and any of 1 GiB or more) come back to this thread, which runs
  // the CPU backend on them meanwhile. No pass over the input happens before
  // the lanes start.
  Status ComputeBatch(std::span<const std::string_view> texts,
                      std::vector<Fingerprint>* out) const override {
    out->resize(texts.size());
    if (lanes_.empty()) {  // a recipe the GPU path does not cover
      CountHost(texts);
      return cpu_->ComputeBatch(texts, out);
    }
    CallState call;
    call.texts = texts;
    call.out = out;
    return RunCall(&call);
  }

  // The same, into flat arrays: each lane writes its documents' rows
  // straight from the pipeline's result buffers (no Fingerprint structs).
  Status ComputeBatch(std::span<const std::string_view> texts,
                      FingerprintBatch* out) const override {
    if (lanes_.empty()) {
      CountHost(texts);
      return cpu_->ComputeBatch(texts, out);
    }
    out->Reset(texts.size(), layout_);
    if (selection_.chunks) out->StartChunks(lanes_.size() + 1);
    CallState call;
    call.texts = texts;
    call.flat = out;
    NEARDUP_RETURN_IF_ERROR(RunCall(&call));
    if (selection_.chunks) out->FinishChunks();
    return Status::Ok();
  }

  // Page-locked memory, which the lanes read in place.
  Result<std::unique_ptr<FingerprintInput>> NewInput(size_t initial_bytes) const override {
    return NewPinnedFingerprintInput(initial_bytes);
  }

 private:
  void CountHost(std::span<const std::string_view> texts) const {
    uint64_t total = 0;
    for (const std::string_view text : texts) total += text.size();
    host_documents_ += texts.size();
    host_bytes_ += total;
  }

  // The body of both ComputeBatch overloads for a recipe the GPU covers.
  Status RunCall(CallState* call_state) const {
    CallState& call = *call_state;
    const std::span<const std::string_view> texts = call.texts;
    const Clock::time_point call_start = Clock::now();
    std::lock_guard<std::mutex> gpu_lock(gpu_mutex_);
    const size_t num_lanes = std::min(lanes_.size(), std::max<size_t>(texts.size(), 1));
    call.lanes_running = num_lanes;
    std::vector<Status> lane_status(num_lanes);
    std::vector<std::thread> threads;
    for (size_t l = 0; l < num_lanes; ++l) {
      threads.emplace_back([&, l] {
        size_t first = 0;
        size_t last = 0;
        while (lane_status[l].ok() && ClaimBatch(&call, &first, &last)) {
          lane_status[l] = RunBatch(&call, first, last, l);
        }
        std::lock_guard<std::mutex> lock(call.mutex);
        --call.lanes_running;
        call.wake.notify_all();
      });
    }
    // Meanwhile: the CPU backend on what the lanes hand back.
    Status cpu_status;
    while (true) {
      std::vector<size_t> docs;
      {
        std::unique_lock<std::mutex> lock(call.mutex);
        call.wake.wait(lock, [&] { return !call.for_cpu.empty() || call.lanes_running == 0; });
        if (call.for_cpu.empty()) break;
        docs = std::move(call.for_cpu.back());
        call.for_cpu.pop_back();
      }
      if (!cpu_status.ok()) continue;
      const Clock::time_point start = Clock::now();
      cpu_status = ComputeOnCpu(call, docs);
      AddSeconds(start, &stages_.cpu);
    }
    for (std::thread& t : threads) t.join();
    AddSeconds(call_start, &stages_.wall);
    for (const Status& s : lane_status) NEARDUP_RETURN_IF_ERROR(s);
    return cpu_status;
  }

  // Busy seconds per stage (CudaStageSeconds), added up by concurrent lanes.
  struct AtomicStages {
    std::atomic<double> wall{0};
    std::atomic<double> claim{0};
    std::atomic<double> pack{0};
    std::atomic<double> device{0};
    std::atomic<double> h2d{0};
    std::atomic<double> kernels{0};
    std::atomic<double> d2h{0};
    std::atomic<double> unpack{0};
    std::atomic<double> cpu{0};
    std::atomic<uint64_t> batches{0};
    std::atomic<uint64_t> in_place_batches{0};
  };

  // Claims the next batch, [*first, *last): documents up to batch_bytes in
  // all (at least one). False when none is left.
  bool ClaimBatch(CallState* call, size_t* first, size_t* last) const {
    const Clock::time_point start = Clock::now();
    std::lock_guard<std::mutex> lock(call->mutex);
    const size_t count = call->texts.size();
    size_t i = call->next;
    size_t bytes = 0;
    while (i < count) {
      const size_t size = call->texts[i].size();
      const size_t packed = size < kMaxGpuDocumentBytes ? size : 0;  // those go to the CPU
      if (i > call->next && bytes + packed > options_.batch_bytes) break;
      bytes += packed;
      ++i;
    }
    *first = call->next;
    *last = i;
    call->next = i;
    AddSeconds(start, &stages_.claim);
    return *first < *last;
  }

  // The CPU backend on documents `which` of the call (under gpu_mutex_,
  // on the calling thread).
  Status ComputeOnCpu(const CallState& call, const std::vector<size_t>& which) const {
    std::vector<std::string_view> subset;
    subset.reserve(which.size());
    uint64_t total = 0;
    for (size_t i : which) {
      subset.push_back(call.texts[i]);
      total += call.texts[i].size();
    }
    if (call.flat != nullptr) {
      NEARDUP_RETURN_IF_ERROR(cpu_->ComputeBatch(subset, &cpu_batch_));
      for (size_t j = 0; j < which.size(); ++j) {
        call.flat->CopyDocument(cpu_batch_, j, which[j], /*part=*/lanes_.size());
      }
    } else {
      std::vector<Fingerprint> results;
      NEARDUP_RETURN_IF_ERROR(cpu_->ComputeBatch(subset, &results));
      for (size_t j = 0; j < which.size(); ++j) (*call.out)[which[j]] = std::move(results[j]);
    }
    host_documents_ += which.size();
    host_bytes_ += total;
    return Status::Ok();
  }

  // Points *batch at documents [first, last) of the call: in place when their
  // bytes already lie back to back in page-locked memory (the caller read
  // them into it), else packed into the lane's pinned buffer on the oneTBB
  // workers. Documents of kMaxGpuDocumentBytes or more get no bytes and are
  // appended to *host_docs.
  Status Pack(const CallState& call, size_t first, size_t last, Lane* lane, PackedBatch* batch,
              std::vector<size_t>* host_docs) const {
    const size_t num_docs = last - first;
    lane->offsets.resize(num_docs + 1);
    size_t total = 0;
    uintptr_t base = 0;  // address of the batch's first byte, if contiguous
    bool contiguous = true;
    for (size_t j = 0; j < num_docs; ++j) {
      const std::string_view text = call.texts[first + j];
      lane->offsets[j] = static_cast<uint32_t>(total);
      if (text.size() >= kMaxGpuDocumentBytes) {
        host_docs->push_back(first + j);
        contiguous = false;
        continue;
      }
      if (!text.empty()) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(text.data());
        if (base == 0) base = at - total;
        contiguous = contiguous && at == base + total;
      }
      total += text.size();
    }
    lane->offsets[num_docs] = static_cast<uint32_t>(total);
    batch->offsets = lane->offsets.data();
    batch->num_docs = num_docs;
    if (total == 0 ||  // nothing to copy
        (contiguous && IsPageLocked(reinterpret_cast<const char*>(base), total))) {
      batch->bytes = reinterpret_cast<const char*>(base);
      stages_.in_place_batches += 1;
      return Status::Ok();
    }
    NEARDUP_RETURN_IF_ERROR(lane->bytes.Reserve(std::max<size_t>(total, 1)));
    char* dst = lane->bytes.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, num_docs, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t j = range.begin(); j != range.end(); ++j) {
                          const std::string_view text = call.texts[first + j];
                          const size_t size = lane->offsets[j + 1] - lane->offsets[j];
                          if (size > 0) CopyToBatch(dst + lane->offsets[j], text.data(), size);
                        }
#if defined(__x86_64__)
                        _mm_sfence();  // the streamed stores before the DMA
#endif
                      });
    batch->bytes = dst;
    return Status::Ok();
  }

  // Writes the GPU's results of documents [first, last) into the call's
  // output, except those flagged non-ASCII, which it appends to *host_docs.
  void Unpack(CallState* call, size_t first, size_t last, const BatchSketches& s, size_t lane_index,
              std::vector<size_t>* host_docs) const {
    const size_t num_docs = last - first;
    if (call->flat != nullptr) {
      UnpackFlat(call->flat, first, last, s, lane_index);
      for (size_t j = 0; j < num_docs; ++j) {
        if (s.non_ascii[j]) host_docs->push_back(first + j);
      }
      return;
    }
    const size_t k = static_cast<size_t>(recipe_.minhash.num_hashes);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, num_docs, 64),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t j = range.begin(); j != range.end(); ++j) {
                          if (s.non_ascii[j]) continue;
                          Fingerprint& f = (*call->out)[first + j];
                          f.num_tokens = s.num_tokens[j];
                          f.invalid_utf8_sequences = s.invalid_utf8 ? s.invalid_utf8[j] : 0;
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
    for (size_t j = 0; j < num_docs; ++j) {
      if (s.non_ascii[j]) host_docs->push_back(first + j);
    }
  }

  // Unpack into the flat batch: rows copied from the pipeline's result
  // buffers (the fixed-size ones on the oneTBB workers; chunk sets into the
  // lane's part, which only this lane writes).
  void UnpackFlat(FingerprintBatch* out, size_t first, size_t last, const BatchSketches& s,
                  size_t lane_index) const {
    const size_t num_docs = last - first;
    const size_t k = static_cast<size_t>(recipe_.minhash.num_hashes);
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, num_docs, 256), [&](const tbb::blocked_range<size_t>& range) {
          for (size_t j = range.begin(); j != range.end(); ++j) {
            if (s.non_ascii[j]) continue;
            const size_t d = first + j;
            out->mutable_num_tokens()[d] = s.num_tokens[j];
            if (selection_.simhash) {
              out->mutable_simhash()[d] = s.simhash_high[j];
              if (recipe_.simhash.bits == 128) {
                out->mutable_simhash_low()[d] = s.simhash_low[j];
              }
            }
            if (selection_.minhash) {
              out->SetMinHash(d, std::span<const uint64_t>(s.minhash + j * k, s.minhash_count[j]));
            }
            if (selection_.kvalue_minhash) {
              std::memcpy(out->mutable_kvalue_minhash().data() + d * k, s.kvalue + j * k,
                          k * sizeof(uint64_t));
              out->mutable_kvalue_empty()[d] = s.kvalue_empty[j] != 0 ? 1 : 0;
            }
          }
        });
    if (selection_.chunks) {
      for (size_t j = 0; j < num_docs; ++j) {
        if (s.non_ascii[j]) continue;
        const uint32_t* c = s.chunk_ids;
        out->SetChunks(
            lane_index, first + j,
            std::span<const uint32_t>(c + s.chunk_offsets[j], c + s.chunk_offsets[j + 1]));
      }
    }
  }

  Status RunBatch(CallState* call, size_t first, size_t last, size_t lane_index) const {
    Lane* lane = lanes_[lane_index].get();
    Clock::time_point start = Clock::now();
    std::vector<size_t> host_docs;
    PackedBatch batch;
    NEARDUP_RETURN_IF_ERROR(Pack(*call, first, last, lane, &batch, &host_docs));
    AddSeconds(start, &stages_.pack);
    start = Clock::now();
    BatchTimings timings;
    NEARDUP_RETURN_IF_ERROR(lane->pipeline->Run(batch, &lane->sketches, &timings));
    AddSeconds(start, &stages_.device);
    AddMilliseconds(timings.h2d_ms, &stages_.h2d);
    AddMilliseconds(timings.kernels_ms, &stages_.kernels);
    AddMilliseconds(timings.d2h_ms, &stages_.d2h);
    stages_.batches += 1;
    start = Clock::now();
    // The huge documents Pack left out come first; Unpack appends the flagged.
    const size_t huge = host_docs.size();
    Unpack(call, first, last, lane->sketches, lane_index, &host_docs);
    uint64_t flagged_bytes = 0;
    for (size_t j = huge; j < host_docs.size(); ++j)
      flagged_bytes += call->texts[host_docs[j]].size();
    device_documents_ += (last - first) - host_docs.size();
    device_bytes_ += batch.offsets[batch.num_docs] - flagged_bytes;
    AddSeconds(start, &stages_.unpack);
    if (!host_docs.empty()) {
      std::lock_guard<std::mutex> lock(call->mutex);
      call->for_cpu.push_back(std::move(host_docs));
      call->wake.notify_all();
    }
    return Status::Ok();
  }

  static void AddMilliseconds(double ms, std::atomic<double>* total) {
    double old = total->load();
    while (!total->compare_exchange_weak(old, old + ms / 1e3)) {
    }
  }

 public:
  CudaStageSeconds StageSeconds() const {
    CudaStageSeconds s;
    s.wall = stages_.wall.load();
    s.claim = stages_.claim.load();
    s.pack = stages_.pack.load();
    s.device = stages_.device.load();
    s.h2d = stages_.h2d.load();
    s.kernels = stages_.kernels.load();
    s.d2h = stages_.d2h.load();
    s.unpack = stages_.unpack.load();
    s.cpu = stages_.cpu.load();
    s.batches = stages_.batches.load();
    s.in_place_batches = stages_.in_place_batches.load();
    return s;
  }

 private:
  const Recipe recipe_;
  const SketchSelection selection_;
  const std::unique_ptr<Fingerprinter> cpu_;
  const CudaFingerprinterOptions options_;
  // A lane's buffers are scratch, used under gpu_mutex_.
  const std::vector<std::unique_ptr<Lane>> lanes_;
  const FingerprintBatchLayout layout_;
  mutable std::mutex gpu_mutex_;
  // The CPU backend's results for the flat path, used under gpu_mutex_.
  mutable FingerprintBatch cpu_batch_;
  mutable std::atomic<uint64_t> device_documents_{0};
  mutable std::atomic<uint64_t> device_bytes_{0};
  mutable std::atomic<uint64_t> host_documents_{0};
  mutable std::atomic<uint64_t> host_bytes_{0};
  mutable AtomicStages stages_;
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
  if (options.batch_bytes < 1 || options.batch_bytes > kMaxGpuDocumentBytes) {
    return InvalidArgumentError("CUDA batch bytes (" + std::to_string(options.batch_bytes) +
                                ") must be in [1, 2^30]");
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
