// Kernels of ChunkSetBuilder (neardup/chunk_set.h): the sort of a
// document's sampled chunk IDs into its chunk set (ascending, no repeats).
//
// Both kernels first group the IDs by their top bits (a counting pass into
// 1-2 buckets per ID, prefix sums, a scatter: uniform hash IDs leave 0.5-1
// per bucket). The portable kernel then runs an insertion sort with a
// budget of 8n moves (std::sort past it) and a unique pass without a branch
// per ID. Its cost is the insertion sort's branch: about 1 ID in 5-6 moves,
// and each mispredicts. The AVX-512 kernel sums the bucket counts 16 per
// vector (inclusive sums, then a backward scatter), then runs three rounds of
// odd-even transposition (each a compare-exchange of the pairs (2i, 2i+1),
// then of (2i+1, 2i+2), sixteen IDs per instruction) over the scattered
// IDs (each round one pass: the odd pairs are formed in registers from two
// neighbouring vectors), which sorts every bucket of up to six IDs without
// a branch (three rounds are six phases, and n phases of odd-even
// transposition sort n items); a vector pass checks the order, and only a
// document left out of order (a bucket of seven or more IDs, as repeated
// shingles make) runs the insertion sort
// on what is left, which then moves few IDs; the unique pass compares
// sixteen IDs with their predecessors and packs the kept ones with
// vpcompressd.
//
// Every kernel gives the same output: sorted, distinct IDs
// (chunk_set_test.cc runs each one the CPU supports against std::sort).
// Cost: O(n) expected for uniform IDs below 2^20 of them; at worst (crafted
// input, or a huge document) O(n log n), through std::sort.
// Thread safety: pure functions of their arguments.
#ifndef NEARDUP_SKETCH_CHUNK_SET_KERNELS_H_
#define NEARDUP_SKETCH_CHUNK_SET_KERNELS_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace neardup::internal {

struct CpuFeatures;

// Sorts *ids ascending and removes repeats; `scratch` and `counts` are
// buffers kept across calls (any contents; resized as needed).
using ChunkSortUniqueFn = void (*)(std::vector<uint32_t>* ids, std::vector<uint32_t>* scratch,
                                   std::vector<uint32_t>* counts);

struct ChunkSetKernel {
  std::string_view name;  // "portable", "avx512"
  ChunkSortUniqueFn sort_unique;
};

// The kernels whose features `features` has, portable first.
std::vector<ChunkSetKernel> ChunkSetKernelsFor(const CpuFeatures& features);

// The kernels this CPU runs, portable first.
std::vector<ChunkSetKernel> SupportedChunkSetKernels();

// The fastest kernel whose features `features` has; the kernel table of a
// CPU path (sketch/sketch_kernels.h) holds ChunkSetKernelFor(FeaturesAt(path)).
ChunkSetKernel ChunkSetKernelFor(const CpuFeatures& features);

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_CHUNK_SET_KERNELS_H_
