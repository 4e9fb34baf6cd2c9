// CudaPipeline: runs the kernels of gpu/cuda_kernels.cuh over one batch
// (gpu/cuda_pipeline.h explains the stages): device memory from the stream's
// pool, CUB for scans, selects and segmented sorts, results copied into
// page-locked memory.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_kernels.cuh"
#include "gpu/cuda_pipeline.h"
#include "gpu/cuda_utf8_kernels.cuh"
#include "gpu/gpu_utf8_tables.h"

namespace neardup::internal::gpu {
namespace {

#define NEARDUP_CUDA_RETURN(expr)                                   \
  do {                                                              \
    const cudaError_t neardup_cuda_error = (expr);                  \
    if (neardup_cuda_error != cudaSuccess) {                        \
      return InternalError(std::string("CUDA: ") + #expr + ": " +   \
                           cudaGetErrorString(neardup_cuda_error)); \
    }                                                               \
  } while (0)

#define NEARDUP_CUDA_LAUNCHED() NEARDUP_CUDA_RETURN(cudaGetLastError())

// The UTF-8 path takes batches up to this size: its output is at most 7.5
// bytes per input byte (15 bytes for a 2-byte sequence), so positions stay
// 32-bit. A larger batch (batch_bytes is at most 1 GiB) runs the ASCII path
// (its documents with a byte >= 0x80 go to the CPU).
constexpr uint32_t kMaxUtf8BatchBytes = uint32_t{1} << 28;

unsigned Blocks(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<size_t>(std::max<size_t>(blocks, 1), 65535 * 16));
}

// Device memory for one run, released (to the stream's pool) at the end.
class DeviceArena {
 public:
  explicit DeviceArena(cudaStream_t stream) : stream_(stream) {}
  ~DeviceArena() { Release(); }
  void Release() {
    for (void* p : blocks_) cudaFreeAsync(p, stream_);
    blocks_.clear();
  }
  template <class T>
  Status Allocate(size_t count, T** out) {
    void* p = nullptr;
    NEARDUP_CUDA_RETURN(cudaMallocAsync(&p, std::max<size_t>(count, 1) * sizeof(T), stream_));
    blocks_.push_back(p);
    *out = static_cast<T*>(p);
    return Status::Ok();
  }

 private:
  cudaStream_t stream_;
  std::vector<void*> blocks_;
};

class CudaPipelineImpl final : public CudaPipeline {
 public:
  CudaPipelineImpl(const Recipe& recipe, const SketchSelection& selection,
                   const GpuRecipeTables& tables)
      : recipe_(recipe), selection_(selection), host_tables_(tables) {
    std::memcpy(tables_.byte_class, tables.byte_class.data(), 128);
    std::memcpy(tables_.mapped, tables.mapped.data(), 128);
    std::memcpy(tables_.secret, tables.xxh3_secret.data(), kXxh3SecretSize);
    tables_.hash = tables.hash;
    tables_.seed = tables.seed;
    tables_.short_keys = MakeXxh3ShortKeys(tables.xxh3_secret.data(), tables.seed);
    for (int c = 0; c < 128; ++c) deletes_bytes_ |= (tables.byte_class[c] & kByteKept) == 0;
  }

  ~CudaPipelineImpl() override {
    if (text_ != nullptr) cudaFree(text_);
    if (offsets_ != nullptr) cudaFree(offsets_);
    if (stop_bytes_ != nullptr) cudaFree(stop_bytes_);
    if (stop_offsets_ != nullptr) cudaFree(stop_offsets_);
    if (byte_class_ != nullptr) cudaFree(byte_class_);
    for (void* p : utf8_device_) cudaFree(p);
    for (cudaEvent_t e : events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (auto& [name, e] : marks_) cudaEventDestroy(e);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status Init() {
    NEARDUP_CUDA_RETURN(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (cudaEvent_t& e : events_) NEARDUP_CUDA_RETURN(cudaEventCreate(&e));
    // Keep freed pool memory for the next batch instead of returning it.
    int device = 0;
    NEARDUP_CUDA_RETURN(cudaGetDevice(&device));
    cudaMemPool_t pool;
    NEARDUP_CUDA_RETURN(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t threshold = UINT64_MAX;
    NEARDUP_CUDA_RETURN(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    num_stopwords_ = host_tables_.num_stopwords();
    const std::string& words = host_tables_.stopword_bytes;
    const std::vector<uint32_t>& word_offsets = host_tables_.stopword_offsets;
    NEARDUP_CUDA_RETURN(cudaMalloc(&stop_bytes_, std::max<size_t>(words.size(), 1)));
    NEARDUP_CUDA_RETURN(cudaMalloc(&stop_offsets_, word_offsets.size() * sizeof(uint32_t)));
    if (!words.empty()) {
      NEARDUP_CUDA_RETURN(
          cudaMemcpy(stop_bytes_, words.data(), words.size(), cudaMemcpyHostToDevice));
    }
    NEARDUP_CUDA_RETURN(cudaMemcpy(stop_offsets_, word_offsets.data(),
                                   word_offsets.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
    NEARDUP_CUDA_RETURN(cudaMalloc(&byte_class_, 128));
    NEARDUP_CUDA_RETURN(
        cudaMemcpy(byte_class_, host_tables_.byte_class.data(), 128, cudaMemcpyHostToDevice));
    if (host_tables_.utf8 != nullptr) NEARDUP_RETURN_IF_ERROR(UploadUtf8Tables());
    return Status::Ok();
  }

  Status Run(const PackedBatch& batch, BatchSketches* out, BatchTimings* timings) override {
    const auto num_docs = static_cast<uint32_t>(batch.num_docs);
    const uint32_t n = batch.offsets[batch.num_docs];
    NEARDUP_RETURN_IF_ERROR(EnsureInput(n, num_docs));
    NEARDUP_CUDA_RETURN(cudaEventRecord(events_[0], stream_));
    if (n > 0) {
      NEARDUP_CUDA_RETURN(cudaMemcpyAsync(text_, batch.bytes, n, cudaMemcpyHostToDevice, stream_));
    }
    NEARDUP_CUDA_RETURN(cudaMemcpyAsync(offsets_, batch.offsets,
                                        (size_t{num_docs} + 1) * sizeof(uint32_t),
                                        cudaMemcpyHostToDevice, stream_));
    n_ = n;
    num_docs_ = num_docs;
    NEARDUP_CUDA_RETURN(cudaEventRecord(events_[1], stream_));
    DeviceArena arena(stream_);
    DeviceResults results;
    NEARDUP_RETURN_IF_ERROR(RunKernels(&arena, &results));
    NEARDUP_CUDA_RETURN(cudaEventRecord(events_[2], stream_));
    NEARDUP_RETURN_IF_ERROR(CopyResults(results, out));
    arena.Release();
    NEARDUP_CUDA_RETURN(cudaEventRecord(events_[3], stream_));
    NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
    if (timings != nullptr) {
      float ms = 0;
      NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, events_[0], events_[1]));
      timings->h2d_ms = ms;
      NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, events_[1], events_[2]));
      timings->kernels_ms = ms;
      NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, events_[2], events_[3]));
      timings->d2h_ms = ms;
    }
    return Status::Ok();
  }

  Result<double> TimeKernelsOnLastBatch(int repeats, std::string* stages) override {
    if (repeats < 1) return InvalidArgumentError("repeats must be at least 1");
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      DeviceArena arena(stream_);
      DeviceResults results;
      profile_ = stages != nullptr && r == repeats - 1;
      num_marks_ = 0;
      NEARDUP_CUDA_RETURN(cudaEventRecord(events_[0], stream_));
      NEARDUP_RETURN_IF_ERROR(Mark("start"));
      NEARDUP_RETURN_IF_ERROR(RunKernels(&arena, &results));
      NEARDUP_RETURN_IF_ERROR(Mark("end"));
      NEARDUP_CUDA_RETURN(cudaEventRecord(events_[1], stream_));
      arena.Release();
      NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
      float ms = 0;
      NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, events_[0], events_[1]));
      times.push_back(ms);
      if (profile_) {
        stages->clear();
        for (size_t i = 1; i < num_marks_; ++i) {
          NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second));
          char part[64];
          std::snprintf(part, sizeof(part), "%s%s %.2f", i > 1 ? ", " : "", marks_[i].first, ms);
          *stages += part;
        }
      }
      profile_ = false;
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  // Device pointers of one run's outputs (owned by the run's arena).
  struct DeviceResults {
    uint8_t* non_ascii = nullptr;
    uint32_t* invalid_utf8 = nullptr;  // the UTF-8 path only
    uint32_t* num_tokens = nullptr;
    uint64_t* simhash_high = nullptr;
    uint64_t* simhash_low = nullptr;
    uint64_t* minhash = nullptr;
    uint32_t* minhash_count = nullptr;
    uint64_t* kvalue = nullptr;
    uint8_t* kvalue_empty = nullptr;
    uint32_t* chunk_offsets = nullptr;
    uint32_t* chunk_ids = nullptr;
    uint32_t num_chunks = 0;
  };

  Status EnsureInput(uint32_t n, uint32_t num_docs) {
    if (n > text_capacity_) {
      if (text_ != nullptr) NEARDUP_CUDA_RETURN(cudaFree(text_));
      text_ = nullptr;
      text_capacity_ = std::max<size_t>(n, text_capacity_ * 3 / 2);
      NEARDUP_CUDA_RETURN(cudaMalloc(&text_, text_capacity_));
    }
    if (size_t{num_docs} + 1 > offsets_capacity_) {
      if (offsets_ != nullptr) NEARDUP_CUDA_RETURN(cudaFree(offsets_));
      offsets_ = nullptr;
      offsets_capacity_ = std::max<size_t>(size_t{num_docs} + 1, offsets_capacity_ * 3 / 2);
      NEARDUP_CUDA_RETURN(cudaMalloc(&offsets_, offsets_capacity_ * sizeof(uint32_t)));
    }
    return Status::Ok();
  }

  // CUB's two-phase call: ask for the temporary size, allocate, run.
  template <class Call>
  Status Cub(DeviceArena* arena, Call call) {
    size_t bytes = 0;
    NEARDUP_CUDA_RETURN(call(nullptr, bytes));
    uint8_t* temp = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(bytes, &temp));
    NEARDUP_CUDA_RETURN(call(temp, bytes));
    return Status::Ok();
  }

  // When profiling, an event after the work enqueued so far, named for it.
  Status Mark(const char* name) {
    if (!profile_) return Status::Ok();
    if (num_marks_ == marks_.size()) {
      cudaEvent_t e;
      NEARDUP_CUDA_RETURN(cudaEventCreate(&e));
      marks_.emplace_back(name, e);
    }
    marks_[num_marks_].first = name;
    NEARDUP_CUDA_RETURN(cudaEventRecord(marks_[num_marks_].second, stream_));
    ++num_marks_;
    return Status::Ok();
  }

  // One value from the device (a count that sizes what follows).
  template <class T>
  Status ReadBack(const T* device, T* host) {
    NEARDUP_CUDA_RETURN(cudaMemcpyAsync(host, device, sizeof(T), cudaMemcpyDeviceToHost, stream_));
    NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
    return Status::Ok();
  }

  template <class Kernel, class... Args>
  Status Launch(size_t threads, Kernel kernel, Args... args) {
    kernel<<<Blocks(threads), kThreads, 0, stream_>>>(args...);
    NEARDUP_CUDA_LAUNCHED();
    return Status::Ok();
  }

  // The kept tokens of the batch: hashes, documents and per-document
  // offsets (num_docs + 1).
  struct Tokens {
    const uint64_t* hashes = nullptr;
    const uint32_t* docs = nullptr;
    uint32_t* offsets = nullptr;
    uint32_t count = 0;
  };

  // The device copies of the UTF-8 path's tables (gpu/gpu_utf8_tables.h)
  // and their view.
  Status UploadUtf8Tables() {
    const GpuUtf8Tables& t = *host_tables_.utf8;
    auto upload = [&](const void* data, size_t bytes, const void** device) -> Status {
      void* p = nullptr;
      NEARDUP_CUDA_RETURN(cudaMalloc(&p, std::max<size_t>(bytes, 1)));
      utf8_device_.push_back(p);
      if (bytes > 0) NEARDUP_CUDA_RETURN(cudaMemcpy(p, data, bytes, cudaMemcpyHostToDevice));
      *device = p;
      return Status::Ok();
    };
    const void* p = nullptr;
    NEARDUP_RETURN_IF_ERROR(upload(t.stage1.data(), t.stage1.size() * 2, &p));
    utf8_view_.stage1 = static_cast<const uint16_t*>(p);
    NEARDUP_RETURN_IF_ERROR(upload(t.stage2.data(), t.stage2.size() * 4, &p));
    utf8_view_.stage2 = static_cast<const uint32_t*>(p);
    NEARDUP_RETURN_IF_ERROR(upload(t.pool_bytes.data(), t.pool_bytes.size(), &p));
    utf8_view_.pool_bytes = static_cast<const uint8_t*>(p);
    NEARDUP_RETURN_IF_ERROR(upload(t.pool_attrs.data(), t.pool_attrs.size(), &p));
    utf8_view_.pool_attrs = static_cast<const uint8_t*>(p);
    utf8_view_.ascii_class = byte_class_;
    NEARDUP_RETURN_IF_ERROR(upload(host_tables_.mapped.data(), 128, &p));
    utf8_view_.ascii_mapped = static_cast<const uint8_t*>(p);
    utf8_view_.invalid_entry = t.invalid_entry;
    return Status::Ok();
  }

  // Whether the batch in RunKernels runs the UTF-8 path.
  bool Utf8Batch() const { return utf8_batch_; }

  // The normalised text of the batch and its attributes.
  struct Normalized {
    uint8_t* bytes = nullptr;
    uint8_t* attrs = nullptr;
    uint32_t* offsets = nullptr;  // num_docs + 1
    uint32_t size = 0;
  };

  // Step 1 on the UTF-8 path (gpu/cuda_utf8_kernels.cuh): sizes, a scan,
  // the write, document starts and script segmentation's cuts. Flags the
  // documents it does not cover in results->non_ascii.
  Status NormalizeUtf8(DeviceArena* arena, DeviceResults* results, Normalized* out) {
    const uint32_t n = n_;
    const uint32_t num_docs = num_docs_;
    const bool segments = host_tables_.utf8->segments;
    const uint32_t num_chunks = (n + kUtf8ChunkBytes - 1) / kUtf8ChunkBytes;
    uint32_t* sizes = nullptr;
    uint32_t* chunk_positions = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_chunks} + 1, &sizes));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_chunks} + 1, &chunk_positions));
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(sizes, 0, (size_t{num_chunks} + 1) * 4, stream_));
    if (num_chunks > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch(num_chunks, Utf8SizeKernel, static_cast<const uint8_t*>(text_),
                                     static_cast<const uint32_t*>(offsets_), num_docs, n,
                                     utf8_view_, sizes, results->invalid_utf8, results->non_ascii));
    }
    NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, sizes, chunk_positions, num_chunks + 1,
                                           stream_);
    }));
    NEARDUP_RETURN_IF_ERROR(ReadBack(chunk_positions + num_chunks, &out->size));
    const uint32_t size = out->size;
    uint8_t* seg = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{size} + kTokenPadding, &out->bytes));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{size} + kTokenPadding, &out->attrs));
    if (segments) NEARDUP_RETURN_IF_ERROR(arena->Allocate(size, &seg));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &out->offsets));
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(out->bytes + size, 0, kTokenPadding, stream_));
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(out->attrs + size, 0, kTokenPadding, stream_));
    if (num_chunks > 0) {
      NEARDUP_RETURN_IF_ERROR(
          Launch(num_chunks, Utf8WriteKernel, static_cast<const uint8_t*>(text_),
                 static_cast<const uint32_t*>(offsets_), num_docs, n, utf8_view_,
                 static_cast<const uint32_t*>(chunk_positions), out->bytes, out->attrs, seg));
    }
    NEARDUP_RETURN_IF_ERROR(
        Launch(size_t{num_docs} + 1, Utf8DocOffsetsKernel, static_cast<const uint8_t*>(text_),
               static_cast<const uint32_t*>(offsets_), num_docs, n, utf8_view_,
               static_cast<const uint32_t*>(chunk_positions), size, out->offsets, out->attrs));
    if (segments && size > 0) {
      uint8_t* cut = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{size} + kTokenPadding, &cut));
      NEARDUP_CUDA_RETURN(cudaMemsetAsync(cut + size, 0, kTokenPadding, stream_));
      NEARDUP_RETURN_IF_ERROR(Launch(size, SegmentCutKernel,
                                     static_cast<const uint8_t*>(out->attrs),
                                     static_cast<const uint8_t*>(seg), size, cut));
      out->attrs = cut;
    }
    return Status::Ok();
  }

  // Step 1 on the ASCII path: the byte tables; with punctuation removal,
  // where each 16-byte chunk's bytes go comes from a scan of the chunks'
  // kept-byte counts.
  Status NormalizeAscii(DeviceArena* arena, Normalized* out) {
    const uint32_t n = n_;
    const uint32_t num_docs = num_docs_;
    const uint8_t* text = text_;
    uint32_t* chunk_positions = nullptr;
    uint32_t normalized_size = n;
    if (deletes_bytes_ && n > 0) {
      const uint32_t num_chunks = (n + 15) / 16;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_chunks} + 1, &chunk_positions));
      auto kept = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
                                                  KeptInChunk{text, n, byte_class_});
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, kept, chunk_positions, num_chunks + 1,
                                             stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(chunk_positions + num_chunks, &normalized_size));
    }
    uint8_t* normalized = nullptr;
    uint8_t* attrs = nullptr;
    uint32_t* norm_offsets = nullptr;
    // Padded for the token stage's word loads (gpu/gpu_token.h).
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{normalized_size} + kTokenPadding, &normalized));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{normalized_size} + kTokenPadding, &attrs));
    // The padding's values never matter; zeroed so that no read is of
    // memory nothing wrote.
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(normalized + normalized_size, 0, kTokenPadding, stream_));
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(attrs + normalized_size, 0, kTokenPadding, stream_));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &norm_offsets));
    if (n > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch((size_t{n} + 15) / 16, NormalizeKernel, text, n,
                                     static_cast<const uint32_t*>(chunk_positions), tables_,
                                     normalized, attrs));
    }
    NEARDUP_RETURN_IF_ERROR(Launch(
        size_t{num_docs} + 1, DocOffsetsKernel, static_cast<const uint32_t*>(offsets_), num_docs, n,
        text, static_cast<const uint8_t*>(byte_class_),
        static_cast<const uint32_t*>(chunk_positions), normalized_size, norm_offsets, attrs));
    out->bytes = normalized;
    out->attrs = attrs;
    out->offsets = norm_offsets;
    out->size = normalized_size;
    return Status::Ok();
  }

  Status Tokenize(DeviceArena* arena, DeviceResults* results, Tokens* tokens) {
    const uint32_t num_docs = num_docs_;
    // 1. Normalise.
    Normalized norm;
    if (Utf8Batch()) {
      NEARDUP_RETURN_IF_ERROR(NormalizeUtf8(arena, results, &norm));
    } else {
      NEARDUP_RETURN_IF_ERROR(NormalizeAscii(arena, &norm));
    }
    const uint8_t* normalized = norm.bytes;
    const uint8_t* attrs = norm.attrs;
    const uint32_t* norm_offsets = norm.offsets;
    const uint32_t normalized_size = norm.size;
    NEARDUP_RETURN_IF_ERROR(Mark("normalize"));
    // 2. Token starts: at most one per normalised byte.
    uint32_t* starts = nullptr;
    uint32_t* num_starts_device = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(normalized_size, &starts));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &num_starts_device));
    uint32_t num_starts = 0;
    if (normalized_size > 0) {
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceSelect::If(temp, bytes, thrust::counting_iterator<uint32_t>(0), starts,
                                     num_starts_device, normalized_size, TokenStartPredicate{attrs},
                                     stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(num_starts_device, &num_starts));
    }
    NEARDUP_RETURN_IF_ERROR(Mark("starts"));
    // 3. Token hashes and stopwords; each token's document.
    uint64_t* hashes = nullptr;
    uint32_t* docs = nullptr;
    uint8_t* keep = nullptr;
    uint32_t* long_tokens = nullptr;
    uint32_t* num_long = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &hashes));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &docs));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &keep));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &long_tokens));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &num_long));
    if (num_starts > 0) {
      NEARDUP_CUDA_RETURN(cudaMemsetAsync(num_long, 0, sizeof(uint32_t), stream_));
      NEARDUP_RETURN_IF_ERROR(Launch(num_starts, TokenKernel, static_cast<const uint32_t*>(starts),
                                     num_starts, static_cast<const uint8_t*>(normalized),
                                     static_cast<const uint8_t*>(attrs), normalized_size, tables_,
                                     static_cast<const uint8_t*>(stop_bytes_),
                                     static_cast<const uint32_t*>(stop_offsets_), num_stopwords_,
                                     hashes, keep, long_tokens, num_long));
      // Long tokens are few in running text: a small grid that reads their
      // count on the device (no round trip to the host).
      NEARDUP_RETURN_IF_ERROR(
          Launch(size_t{kThreads} * 264, LongTokenKernel, static_cast<const uint32_t*>(long_tokens),
                 static_cast<const uint32_t*>(num_long), static_cast<const uint32_t*>(starts),
                 static_cast<const uint8_t*>(normalized), static_cast<const uint8_t*>(attrs),
                 normalized_size, tables_, hashes));
    }
    NEARDUP_RETURN_IF_ERROR(Mark("hash"));
    if (num_docs > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch(size_t{num_docs} * 32, TokenDocsKernel,
                                     static_cast<const uint32_t*>(starts), num_starts,
                                     static_cast<const uint32_t*>(norm_offsets), num_docs, docs));
    }
    NEARDUP_RETURN_IF_ERROR(Mark("docs"));
    tokens->hashes = hashes;
    tokens->docs = docs;
    tokens->count = num_starts;
    if (num_stopwords_ > 0 && num_starts > 0) {
      uint64_t* kept_hashes = nullptr;
      uint32_t* kept_docs = nullptr;
      uint32_t* num_kept_device = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &kept_hashes));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &kept_docs));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &num_kept_device));
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceSelect::Flagged(temp, bytes, hashes, keep, kept_hashes, num_kept_device,
                                          num_starts, stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceSelect::Flagged(temp, bytes, docs, keep, kept_docs, num_kept_device,
                                          num_starts, stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(num_kept_device, &tokens->count));
      tokens->hashes = kept_hashes;
      tokens->docs = kept_docs;
    }
    NEARDUP_RETURN_IF_ERROR(Mark("stopwords"));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &tokens->offsets));
    return Launch(size_t{num_docs} + 1, TokenOffsetsKernel, tokens->docs, tokens->count, num_docs,
                  tokens->offsets);
  }

  // Features of `width` in kept-token space; *ends receives each document's
  // segment end.
  Status Features(DeviceArena* arena, const Tokens& tokens, uint32_t width, bool remix,
                  uint32_t** ends, uint64_t** features) {
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs_, ends));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(tokens.count, features));
    if (num_docs_ > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch(num_docs_, FeatureEndsKernel,
                                     static_cast<const uint32_t*>(tokens.offsets), num_docs_, width,
                                     *ends, static_cast<uint32_t*>(nullptr)));
    }
    if (tokens.count > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch(tokens.count, FeatureKernel, tokens.hashes, tokens.docs,
                                     static_cast<const uint32_t*>(tokens.offsets),
                                     static_cast<const uint32_t*>(*ends), tokens.count, width,
                                     LeadingCoefficientHd(recipe_.seed), remix, *features));
    }
    return Status::Ok();
  }

  Status RunKernels(DeviceArena* arena, DeviceResults* results) {
    const uint32_t num_docs = num_docs_;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->non_ascii));
    NEARDUP_CUDA_RETURN(cudaMemsetAsync(results->non_ascii, 0, num_docs, stream_));
    if (n_ > 0) {
      NEARDUP_RETURN_IF_ERROR(
          Launch((size_t{n_} + 15) / 16, NonAsciiKernel, static_cast<const uint8_t*>(text_), n_,
                 static_cast<const uint32_t*>(offsets_), num_docs, results->non_ascii));
    }
    utf8_batch_ = false;
    if (host_tables_.utf8 != nullptr && n_ > 0 && n_ <= kMaxUtf8BatchBytes) {
      // The UTF-8 path only for a batch with a byte >= 0x80 (a pure-ASCII
      // batch keeps the byte-table kernels); it flags what its tables do not
      // cover as it normalises.
      uint8_t* any = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &any));
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceReduce::Max(temp, bytes, results->non_ascii, any, num_docs, stream_);
      }));
      uint8_t host_any = 0;
      NEARDUP_RETURN_IF_ERROR(ReadBack(static_cast<const uint8_t*>(any), &host_any));
      if (host_any != 0) {
        utf8_batch_ = true;
        NEARDUP_CUDA_RETURN(cudaMemsetAsync(results->non_ascii, 0, num_docs, stream_));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->invalid_utf8));
        NEARDUP_CUDA_RETURN(
            cudaMemsetAsync(results->invalid_utf8, 0, size_t{num_docs} * 4, stream_));
      }
    }
    Tokens tokens;
    NEARDUP_RETURN_IF_ERROR(Tokenize(arena, results, &tokens));
    const uint32_t* token_offsets = tokens.offsets;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->num_tokens));
    if (num_docs > 0) {
      NEARDUP_RETURN_IF_ERROR(Launch(num_docs, FeatureEndsKernel, token_offsets, num_docs,
                                     uint32_t{1}, static_cast<uint32_t*>(nullptr),
                                     results->num_tokens));
    }
    const uint64_t leading = LeadingCoefficientHd(recipe_.seed);
    if (selection_.simhash) {
      const bool wide = recipe_.simhash.bits == 128;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->simhash_high));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(wide ? num_docs : 0, &results->simhash_low));
      if (num_docs > 0) {
        NEARDUP_RETURN_IF_ERROR(Launch(size_t{num_docs} * 32, SimHashKernel, tokens.hashes,
                                       token_offsets, num_docs,
                                       static_cast<uint32_t>(recipe_.simhash.shingle_width),
                                       leading, wide, results->simhash_high, results->simhash_low));
      }
      NEARDUP_RETURN_IF_ERROR(Mark("simhash"));
    }
    const bool remix_unigrams = recipe_.hash != FeatureHashKind::kXxh3;
    const uint32_t count = tokens.count;
    if (selection_.minhash || selection_.kvalue_minhash) {
      const auto width = static_cast<uint32_t>(recipe_.minhash.shingle_width);
      const auto k = static_cast<uint32_t>(recipe_.minhash.num_hashes);
      uint32_t* ends = nullptr;
      uint64_t* features = nullptr;
      NEARDUP_RETURN_IF_ERROR(
          Features(arena, tokens, width, remix_unigrams && width == 1, &ends, &features));
      NEARDUP_RETURN_IF_ERROR(Mark("features"));
      if (selection_.minhash) {
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &results->minhash));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->minhash_count));
        uint8_t* needs_sort = nullptr;
        uint32_t* num_flagged_device = nullptr;
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &needs_sort));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &num_flagged_device));
        NEARDUP_CUDA_RETURN(cudaMemsetAsync(num_flagged_device, 0, sizeof(uint32_t), stream_));
        uint32_t num_flagged = 0;
        if (num_docs > 0) {
          NEARDUP_RETURN_IF_ERROR(Launch(
              size_t{num_docs} * 32, BottomKSelectKernel, static_cast<const uint64_t*>(features),
              token_offsets, static_cast<const uint32_t*>(ends), num_docs, k, results->minhash,
              results->minhash_count, needs_sort, num_flagged_device));
          NEARDUP_RETURN_IF_ERROR(ReadBack(num_flagged_device, &num_flagged));
        }
        NEARDUP_RETURN_IF_ERROR(Mark("bottom-k"));
        if (num_flagged > 0) {
          // The documents the selection could not settle: sort theirs (the
          // other segments are given as empty) and take the first k.
          uint32_t* sort_ends = nullptr;
          uint64_t* sorted = nullptr;
          NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &sort_ends));
          NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &sorted));
          NEARDUP_RETURN_IF_ERROR(
              Launch(num_docs, FlaggedEndsKernel, token_offsets, static_cast<const uint32_t*>(ends),
                     static_cast<const uint8_t*>(needs_sort), num_docs, sort_ends));
          NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
            return cub::DeviceSegmentedSort::SortKeys(temp, bytes, features, sorted, count,
                                                      num_docs, token_offsets, sort_ends, stream_);
          }));
          NEARDUP_RETURN_IF_ERROR(
              Launch(num_docs, BottomKKernel, static_cast<const uint64_t*>(sorted), token_offsets,
                     static_cast<const uint32_t*>(ends), static_cast<const uint8_t*>(needs_sort),
                     num_docs, k, results->minhash, results->minhash_count));
          NEARDUP_RETURN_IF_ERROR(Mark("bottom-k sorted"));
        }
      }
      if (selection_.kvalue_minhash) {
        uint64_t* mins = nullptr;
        uint8_t* filled = nullptr;
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &mins));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &filled));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &results->kvalue));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->kvalue_empty));
        NEARDUP_CUDA_RETURN(cudaMemsetAsync(mins, 0xFF, size_t{num_docs} * k * 8, stream_));
        NEARDUP_CUDA_RETURN(cudaMemsetAsync(filled, 0, size_t{num_docs} * k, stream_));
        if (count > 0) {
          NEARDUP_RETURN_IF_ERROR(Launch(count, KValueAtomicKernel,
                                         static_cast<const uint64_t*>(features), tokens.docs,
                                         static_cast<const uint32_t*>(ends), count, k,
                                         reinterpret_cast<unsigned long long*>(mins), filled));
        }
        if (num_docs > 0) {
          NEARDUP_RETURN_IF_ERROR(Launch(size_t{num_docs} * k, DensifyKernel,
                                         static_cast<const uint64_t*>(mins),
                                         static_cast<const uint8_t*>(filled), token_offsets,
                                         static_cast<const uint32_t*>(ends), num_docs, k,
                                         recipe_.seed, results->kvalue, results->kvalue_empty));
        }
        NEARDUP_RETURN_IF_ERROR(Mark("k-value"));
      }
    }
    if (selection_.chunks) {
      const auto width = static_cast<uint32_t>(recipe_.chunks.shingle_width);
      uint32_t* ends = nullptr;
      uint64_t* features = nullptr;
      NEARDUP_RETURN_IF_ERROR(
          Features(arena, tokens, width, remix_unigrams && width == 1, &ends, &features));
      uint32_t* ids = nullptr;
      uint32_t* sorted = nullptr;
      uint32_t* keep = nullptr;
      uint32_t* positions = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &ids));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &sorted));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{count} + 1, &keep));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{count} + 1, &positions));
      if (count > 0) {
        NEARDUP_RETURN_IF_ERROR(Launch(count, ChunkIdKernel, static_cast<const uint64_t*>(features),
                                       tokens.docs, static_cast<const uint32_t*>(ends), count,
                                       ids));
        NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
          return cub::DeviceSegmentedSort::SortKeys(temp, bytes, ids, sorted, count, num_docs,
                                                    token_offsets, ends, stream_);
        }));
      }
      NEARDUP_RETURN_IF_ERROR(Launch(size_t{count} + 1, ChunkKeepKernel,
                                     static_cast<const uint32_t*>(sorted), tokens.docs,
                                     token_offsets, static_cast<const uint32_t*>(ends), count,
                                     recipe_.chunks.sample_modulus, keep));
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, keep, positions, count + 1, stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(positions + count, &results->num_chunks));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(results->num_chunks, &results->chunk_ids));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &results->chunk_offsets));
      NEARDUP_RETURN_IF_ERROR(Launch(std::max<size_t>(count, size_t{num_docs} + 1),
                                     ChunkScatterKernel, static_cast<const uint32_t*>(sorted),
                                     static_cast<const uint32_t*>(keep),
                                     static_cast<const uint32_t*>(positions), count, token_offsets,
                                     num_docs, results->chunk_ids, results->chunk_offsets));
      NEARDUP_RETURN_IF_ERROR(Mark("chunks"));
    }
    return Status::Ok();
  }

  // Copies the results into the page-locked result buffer, laid out one
  // array after another (each 16-byte aligned), and points *out at them.
  Status CopyResults(const DeviceResults& r, BatchSketches* out) {
    const size_t num_docs = num_docs_;
    const size_t k = static_cast<size_t>(recipe_.minhash.num_hashes);
    struct Part {
      const void* device;
      size_t bytes;
      const void** host;
    };
    *out = BatchSketches();
    out->num_docs = num_docs;
    std::vector<Part> parts;
    auto add = [&](const auto* device, size_t count, const auto** host) {
      if (device == nullptr) return;
      parts.push_back({device, count * sizeof(*device), reinterpret_cast<const void**>(host)});
    };
    add(r.non_ascii, num_docs, &out->non_ascii);
    add(r.invalid_utf8, num_docs, &out->invalid_utf8);
    add(r.num_tokens, num_docs, &out->num_tokens);
    add(r.simhash_high, num_docs, &out->simhash_high);
    if (recipe_.simhash.bits == 128) add(r.simhash_low, num_docs, &out->simhash_low);
    add(r.minhash, num_docs * k, &out->minhash);
    add(r.minhash_count, num_docs, &out->minhash_count);
    add(r.kvalue, num_docs * k, &out->kvalue);
    add(r.kvalue_empty, num_docs, &out->kvalue_empty);
    add(r.chunk_offsets, num_docs + 1, &out->chunk_offsets);
    add(r.chunk_ids, r.num_chunks, &out->chunk_ids);
    size_t total = 0;
    for (const Part& p : parts) total += (p.bytes + 15) / 16 * 16;
    NEARDUP_RETURN_IF_ERROR(results_.Reserve(std::max<size_t>(total, 16)));
    size_t offset = 0;
    for (const Part& p : parts) {
      char* host = results_.data() + offset;
      if (p.bytes > 0) {
        NEARDUP_CUDA_RETURN(
            cudaMemcpyAsync(host, p.device, p.bytes, cudaMemcpyDeviceToHost, stream_));
      }
      *p.host = host;
      offset += (p.bytes + 15) / 16 * 16;
    }
    return Status::Ok();
  }

  Recipe recipe_;
  SketchSelection selection_;
  GpuRecipeTables host_tables_;
  DeviceTables tables_{};
  bool deletes_bytes_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[4] = {nullptr, nullptr, nullptr, nullptr};
  uint8_t* text_ = nullptr;  // the last batch's bytes and offsets
  size_t text_capacity_ = 0;
  uint32_t* offsets_ = nullptr;
  size_t offsets_capacity_ = 0;
  uint32_t n_ = 0;
  uint32_t num_docs_ = 0;
  uint8_t* stop_bytes_ = nullptr;
  uint32_t* stop_offsets_ = nullptr;
  uint32_t num_stopwords_ = 0;
  uint8_t* byte_class_ = nullptr;  // tables_.byte_class in device memory
  // The UTF-8 path's tables in device memory (host_tables_.utf8 not null).
  std::vector<void*> utf8_device_;
  Utf8TablesView utf8_view_;
  bool utf8_batch_ = false;  // set by RunKernels
  PinnedBuffer results_;
  // Stage events of TimeKernelsOnLastBatch's profiled repeat.
  bool profile_ = false;
  std::vector<std::pair<const char*, cudaEvent_t>> marks_;
  size_t num_marks_ = 0;
};

}  // namespace

Status CudaDeviceStatus(std::string* name) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return FailedPreconditionError(std::string("no usable CUDA device: ") +
                                   cudaGetErrorString(error));
  }
  if (count == 0) return FailedPreconditionError("no CUDA device present");
  cudaDeviceProp prop;
  NEARDUP_CUDA_RETURN(cudaGetDeviceProperties(&prop, 0));
  if (name != nullptr) *name = prop.name;
  return Status::Ok();
}

bool IsPageLocked(const void* data, size_t size) {
  if (data == nullptr || size == 0) return false;
  const char* bytes = static_cast<const char*>(data);
  for (const char* p : {bytes, bytes + size - 1}) {
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
      cudaGetLastError();  // clear it: the answer is just "no"
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

Status PinnedBuffer::Reserve(size_t bytes) {
  if (bytes <= capacity_) return Status::Ok();
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  capacity_ = 0;
  void* p = nullptr;
  NEARDUP_CUDA_RETURN(cudaMallocHost(&p, bytes));
  data_ = static_cast<char*>(p);
  capacity_ = bytes;
  return Status::Ok();
}

Result<std::unique_ptr<CudaPipeline>> CudaPipeline::Create(const Recipe& recipe,
                                                           const SketchSelection& selection,
                                                           const GpuRecipeTables& tables) {
  NEARDUP_RETURN_IF_ERROR(CudaDeviceStatus(nullptr));
  auto pipeline = std::make_unique<CudaPipelineImpl>(recipe, selection, tables);
  NEARDUP_RETURN_IF_ERROR(pipeline->Init());
  return std::unique_ptr<CudaPipeline>(std::move(pipeline));
}

Result<double> MeasureHostToDeviceGBps(size_t bytes, int repeats) {
  PinnedBuffer host;
  NEARDUP_RETURN_IF_ERROR(host.Reserve(bytes));
  std::memset(host.data(), 1, bytes);
  void* device = nullptr;
  NEARDUP_CUDA_RETURN(cudaMalloc(&device, bytes));
  cudaEvent_t start;
  cudaEvent_t stop;
  NEARDUP_CUDA_RETURN(cudaEventCreate(&start));
  NEARDUP_CUDA_RETURN(cudaEventCreate(&stop));
  std::vector<double> rates;
  for (int r = 0; r < repeats + 1; ++r) {
    NEARDUP_CUDA_RETURN(cudaEventRecord(start));
    NEARDUP_CUDA_RETURN(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
    NEARDUP_CUDA_RETURN(cudaEventRecord(stop));
    NEARDUP_CUDA_RETURN(cudaEventSynchronize(stop));
    float ms = 0;
    NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0) rates.push_back(static_cast<double>(bytes) / (ms * 1e6));  // first is warm-up
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(device);
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace neardup::internal::gpu
