// The kernels of the GPU path's UTF-8 normalisation (gpu/gpu_utf8.h gives
// the rules and why they are exact; cuda_pipeline.cu launches them when
// GpuUtf8PathEnabled()). Each thread calls the same __host__ __device__
// function that gpu_utf8_test.cc runs on the host against the CPU path:
//   Utf8SizeKernel      a chunk's output bytes; invalid subparts counted and
//                       uncovered code points flagged per document
//   (an exclusive scan of the sizes places each chunk's output)
//   Utf8WriteKernel     a chunk's bytes, token attributes, segment codes
//   Utf8DocOffsetsKernel  each document's first output byte (kAttrDocStart)
//   SegmentCutKernel    script segmentation's cuts, into a copy of the
//                       attributes (so no thread reads what another writes)
// Included by cuda_pipeline.cu only.
#ifndef NEARDUP_GPU_CUDA_UTF8_KERNELS_CUH_
#define NEARDUP_GPU_CUDA_UTF8_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda_kernels.cuh"
#include "gpu/gpu_utf8.h"

namespace neardup::internal::gpu {

// The view with its ASCII tables in shared memory (read for most bytes).
struct SharedAsciiTables {
  uint8_t byte_class[128];
  uint8_t mapped[128];
};

__device__ __forceinline__ Utf8TablesView WithSharedAscii(const Utf8TablesView& tables,
                                                          SharedAsciiTables* shared) {
  if (threadIdx.x < 128) {
    shared->byte_class[threadIdx.x] = tables.ascii_class[threadIdx.x];
    shared->mapped[threadIdx.x] = tables.ascii_mapped[threadIdx.x];
  }
  __syncthreads();
  Utf8TablesView view = tables;
  view.ascii_class = shared->byte_class;
  view.ascii_mapped = shared->mapped;
  return view;
}

// sizes[v] = output bytes of chunk v. REQUIRES: invalid and uncovered zeroed.
__global__ void Utf8SizeKernel(const uint8_t* text, const uint32_t* offsets, uint32_t num_docs,
                               uint32_t n, const Utf8TablesView tables, uint32_t* sizes,
                               uint32_t* invalid, uint8_t* uncovered) {
  __shared__ SharedAsciiTables shared;
  const Utf8TablesView view = WithSharedAscii(tables, &shared);
  const uint32_t num_chunks = (n + kUtf8ChunkBytes - 1) / kUtf8ChunkBytes;
  for (uint32_t v = GlobalThread(); v < num_chunks; v += GridThreads()) {
    sizes[v] = Utf8ChunkSizeHd(text, offsets, num_docs, n, v, view, invalid, uncovered);
  }
}

// seg may be null (no script segmentation).
__global__ void Utf8WriteKernel(const uint8_t* text, const uint32_t* offsets, uint32_t num_docs,
                                uint32_t n, const Utf8TablesView tables,
                                const uint32_t* chunk_positions, uint8_t* normalized,
                                uint8_t* attrs, uint8_t* seg) {
  __shared__ SharedAsciiTables shared;
  const Utf8TablesView view = WithSharedAscii(tables, &shared);
  const uint32_t num_chunks = (n + kUtf8ChunkBytes - 1) / kUtf8ChunkBytes;
  for (uint32_t v = GlobalThread(); v < num_chunks; v += GridThreads()) {
    Utf8ChunkWriteHd(text, offsets, num_docs, n, v, view, chunk_positions, normalized, attrs, seg);
  }
}

// norm_offsets[d] for d <= num_docs, and the kAttrDocStart mark of each
// document's first output byte (an empty document marks its successor's:
// the same byte, the same value).
__global__ void Utf8DocOffsetsKernel(const uint8_t* text, const uint32_t* offsets,
                                     uint32_t num_docs, uint32_t n, const Utf8TablesView tables,
                                     const uint32_t* chunk_positions, uint32_t normalized_size,
                                     uint32_t* norm_offsets, uint8_t* attrs) {
  for (uint32_t d = GlobalThread(); d <= num_docs; d += GridThreads()) {
    const uint32_t p = Utf8NormalizedOffsetHd(text, offsets, num_docs, n, d, tables,
                                              chunk_positions, normalized_size);
    norm_offsets[d] = p;
    if (d < num_docs && p < normalized_size) attrs[p] |= kAttrDocStart;
  }
}

__global__ void SegmentCutKernel(const uint8_t* attrs, const uint8_t* seg, uint32_t size,
                                 uint8_t* cut_attrs) {
  for (uint32_t p = GlobalThread(); p < size; p += GridThreads()) {
    cut_attrs[p] = attrs[p] | (SegmentCutHd(attrs, seg, p) ? kAttrDocStart : 0);
  }
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_CUDA_UTF8_KERNELS_CUH_
