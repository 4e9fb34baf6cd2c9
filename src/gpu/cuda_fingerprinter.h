// The CUDA Fingerprinter (exposed through neardup/fingerprint_backend.h).
//
// ComputeBatch sorts the documents: pure-ASCII documents of a recipe the GPU
// path covers (gpu/gpu_tables.h) are packed into pinned batches and
// fingerprinted by CudaPipeline, several batches in flight on their own
// streams (one host thread each: pack, copy, kernels, results); every other
// document goes to the CPU backend at the same time, on the calling thread's
// oneTBB workers. Compute (one text) runs on the CPU: a single document is
// latency-bound, not throughput-bound. Output is bit-identical to the CPU
// backend's (cuda_fingerprinter_test.cc, scripts/gpu_check.sh).
// Thread safety: ComputeBatch may be called concurrently; GPU batches of
// concurrent calls run one call at a time.
#ifndef NEARDUP_GPU_CUDA_FINGERPRINTER_H_
#define NEARDUP_GPU_CUDA_FINGERPRINTER_H_

#include <cstddef>
#include <memory>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal::gpu {

struct CudaFingerprinterOptions {
  // Input bytes per GPU batch. Default 64 MiB: large enough to fill the GPU
  // (millions of tokens), small enough that packing the next batch overlaps
  // the copy and kernels of the last.
  size_t batch_bytes = size_t{64} << 20;
  // Batches in flight (streams and host threads). Default 3.
  int streams = 3;
};

// Busy time of each host stage of ComputeBatch, summed over all calls and
// lanes (lanes overlap, so the sum can exceed the wall time): for the
// benchmark's account of what bounds the speed.
struct CudaStageSeconds {
  double classify = 0;  // the ASCII test and the split into batches
  double pack = 0;      // copying texts into the pinned batch buffers
  double device = 0;    // CudaPipeline::Run: copies in, kernels, copies out
  double unpack = 0;    // building the Fingerprint structs
  double cpu = 0;       // the CPU backend on the documents the GPU does not take
};

// The stage times of a fingerprinter made by CreateCudaFingerprinter;
// InvalidArgument for any other.
Result<CudaStageSeconds> CudaStageTimes(const Fingerprinter& fingerprinter);

Result<std::unique_ptr<Fingerprinter>> CreateCudaFingerprinter(
    const Recipe& recipe, const SketchSelection& selection,
    const CudaFingerprinterOptions& options = {});

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_CUDA_FINGERPRINTER_H_
