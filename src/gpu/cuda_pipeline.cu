// The CUDA kernels of the GPU fingerprint path (gpu/cuda_pipeline.h explains
// the stages). Every per-element value comes from gpu/gpu_hash.h; this file
// only arranges the work: which thread computes what, and where it goes.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/cuda_pipeline.h"

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

constexpr int kThreads = 256;

unsigned Blocks(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<size_t>(std::max<size_t>(blocks, 1), 65535 * 16));
}

// The recipe's tables in constant memory: one copy for every pipeline of the
// process would be wrong for two recipes, so they travel as a kernel argument
// struct instead (4 KB limit; this is under 600 bytes).
struct DeviceTables {
  uint8_t byte_class[128];
  uint8_t mapped[128];
  uint8_t secret[kXxh3SecretSize];
  FeatureHashKind hash;
  uint64_t seed;
};

// Index of the last entry of offsets[0, count) that is <= value.
// REQUIRES: offsets[0] <= value.
__device__ __forceinline__ uint32_t LastAtOrBelow(const uint32_t* offsets, uint32_t count,
                                                  uint32_t value) {
  uint32_t lo = 0;
  uint32_t hi = count;  // upper_bound in [lo, hi)
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (offsets[mid] <= value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

struct KeepFlag {
  const uint8_t* byte_class;
  __host__ __device__ uint32_t operator()(uint8_t c) const { return byte_class[c] & kByteKept; }
};

// Bits of the attribute byte of each normalised position.
constexpr uint8_t kAttrToken = 1;
constexpr uint8_t kAttrDocStart = 2;

__global__ void NormalizeKernel(const uint8_t* text, uint32_t n, const uint32_t* positions,
                                DeviceTables tables, uint8_t* normalized, uint8_t* attrs) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint8_t c = text[i];
    const uint8_t cls = tables.byte_class[c];
    if ((cls & kByteKept) == 0) continue;
    const uint32_t p = positions != nullptr ? positions[i] : i;
    normalized[p] = tables.mapped[c];
    attrs[p] = (cls & kByteToken) ? kAttrToken : 0;
  }
}

// Normalised document offsets, and the doc-start mark of each document's
// first normalised position (so tokens never run across documents).
__global__ void DocOffsetsKernel(const uint32_t* offsets, uint32_t num_docs, uint32_t n,
                                 const uint32_t* positions, const uint8_t* text,
                                 const uint8_t* byte_class, uint32_t* norm_offsets, uint8_t* attrs,
                                 uint32_t normalized_size) {
  for (uint32_t d = blockIdx.x * blockDim.x + threadIdx.x; d <= num_docs;
       d += gridDim.x * blockDim.x) {
    const uint32_t o = offsets[d];
    uint32_t p = o;
    if (positions != nullptr) p = o < n ? positions[o] : normalized_size;
    norm_offsets[d] = p;
    if (d < num_docs && p < normalized_size) attrs[p] |= kAttrDocStart;
  }
  (void)text;
  (void)byte_class;
}

struct TokenStartPredicate {
  const uint8_t* attrs;
  __device__ bool operator()(uint32_t p) const {
    const uint8_t a = attrs[p];
    if ((a & kAttrToken) == 0) return false;
    return p == 0 || (a & kAttrDocStart) != 0 || (attrs[p - 1] & kAttrToken) == 0;
  }
};

// One thread per token: its end, document, stopword test and feature hash.
__global__ void TokenKernel(const uint32_t* starts, uint32_t num_tokens, const uint8_t* normalized,
                            const uint8_t* attrs, uint32_t normalized_size,
                            const uint32_t* norm_offsets, uint32_t num_docs, DeviceTables tables,
                            const uint8_t* stop_bytes, const uint32_t* stop_offsets,
                            uint32_t num_stopwords, uint64_t* hashes, uint32_t* docs,
                            uint8_t* keep) {
  for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < num_tokens;
       t += gridDim.x * blockDim.x) {
    const uint32_t s = starts[t];
    uint32_t e = s + 1;
    while (e < normalized_size && attrs[e] == kAttrToken) ++e;
    const uint32_t len = e - s;
    const uint8_t* token = normalized + s;
    docs[t] = LastAtOrBelow(norm_offsets, num_docs + 1, s);
    const bool stop = num_stopwords > 0 &&
                      StopwordContainsHd(stop_bytes, stop_offsets, num_stopwords, token, len);
    keep[t] = !stop;
    hashes[t] = stop ? 0 : TokenHashHd(tables.hash, token, len, tables.seed, tables.secret);
  }
}

// token_offsets[d] = first kept token of document d (lower bound of d in the
// sorted document numbers of the kept tokens), d in [0, num_docs].
__global__ void TokenOffsetsKernel(const uint32_t* token_docs, uint32_t num_tokens,
                                   uint32_t num_docs, uint32_t* token_offsets) {
  for (uint32_t d = blockIdx.x * blockDim.x + threadIdx.x; d <= num_docs;
       d += gridDim.x * blockDim.x) {
    uint32_t lo = 0;
    uint32_t hi = num_tokens;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (token_docs[mid] < d) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    token_offsets[d] = lo;
  }
}

// Features of width K per document: n - K + 1 full windows, or one
// short-document feature when 0 < n < K.
struct FeatureCount {
  const uint32_t* token_offsets;
  uint32_t num_docs;
  uint32_t width;
  __host__ __device__ uint32_t operator()(uint32_t d) const {
    if (d >= num_docs) return 0;
    const uint32_t n = token_offsets[d + 1] - token_offsets[d];
    if (n == 0) return 0;
    return n >= width ? n - width + 1 : 1;
  }
};

__global__ void FeatureKernel(const uint64_t* token_hashes, const uint32_t* token_offsets,
                              const uint32_t* feature_offsets, uint32_t num_docs,
                              uint32_t num_features, uint32_t width, uint64_t leading, bool remix,
                              uint64_t* features) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < num_features;
       j += gridDim.x * blockDim.x) {
    const uint32_t d = LastAtOrBelow(feature_offsets, num_docs + 1, j);
    const uint32_t local = j - feature_offsets[d];
    const uint32_t n = token_offsets[d + 1] - token_offsets[d];
    const uint32_t w = n < width ? n : width;
    const uint64_t f = CombineHd(token_hashes + token_offsets[d] + local, w, leading);
    features[j] = remix ? Mix64Hd(f) : f;
  }
}

// A warp per document: each lane takes a feature, and for each bit the warp
// counts the ones with a ballot; lane b keeps the counts of bits b and b+32.
__global__ void SimHashKernel(const uint64_t* features, const uint32_t* feature_offsets,
                              uint32_t num_docs, bool wide, uint64_t* high, uint64_t* low) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps_per_grid = gridDim.x * blockDim.x / 32;
  for (uint32_t d = (blockIdx.x * blockDim.x + threadIdx.x) / 32; d < num_docs;
       d += warps_per_grid) {
    const uint32_t begin = feature_offsets[d];
    const uint32_t end = feature_offsets[d + 1];
    uint32_t ones_high[2] = {0, 0};  // bits lane, lane + 32 of the feature
    uint32_t ones_low[2] = {0, 0};   // the same of the 128-bit low word
    for (uint32_t base = begin; base < end; base += 32) {
      const bool active = base + lane < end;
      const uint64_t f = active ? features[base + lane] : 0;
      const uint64_t g = wide && active ? Mix64Hd(f ^ kSimHash128LowSaltHd) : 0;
#pragma unroll
      for (int b = 0; b < 64; ++b) {
        const uint32_t count = __popc(__ballot_sync(0xffffffffu, (f >> b) & 1));
        if (lane == (b & 31)) ones_high[b >> 5] += count;
      }
      if (wide) {
#pragma unroll
        for (int b = 0; b < 64; ++b) {
          const uint32_t count = __popc(__ballot_sync(0xffffffffu, (g >> b) & 1));
          if (lane == (b & 31)) ones_low[b >> 5] += count;
        }
      }
    }
    // Bit b is 1 iff the signed sum 2 * ones - n is >= 0 (the paper's tie
    // rule; a document without features is all ones).
    const uint64_t n = end - begin;
    const uint64_t hi_lo32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_high[0]} >= n);
    const uint64_t hi_hi32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_high[1]} >= n);
    const uint64_t lo_lo32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_low[0]} >= n);
    const uint64_t lo_hi32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_low[1]} >= n);
    if (lane == 0) {
      high[d] = hi_lo32 | (hi_hi32 << 32);
      if (wide) low[d] = lo_lo32 | (lo_hi32 << 32);
    }
  }
}

// Bottom-k from each document's sorted features: the first k distinct.
__global__ void BottomKKernel(const uint64_t* sorted, const uint32_t* feature_offsets,
                              uint32_t num_docs, uint32_t k, uint64_t* out, uint32_t* counts) {
  for (uint32_t d = blockIdx.x * blockDim.x + threadIdx.x; d < num_docs;
       d += gridDim.x * blockDim.x) {
    uint32_t held = 0;
    const uint32_t end = feature_offsets[d + 1];
    for (uint32_t j = feature_offsets[d]; j < end && held < k; ++j) {
      const uint64_t v = sorted[j];
      if (held > 0 && out[size_t{d} * k + held - 1] == v) continue;
      out[size_t{d} * k + held++] = v;
    }
    counts[d] = held;
  }
}

// k-value bins: bins are ranges of hash values, so in sorted order the first
// feature of a bin is its minimum.
__global__ void KValueBinKernel(const uint64_t* sorted, const uint32_t* feature_offsets,
                                uint32_t num_docs, uint32_t num_features, uint32_t k,
                                uint64_t* mins, uint8_t* filled) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < num_features;
       j += gridDim.x * blockDim.x) {
    const uint32_t d = LastAtOrBelow(feature_offsets, num_docs + 1, j);
    const uint64_t v = sorted[j];
    const uint32_t bin = KValueBin(v, k);
    if (j == feature_offsets[d] || KValueBin(sorted[j - 1], k) != bin) {
      mins[size_t{d} * k + bin] = v;
      filled[size_t{d} * k + bin] = 1;
    }
  }
}

__global__ void DensifyKernel(const uint64_t* mins, const uint8_t* filled,
                              const uint32_t* feature_offsets, uint32_t num_docs, uint32_t k,
                              uint64_t seed, uint64_t* values, uint8_t* empty) {
  const size_t total = size_t{num_docs} * k;
  for (size_t x = blockIdx.x * size_t{blockDim.x} + threadIdx.x; x < total;
       x += size_t{gridDim.x} * blockDim.x) {
    const uint32_t d = static_cast<uint32_t>(x / k);
    const uint32_t i = static_cast<uint32_t>(x % k);
    const bool no_features = feature_offsets[d + 1] == feature_offsets[d];
    if (i == 0) empty[d] = no_features;
    if (no_features) {
      values[x] = 0;
      continue;
    }
    const uint8_t* doc_filled = filled + size_t{d} * k;
    const uint32_t source = doc_filled[i] ? i : DensifySource(doc_filled, k, seed, i);
    values[x] = mins[size_t{d} * k + source];
  }
}

__global__ void ChunkIdKernel(const uint64_t* features, uint32_t num_features, uint32_t modulus,
                              uint32_t* ids) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < num_features;
       j += gridDim.x * blockDim.x) {
    ids[j] = static_cast<uint32_t>(features[j] >> 32);
  }
  (void)modulus;
}

// Keep a sorted chunk id when it is sampled and differs from the one before
// it in its document.
__global__ void ChunkKeepKernel(const uint32_t* sorted, const uint32_t* feature_offsets,
                                uint32_t num_docs, uint32_t num_features, uint32_t modulus,
                                uint32_t* keep) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j <= num_features;
       j += gridDim.x * blockDim.x) {
    if (j == num_features) {
      keep[j] = 0;
      continue;
    }
    const uint32_t d = LastAtOrBelow(feature_offsets, num_docs + 1, j);
    const uint32_t id = sorted[j];
    const bool sampled = modulus == 1 || id % modulus == 0;
    keep[j] = sampled && (j == feature_offsets[d] || sorted[j - 1] != id);
  }
}

__global__ void ChunkScatterKernel(const uint32_t* sorted, const uint32_t* keep,
                                   const uint32_t* positions, uint32_t num_features,
                                   const uint32_t* feature_offsets, uint32_t num_docs,
                                   uint32_t* ids_out, uint32_t* chunk_offsets) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < num_features;
       j += gridDim.x * blockDim.x) {
    if (keep[j]) ids_out[positions[j]] = sorted[j];
  }
  for (uint32_t d = blockIdx.x * blockDim.x + threadIdx.x; d <= num_docs;
       d += gridDim.x * blockDim.x) {
    chunk_offsets[d] = positions[feature_offsets[d]];
  }
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

template <class T>
Status CopyToHost(const T* device, size_t count, std::vector<T>* host, cudaStream_t stream) {
  host->resize(count);
  if (count == 0) return Status::Ok();
  NEARDUP_CUDA_RETURN(
      cudaMemcpyAsync(host->data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  return Status::Ok();
}

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
    deletes_bytes_ = false;
    for (int c = 0; c < 128; ++c) deletes_bytes_ |= (tables.byte_class[c] & kByteKept) == 0;
  }

  ~CudaPipelineImpl() override {
    if (last_text_ != nullptr) cudaFree(last_text_);
    if (last_offsets_ != nullptr) cudaFree(last_offsets_);
    if (stop_bytes_ != nullptr) cudaFree(stop_bytes_);
    if (stop_offsets_ != nullptr) cudaFree(stop_offsets_);
    if (device_byte_class_ != nullptr) cudaFree(device_byte_class_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
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
    const size_t stop_size = std::max<size_t>(host_tables_.stopword_bytes.size(), 1);
    NEARDUP_CUDA_RETURN(cudaMalloc(&stop_bytes_, stop_size));
    NEARDUP_CUDA_RETURN(
        cudaMalloc(&stop_offsets_, host_tables_.stopword_offsets.size() * sizeof(uint32_t)));
    if (!host_tables_.stopword_bytes.empty()) {
      NEARDUP_CUDA_RETURN(cudaMemcpy(stop_bytes_, host_tables_.stopword_bytes.data(),
                                     host_tables_.stopword_bytes.size(), cudaMemcpyHostToDevice));
    }
    NEARDUP_CUDA_RETURN(cudaMemcpy(stop_offsets_, host_tables_.stopword_offsets.data(),
                                   host_tables_.stopword_offsets.size() * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice));
    return Status::Ok();
  }

  Status Run(const PackedBatch& batch, BatchSketches* out, BatchTimings* timings) override {
    const uint32_t num_docs = static_cast<uint32_t>(batch.num_docs);
    const uint32_t n = batch.offsets[batch.num_docs];
    NEARDUP_RETURN_IF_ERROR(EnsureInput(n, num_docs));
    NEARDUP_CUDA_RETURN(cudaEventRecord(events_[0], stream_));
    if (n > 0) {
      NEARDUP_CUDA_RETURN(
          cudaMemcpyAsync(last_text_, batch.bytes, n, cudaMemcpyHostToDevice, stream_));
    }
    NEARDUP_CUDA_RETURN(cudaMemcpyAsync(last_offsets_, batch.offsets,
                                        (size_t{num_docs} + 1) * sizeof(uint32_t),
                                        cudaMemcpyHostToDevice, stream_));
    last_n_ = n;
    last_docs_ = num_docs;
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

  Result<double> TimeKernelsOnLastBatch(int repeats) override {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      DeviceArena arena(stream_);
      DeviceResults results;
      NEARDUP_CUDA_RETURN(cudaEventRecord(events_[0], stream_));
      NEARDUP_RETURN_IF_ERROR(RunKernels(&arena, &results));
      NEARDUP_CUDA_RETURN(cudaEventRecord(events_[1], stream_));
      arena.Release();
      NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
      float ms = 0;
      NEARDUP_CUDA_RETURN(cudaEventElapsedTime(&ms, events_[0], events_[1]));
      times.push_back(ms);
    }
    if (times.empty()) return InvalidArgumentError("repeats must be at least 1");
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  // Device pointers of one run's outputs (owned by the run's arena).
  struct DeviceResults {
    uint32_t* token_offsets = nullptr;
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
      if (last_text_ != nullptr) NEARDUP_CUDA_RETURN(cudaFree(last_text_));
      last_text_ = nullptr;
      text_capacity_ = std::max<size_t>(n, size_t{text_capacity_} * 3 / 2);
      NEARDUP_CUDA_RETURN(cudaMalloc(&last_text_, text_capacity_));
    }
    if (size_t{num_docs} + 1 > offsets_capacity_) {
      if (last_offsets_ != nullptr) NEARDUP_CUDA_RETURN(cudaFree(last_offsets_));
      last_offsets_ = nullptr;
      offsets_capacity_ = std::max<size_t>(size_t{num_docs} + 1, offsets_capacity_ * 3 / 2);
      NEARDUP_CUDA_RETURN(cudaMalloc(&last_offsets_, offsets_capacity_ * sizeof(uint32_t)));
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

  template <class T>
  Status ReadBack(const T* device, T* host) {
    NEARDUP_CUDA_RETURN(cudaMemcpyAsync(host, device, sizeof(T), cudaMemcpyDeviceToHost, stream_));
    NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
    return Status::Ok();
  }

  // Features of `width` over the kept tokens: offsets (num_docs + 1) and
  // values.
  Status Features(DeviceArena* arena, const uint64_t* token_hashes, const uint32_t* token_offsets,
                  uint32_t width, bool remix, uint32_t** feature_offsets, uint64_t** features,
                  uint32_t* num_features) {
    const uint32_t num_docs = last_docs_;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, feature_offsets));
    auto counts = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
                                                  FeatureCount{token_offsets, num_docs, width});
    uint32_t* offsets = *feature_offsets;
    NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, counts, offsets, num_docs + 1, stream_);
    }));
    NEARDUP_RETURN_IF_ERROR(ReadBack(offsets + num_docs, num_features));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(*num_features, features));
    if (*num_features > 0) {
      FeatureKernel<<<Blocks(*num_features), kThreads, 0, stream_>>>(
          token_hashes, token_offsets, offsets, num_docs, *num_features, width,
          LeadingCoefficientHd(recipe_.seed), remix, *features);
      NEARDUP_CUDA_LAUNCHED();
    }
    return Status::Ok();
  }

  Status RunKernels(DeviceArena* arena, DeviceResults* results) {
    const uint32_t n = last_n_;
    const uint32_t num_docs = last_docs_;
    const uint8_t* text = last_text_;
    // 1. Normalise.
    uint32_t* positions = nullptr;
    uint32_t normalized_size = n;
    if (deletes_bytes_ && n > 0) {
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(n, &positions));
      auto keep = thrust::make_transform_iterator(text, KeepFlag{DeviceByteClass()});
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, keep, positions, n, stream_);
      }));
      uint32_t last_position = 0;
      NEARDUP_RETURN_IF_ERROR(ReadBack(positions + n - 1, &last_position));
      uint8_t last_byte = 0;
      NEARDUP_RETURN_IF_ERROR(ReadBack(text + n - 1, &last_byte));
      normalized_size = last_position + (host_tables_.byte_class[last_byte & 0x7f] & kByteKept);
    }
    uint8_t* normalized = nullptr;
    uint8_t* attrs = nullptr;
    uint32_t* norm_offsets = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(normalized_size, &normalized));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(normalized_size, &attrs));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &norm_offsets));
    if (n > 0) {
      NormalizeKernel<<<Blocks(n), kThreads, 0, stream_>>>(text, n, positions, tables_, normalized,
                                                           attrs);
      NEARDUP_CUDA_LAUNCHED();
    }
    DocOffsetsKernel<<<Blocks(size_t{num_docs} + 1), kThreads, 0, stream_>>>(
        last_offsets_, num_docs, n, positions, text, nullptr, norm_offsets, attrs, normalized_size);
    NEARDUP_CUDA_LAUNCHED();

    // 2. Token starts.
    uint32_t* starts = nullptr;
    uint32_t* num_starts_device = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(1, &num_starts_device));
    uint32_t num_starts = 0;
    if (normalized_size > 0) {
      // At most one start per byte (one-byte documents each start one).
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(normalized_size, &starts));
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceSelect::If(temp, bytes, thrust::counting_iterator<uint32_t>(0), starts,
                                     num_starts_device, normalized_size, TokenStartPredicate{attrs},
                                     stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(num_starts_device, &num_starts));
    }

    // 3. Token hashes, documents, stopwords.
    uint64_t* hashes = nullptr;
    uint32_t* docs = nullptr;
    uint8_t* keep = nullptr;
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &hashes));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &docs));
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_starts, &keep));
    if (num_starts > 0) {
      TokenKernel<<<Blocks(num_starts), kThreads, 0, stream_>>>(
          starts, num_starts, normalized, attrs, normalized_size, norm_offsets, num_docs, tables_,
          stop_bytes_, stop_offsets_, num_stopwords_, hashes, docs, keep);
      NEARDUP_CUDA_LAUNCHED();
    }
    uint64_t* kept_hashes = hashes;
    uint32_t* kept_docs = docs;
    uint32_t num_kept = num_starts;
    if (num_stopwords_ > 0 && num_starts > 0) {
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
      NEARDUP_RETURN_IF_ERROR(ReadBack(num_kept_device, &num_kept));
    }
    NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &results->token_offsets));
    TokenOffsetsKernel<<<Blocks(size_t{num_docs} + 1), kThreads, 0, stream_>>>(
        kept_docs, num_kept, num_docs, results->token_offsets);
    NEARDUP_CUDA_LAUNCHED();
    const uint32_t* token_offsets = results->token_offsets;

    // 4. Sketches.
    if (selection_.simhash) {
      uint32_t* offsets = nullptr;
      uint64_t* features = nullptr;
      uint32_t count = 0;
      NEARDUP_RETURN_IF_ERROR(Features(arena, kept_hashes, token_offsets,
                                       recipe_.simhash.shingle_width, false, &offsets, &features,
                                       &count));
      const bool wide = recipe_.simhash.bits == 128;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->simhash_high));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(wide ? num_docs : 0, &results->simhash_low));
      if (num_docs > 0) {
        SimHashKernel<<<Blocks(size_t{num_docs} * 32), kThreads, 0, stream_>>>(
            features, offsets, num_docs, wide, results->simhash_high, results->simhash_low);
        NEARDUP_CUDA_LAUNCHED();
      }
    }
    const bool remix_unigrams = recipe_.hash != FeatureHashKind::kXxh3;
    if (selection_.minhash || selection_.kvalue_minhash) {
      const uint32_t width = recipe_.minhash.shingle_width;
      const uint32_t k = recipe_.minhash.num_hashes;
      uint32_t* offsets = nullptr;
      uint64_t* features = nullptr;
      uint32_t count = 0;
      NEARDUP_RETURN_IF_ERROR(Features(arena, kept_hashes, token_offsets, width,
                                       remix_unigrams && width == 1, &offsets, &features, &count));
      uint64_t* sorted = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &sorted));
      if (count > 0) {
        NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
          return cub::DeviceSegmentedSort::SortKeys(temp, bytes, features, sorted, count, num_docs,
                                                    offsets, offsets + 1, stream_);
        }));
      }
      if (selection_.minhash) {
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &results->minhash));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->minhash_count));
        if (num_docs > 0) {
          BottomKKernel<<<Blocks(num_docs), kThreads, 0, stream_>>>(
              sorted, offsets, num_docs, k, results->minhash, results->minhash_count);
          NEARDUP_CUDA_LAUNCHED();
        }
      }
      if (selection_.kvalue_minhash) {
        uint64_t* mins = nullptr;
        uint8_t* filled = nullptr;
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &mins));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &filled));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} * k, &results->kvalue));
        NEARDUP_RETURN_IF_ERROR(arena->Allocate(num_docs, &results->kvalue_empty));
        NEARDUP_CUDA_RETURN(cudaMemsetAsync(filled, 0, size_t{num_docs} * k, stream_));
        if (count > 0) {
          KValueBinKernel<<<Blocks(count), kThreads, 0, stream_>>>(sorted, offsets, num_docs, count,
                                                                   k, mins, filled);
          NEARDUP_CUDA_LAUNCHED();
        }
        if (num_docs > 0) {
          DensifyKernel<<<Blocks(size_t{num_docs} * k), kThreads, 0, stream_>>>(
              mins, filled, offsets, num_docs, k, recipe_.seed, results->kvalue,
              results->kvalue_empty);
          NEARDUP_CUDA_LAUNCHED();
        }
      }
    }
    if (selection_.chunks) {
      const uint32_t width = recipe_.chunks.shingle_width;
      const uint32_t modulus = recipe_.chunks.sample_modulus;
      uint32_t* offsets = nullptr;
      uint64_t* features = nullptr;
      uint32_t count = 0;
      NEARDUP_RETURN_IF_ERROR(Features(arena, kept_hashes, token_offsets, width,
                                       remix_unigrams && width == 1, &offsets, &features, &count));
      uint32_t* ids = nullptr;
      uint32_t* sorted = nullptr;
      uint32_t* keep_ids = nullptr;
      uint32_t* positions_out = nullptr;
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &ids));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(count, &sorted));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{count} + 1, &keep_ids));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{count} + 1, &positions_out));
      if (count > 0) {
        ChunkIdKernel<<<Blocks(count), kThreads, 0, stream_>>>(features, count, modulus, ids);
        NEARDUP_CUDA_LAUNCHED();
        NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
          return cub::DeviceSegmentedSort::SortKeys(temp, bytes, ids, sorted, count, num_docs,
                                                    offsets, offsets + 1, stream_);
        }));
      }
      ChunkKeepKernel<<<Blocks(size_t{count} + 1), kThreads, 0, stream_>>>(
          sorted, offsets, num_docs, count, modulus, keep_ids);
      NEARDUP_CUDA_LAUNCHED();
      NEARDUP_RETURN_IF_ERROR(Cub(arena, [&](void* temp, size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, keep_ids, positions_out, count + 1,
                                             stream_);
      }));
      NEARDUP_RETURN_IF_ERROR(ReadBack(positions_out + count, &results->num_chunks));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(results->num_chunks, &results->chunk_ids));
      NEARDUP_RETURN_IF_ERROR(arena->Allocate(size_t{num_docs} + 1, &results->chunk_offsets));
      ChunkScatterKernel<<<Blocks(std::max<size_t>(count, size_t{num_docs} + 1)), kThreads, 0,
                           stream_>>>(sorted, keep_ids, positions_out, count, offsets, num_docs,
                                      results->chunk_ids, results->chunk_offsets);
      NEARDUP_CUDA_LAUNCHED();
    }
    return Status::Ok();
  }

  Status CopyResults(const DeviceResults& r, BatchSketches* out) {
    const uint32_t num_docs = last_docs_;
    const size_t k = static_cast<size_t>(recipe_.minhash.num_hashes);
    std::vector<uint32_t> token_offsets;
    NEARDUP_RETURN_IF_ERROR(
        CopyToHost(r.token_offsets, size_t{num_docs} + 1, &token_offsets, stream_));
    if (selection_.simhash) {
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.simhash_high, num_docs, &out->simhash_high, stream_));
      if (recipe_.simhash.bits == 128) {
        NEARDUP_RETURN_IF_ERROR(CopyToHost(r.simhash_low, num_docs, &out->simhash_low, stream_));
      }
    }
    if (selection_.minhash) {
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.minhash, num_docs * k, &out->minhash, stream_));
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.minhash_count, num_docs, &out->minhash_count, stream_));
    }
    if (selection_.kvalue_minhash) {
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.kvalue, num_docs * k, &out->kvalue, stream_));
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.kvalue_empty, num_docs, &out->kvalue_empty, stream_));
    }
    if (selection_.chunks) {
      NEARDUP_RETURN_IF_ERROR(
          CopyToHost(r.chunk_offsets, size_t{num_docs} + 1, &out->chunk_offsets, stream_));
      NEARDUP_RETURN_IF_ERROR(CopyToHost(r.chunk_ids, r.num_chunks, &out->chunk_ids, stream_));
    }
    NEARDUP_CUDA_RETURN(cudaStreamSynchronize(stream_));
    out->num_tokens.resize(num_docs);
    for (uint32_t d = 0; d < num_docs; ++d) {
      out->num_tokens[d] = token_offsets[d + 1] - token_offsets[d];
    }
    return Status::Ok();
  }

  // The byte-class table on the device, for the keep-flag iterator.
  const uint8_t* DeviceByteClass() { return device_byte_class_; }

  Recipe recipe_;
  SketchSelection selection_;
  GpuRecipeTables host_tables_;
  DeviceTables tables_{};
  bool deletes_bytes_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[4] = {nullptr, nullptr, nullptr, nullptr};
  uint8_t* last_text_ = nullptr;
  size_t text_capacity_ = 0;
  uint32_t* last_offsets_ = nullptr;
  size_t offsets_capacity_ = 0;
  uint32_t last_n_ = 0;
  uint32_t last_docs_ = 0;
  uint8_t* stop_bytes_ = nullptr;
  uint32_t* stop_offsets_ = nullptr;
  uint32_t num_stopwords_ = 0;

 public:
  uint8_t* device_byte_class_ = nullptr;
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
  NEARDUP_CUDA_RETURN(cudaMalloc(&pipeline->device_byte_class_, 128));
  NEARDUP_CUDA_RETURN(cudaMemcpy(pipeline->device_byte_class_, tables.byte_class.data(), 128,
                                 cudaMemcpyHostToDevice));
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
