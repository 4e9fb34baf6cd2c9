// The CUDA Fingerprinter (exposed through neardup/fingerprint_backend.h).
//
// ComputeBatch, for a recipe the GPU path covers (gpu/gpu_tables.h): several
// lanes (a host thread, a stream and a CudaPipeline each) claim batches of
// consecutive documents, pack them into pinned memory with the oneTBB
// workers (or, when the caller already put the texts back to back in
// page-locked memory, e.g. a PinnedBuffer, let the GPU read them in place),
// copy, run the kernels and build the Fingerprints. Documents the GPU flags
// as non-ASCII (and any of 1 GiB or more) go to the CPU backend on the
// calling thread while the lanes go on. No host pass over the input precedes
// the lanes. Compute (one text) runs on the CPU: a single document is
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
  // the copy and kernels of the last. At most 1 GiB.
  size_t batch_bytes = size_t{64} << 20;
  // Batches in flight (streams and host threads). Default 3.
  int streams = 3;
};

// Where the time of ComputeBatch goes, summed over all calls: `wall` is the
// calls' wall time; the other times are busy seconds of each stage summed
// over the lanes (lanes overlap, so the sum can exceed the wall time). For the
// benchmark's account of what bounds the speed.
struct CudaStageSeconds {
  double wall = 0;
  double claim = 0;    // lanes taking their next batch (the size scan)
  double pack = 0;     // copying texts into the pinned batch buffers
  double device = 0;   // CudaPipeline::Run, host wall: copies in, kernels, copies out
  double h2d = 0;      // of which the copy in (stream events; includes waiting
                       // for the copy engine while another lane's copy runs)
  double kernels = 0;  // the kernels
  double d2h = 0;      // the results' copy out
  double unpack = 0;   // building the Fingerprint structs
  double cpu = 0;      // the CPU backend on the documents the GPU does not take
  uint64_t batches = 0;
  uint64_t in_place_batches = 0;  // batches read in place from page-locked input
};

// The stage times of a fingerprinter made by CreateCudaFingerprinter;
// InvalidArgument for any other.
Result<CudaStageSeconds> CudaStageTimes(const Fingerprinter& fingerprinter);

Result<std::unique_ptr<Fingerprinter>> CreateCudaFingerprinter(
    const Recipe& recipe, const SketchSelection& selection,
    const CudaFingerprinterOptions& options = {});

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_CUDA_FINGERPRINTER_H_
