// |A ∩ B| of two strictly ascending uint32 arrays (chunk sets: the shingle
// hashes ChunkSetBuilder produces), behind IntersectionSize, ExactJaccard and
// Containment (neardup/similarity.h). Exact verification of near-duplicate
// candidates spends most of its time here (docs/PARALLELISM.md).
//
// The AVX-512 kernel compares a block of 16 values of A with a block of 16 of
// B in one step (B's block in all 16 rotations, VPCMPEQD each), counts the
// lanes of A that matched, and moves on the block with the smaller last value
// (both when equal), as a merge does. Because both arrays are strictly
// ascending, a value of A meets its equal in B in exactly one compared block
// pair, so the count is exact; the tails shorter than a block finish with the
// scalar merge (a tail value is above every value already passed on the other
// side). Same result as the scalar merge on every input (tested).
// Cost: scalar about 2 ns per element of A and B; AVX-512 about 32 vector
// instructions per 16 elements advanced.
// Thread safety: pure functions.
#ifndef NEARDUP_SKETCH_SET_INTERSECTION_H_
#define NEARDUP_SKETCH_SET_INTERSECTION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hash/cpu_features.h"

namespace neardup::internal {

// REQUIRES: a[0, na) and b[0, nb) strictly ascending.
size_t IntersectionSizeScalar(const uint32_t* a, size_t na, const uint32_t* b, size_t nb);
#if defined(__x86_64__)
// Same result. REQUIRES: the CPU has AVX-512F.
size_t IntersectionSizeAvx512(const uint32_t* a, size_t na, const uint32_t* b, size_t nb);
#endif

using IntersectionSizeFn = size_t (*)(const uint32_t*, size_t, const uint32_t*, size_t);
// The fastest kernel whose features are all in `features`: the sketch
// kernel table's `intersection_size` (sketch/sketch_kernels.h), which is
// what IntersectionSize calls.
IntersectionSizeFn IntersectionSizeFor(const CpuFeatures& features);
// Every kernel this CPU runs, the scalar one first (for the differential test).
std::vector<IntersectionSizeFn> SupportedIntersectionSizes();

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_SET_INTERSECTION_H_
