// The index arithmetic of the GPU's bottom-k MinHash selection
// (BottomKSelectKernel in cuda_kernels.cuh), written once for both compilers
// like gpu/gpu_hash.h, so gpu_hash_test.cc checks on the host that the
// sorting network sorts and that the candidate threshold is sound.
//
// The kernel, a warp per document: gather the candidates (every feature, or
// those <= BottomKThreshold) into shared memory; load them into registers,
// element r * 32 + lane in register r of lane `lane`, padded with UINT64_MAX
// to 32 * BottomKRegisters(count) elements; sort them with a bitonic network
// (BitonicKeepsMin); take the first k distinct. Exact for any threshold: the
// k smallest distinct values <= T are the k smallest distinct of all, and a
// document that finds fewer than k under T retries with every feature (or
// goes to the sorted fallback when they do not fit).
//
// Cost: O(1) per call. Thread safety: pure functions.
#ifndef NEARDUP_GPU_GPU_BOTTOMK_H_
#define NEARDUP_GPU_GPU_BOTTOMK_H_

#include <cstdint>

#include "gpu/gpu_hash.h"  // NEARDUP_HD

namespace neardup::internal::gpu {

// Candidates a warp holds (in shared memory, then 16 registers per lane).
inline constexpr uint32_t kBottomKCandidates = 512;

// Registers per lane that hold `count` candidates: the smallest power of two
// R in [1, 16] with 32 * R >= count (a bitonic network needs a power of two
// elements). REQUIRES: count <= kBottomKCandidates.
NEARDUP_HD uint32_t BottomKRegisters(uint32_t count) {
  uint32_t r = 1;
  while (32 * r < count) r *= 2;
  return r;
}

// The candidate threshold for a document of n features: features <= the
// result are candidates. UINT64_MAX (every feature) unless a threshold pays:
// the features do not fit in shared memory, or the expected candidates fit
// a smaller network than all n (the network's cost grows as
// R log^2(32 R), so 257 features cost 2.5 times 256). About
// k + k / 2 + 32 uniform hashes fall under it: enough that fewer than k
// distinct is rare short of repeated shingles (k = 128, n = 300: 224
// expected, 7.5 standard deviations above 128), few enough to halve the
// network for n just above a power of two.
NEARDUP_HD uint64_t BottomKThreshold(uint32_t n, uint32_t k) {
  const uint64_t expected = uint64_t{k} + k / 2 + 32;
  if (expected >= n) return UINT64_MAX;
  // Room above the mean (an eighth) so that the smaller network rarely
  // overflows into the next one.
  const bool smaller = expected + expected / 8 <= kBottomKCandidates &&
                       BottomKRegisters(static_cast<uint32_t>(expected + expected / 8)) <
                           (n <= kBottomKCandidates ? BottomKRegisters(n) : 32);
  if (n <= kBottomKCandidates && !smaller) return UINT64_MAX;
  return (UINT64_MAX / n) * expected;
}

// Bitonic sort of 2^m elements: for size = 2, 4, ..., 2^m and, within each,
// stride = size / 2, ..., 1, element i is compared with element i ^ stride
// and keeps the smaller of the two iff this returns true (else the larger).
// The pair is in ascending order iff (i & size) == 0, and the lower index
// (i & stride) == 0 keeps the minimum of an ascending pair.
NEARDUP_HD bool BitonicKeepsMin(uint32_t i, uint32_t size, uint32_t stride) {
  return ((i & stride) == 0) == ((i & size) == 0);
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_BOTTOMK_H_
