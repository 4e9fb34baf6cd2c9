// Bit-counting kernels of SimHashAccumulator: add the bits of many 64-bit
// values to 64 byte-wide counters at once.
//
// lanes[b] holds eight 8-bit counters; lane j (bits 8j..8j+7) of lanes[b]
// counts the values whose bit 8b + j is 1, the layout of
// SimHashAccumulator::ones_. On little-endian x86 that is byte 8b + j of
// the array, so the vector kernels add a 0/-1 byte per bit to it directly:
// AVX-512BW expands a value's 64 bits to 64 bytes in one instruction
// (vpmovm2b), AVX2 with a byte shuffle and compare per 32 bits.
//
// With GFNI, AVX-512 VBMI and BITALG the count needs no instruction per
// value: eight values (one 64-byte load) are byte-transposed with vpermb so
// that 64-bit lane b holds byte b of each value as an 8x8 bit matrix;
// vgf2p8affineqb with the matrix as its operand and the constant bytes
// 1 << k as input turns byte k of the lane into column k of the matrix, and
// vpopcntb counts it: byte 8b + k gets the number of the eight values with
// bit 8b + k set, added to the counters with vpaddb.
//
// Every kernel gives the same counters (simhash_test.cc runs each one the CPU
// supports against the scalar kernel). REQUIRES of all: no counter exceeds
// 255 (the caller flushes every 255 values).
// Cost: scalar 16 instructions per value, AVX2 about 10, AVX-512BW 3,
// AVX-512 GFNI 5 per eight values.
// Thread safety: pure functions.
#ifndef NEARDUP_SKETCH_SIMHASH_KERNELS_H_
#define NEARDUP_SKETCH_SIMHASH_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace neardup::internal {

struct CpuFeatures;

using SimHashCountBitsFn = void (*)(const uint64_t* values, size_t count, uint64_t* lanes);
// sums[k] += 2 * lane k - num_pending for the 64 lanes (lane k: counter of
// bit k, in the layout above), then every lane = 0.
using SimHashFoldFn = void (*)(uint64_t* lanes, int64_t num_pending, int64_t* sums);
// Bit k is sums[k] >= 0, k < 64.
using SimHashSignBitsFn = uint64_t (*)(const int64_t* sums);

struct SimHashKernel {
  std::string_view name;      // "scalar", "avx2", "avx512bw", "avx512gfni"
  std::string_view cpu_path;  // the CpuPath it belongs to: "portable", "avx2", "avx512"
  SimHashCountBitsFn count_bits;
  SimHashFoldFn fold;
  SimHashSignBitsFn sign_bits;
};

// The kernels whose features `features` has, scalar first (the fastest
// last).
std::vector<SimHashKernel> SimHashKernelsFor(const CpuFeatures& features);

// The kernels this CPU runs, scalar first: SimHashKernelsFor(HostCpuFeatures()).
std::vector<SimHashKernel> SupportedSimHashKernels();

// The fastest kernel whose features `features` has. The kernel table of a
// CPU path (sketch/sketch_kernels.h) holds SimHashKernelFor(FeaturesAt(path)).
SimHashKernel SimHashKernelFor(const CpuFeatures& features);

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_SIMHASH_KERNELS_H_
