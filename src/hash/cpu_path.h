// CpuPath: which implementation of the fingerprint hot loops runs, chosen at
// run time from the CPU's features. Every path gives bit-identical results
// (differential tests in text/token_hasher_test.cc, hash/shingle_batch_test.cc
// and sketch/simhash_test.cc); they differ only in speed.
//
//   kReference: the original scalar code (per-code-point tokenizer, one token
//               hash and one shingle window per call). The definition the
//               others are tested against.
//   kPortable:  the block tokenizer (64-byte word-boundary bitmasks) with a
//               scalar byte classifier; runs on any CPU.
//   kAvx2:      the block tokenizer classifying 32 bytes per instruction.
//   kAvx512:    64 bytes per instruction, XXH3 of 8 tokens and Mix64 of 8
//               values per instruction (AVX-512F + BW + DQ).
//
// DetectCpuPath() picks the fastest path the CPU runs. The environment
// variable NEARDUP_CPU_PATH (reference, portable, avx2, avx512) lowers the
// choice, for differential testing and benchmarking; a path the CPU cannot
// run is never chosen.
// Cost: a few CPUID-derived flag reads. Thread safety: pure functions.
#ifndef NEARDUP_HASH_CPU_PATH_H_
#define NEARDUP_HASH_CPU_PATH_H_

#include <optional>
#include <string_view>
#include <vector>

namespace neardup::internal {

enum class CpuPath { kReference, kPortable, kAvx2, kAvx512 };

// Whether this CPU can run `path` (kReference and kPortable always can).
bool CpuSupports(CpuPath path);

// The fastest supported path, lowered to NEARDUP_CPU_PATH when that names a
// supported one.
CpuPath DetectCpuPath();

// Every path this CPU can run, kReference first.
std::vector<CpuPath> SupportedCpuPaths();

std::string_view CpuPathName(CpuPath path);
std::optional<CpuPath> ParseCpuPath(std::string_view name);

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_CPU_PATH_H_
