// CudaPipeline: fingerprints one packed batch of documents on the GPU (the
// pure-ASCII ones; it flags the others for the CPU). A plain C++ interface (no CUDA types) over
// cuda_pipeline.cu, so the host code around it builds with the project's flags and sanitizers.
//
// Stages, each a kernel or a CUB primitive over the whole batch (no loop over
// documents on the host):
//   flag documents with a byte >= 0x80 -> normalise by byte table, 16 bytes per thread (and, when
//   the recipe deletes punctuation, place 16-byte chunks with a scan) -> token starts (a select
//   over positions) -> one thread per token: end, stopword test, feature hash; a warp per document
//   labels its tokens -> compact the kept tokens -> SimHash: a warp per document computes its
//   shingles and counts bit votes with ballots -> bottom-k MinHash: a warp per document selects
//   candidates under a threshold and takes the k smallest distinct by
//   min-reductions (a segmented sort only for documents it cannot settle);
//   k-value MinHash: atomicMin per bin, densified per bin -> chunks: a
//   segmented sort of the chunk ids, sampling and a unique-compaction.
// With the UTF-8 path on (GpuRecipeTables::utf8, NEARDUP_GPU_UTF8=1), a
// batch with a byte >= 0x80 is normalised by the kernels of
// gpu/cuda_utf8_kernels.cuh instead (sizes, a scan, the write, document
// starts, script segmentation's cuts), which flag only the documents with a
// code point their tables do not cover.
// Every value comes from the functions of gpu/gpu_hash.h and gpu/gpu_utf8.h
// and the tables of gpu/gpu_tables.h and gpu/gpu_utf8_tables.h, which are
// tested against the CPU path on the host.
//
// Cost: about 12 bytes of device memory per input byte for the batch in
// flight (positions, token and feature arrays, CUB scratch; more with
// chunks), from a stream-ordered pool that keeps it for the next batch. Thread safety: one
// pipeline per host thread (each has its own stream).
#ifndef NEARDUP_GPU_CUDA_PIPELINE_H_
#define NEARDUP_GPU_CUDA_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_tables.h"
#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal::gpu {

// Ok when a CUDA device is usable; *name (if not null) receives its name.
Status CudaDeviceStatus(std::string* name);

// Whether [data, data + size) is page-locked host memory (cudaMallocHost or
// cudaHostRegister): the DMA engine then reads it in place, at full bus
// speed, and no host copy into a staging buffer is needed.
bool IsPageLocked(const void* data, size_t size);

// Page-locked host memory (cudaMallocHost), for copies at full bus speed.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // Ensures capacity() >= bytes (contents are not kept).
  Status Reserve(size_t bytes);
  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  char* data_ = nullptr;
  size_t capacity_ = 0;
};

// One batch: document i is bytes[offsets[i], offsets[i + 1]). Any bytes:
// documents with a byte >= 0x80 are flagged in BatchSketches::non_ascii.
// REQUIRES: offsets[num_docs] < 2^31.
struct PackedBatch {
  const char* bytes = nullptr;  // best in a PinnedBuffer
  const uint32_t* offsets = nullptr;
  size_t num_docs = 0;
};

// Per-document results of the last Run, indexed by document, in page-locked
// memory owned by the pipeline: valid until its next Run. A field is null
// when the selection did not ask for it (k = recipe.minhash.num_hashes).
struct BatchSketches {
  size_t num_docs = 0;
  // 1 for a document the GPU leaves to the CPU: its other fields are
  // meaningless and its fingerprint is the CPU's to compute. Without the
  // UTF-8 path, any document with a byte >= 0x80; with it, one with a code
  // point its tables do not cover (gpu/gpu_utf8_tables.h).
  const uint8_t* non_ascii = nullptr;
  // Invalid UTF-8 subparts per document (the UTF-8 path only; null: none).
  const uint32_t* invalid_utf8 = nullptr;
  const uint32_t* num_tokens = nullptr;
  const uint64_t* simhash_high = nullptr;  // the 64-bit SimHash
  const uint64_t* simhash_low = nullptr;   // 128-bit recipes only
  const uint64_t* minhash = nullptr;       // k per document, the first minhash_count[d] set
  const uint32_t* minhash_count = nullptr;
  const uint64_t* kvalue = nullptr;  // k per document
  const uint8_t* kvalue_empty = nullptr;
  const uint32_t* chunk_offsets = nullptr;  // num_docs + 1
  const uint32_t* chunk_ids = nullptr;
};

// Device times of the last Run, from CUDA events on the pipeline's stream.
struct BatchTimings {
  double h2d_ms = 0;
  double kernels_ms = 0;
  double d2h_ms = 0;
};

class CudaPipeline {
 public:
  static Result<std::unique_ptr<CudaPipeline>> Create(const Recipe& recipe,
                                                      const SketchSelection& selection,
                                                      const GpuRecipeTables& tables);
  virtual ~CudaPipeline() = default;

  // Fingerprints `batch`; *out points into the pipeline's memory until the
  // next Run. `timings` may be null.
  virtual Status Run(const PackedBatch& batch, BatchSketches* out, BatchTimings* timings) = 0;

  // The kernels alone on a batch already on the device from the last Run,
  // `repeats` times; returns the median milliseconds per run (for the
  // benchmark: what the GPU itself sustains, without the bus). When
  // `stages` is not null it receives the milliseconds of each stage of the
  // last repeat, as "name ms, name ms, ...".
  virtual Result<double> TimeKernelsOnLastBatch(int repeats, std::string* stages) = 0;
};

// Host-to-device bandwidth from a pinned buffer of `bytes`, in GB/s (median
// of `repeats` copies), for the benchmark's report of what bounds it.
Result<double> MeasureHostToDeviceGBps(size_t bytes, int repeats);

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_CUDA_PIPELINE_H_
