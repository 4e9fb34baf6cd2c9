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
// run is never chosen. This file is the only reader of the variable and
// hash/cpu_features.h the only prober of the CPU; each module's kernel
// table (sketch/sketch_kernels.h, text/text_kernels.h) is built per path
// from both (docs/CPU_DISPATCH.md).
// Cost: a few flag reads and one getenv. Thread safety: pure functions.
#ifndef NEARDUP_HASH_CPU_PATH_H_
#define NEARDUP_HASH_CPU_PATH_H_

#include <optional>
#include <string_view>
#include <vector>

namespace neardup::internal {

// In order of speed: a lower path may be forced in place of a higher one.
enum class CpuPath { kReference, kPortable, kAvx2, kAvx512 };

struct CpuFeatures;  // hash/cpu_features.h

// Whether this CPU can run `path` (kReference and kPortable always can).
bool CpuSupports(CpuPath path);

// The fastest path `features` covers, lowered to `forced` when that names a
// path it covers (nullptr: none). By value, for tests.
CpuPath ChooseCpuPath(const CpuFeatures& features, const char* forced);

// ChooseCpuPath(HostCpuFeatures(), getenv("NEARDUP_CPU_PATH")).
CpuPath DetectCpuPath();

// Every path this CPU can run, kReference first.
std::vector<CpuPath> SupportedCpuPaths();

std::string_view CpuPathName(CpuPath path);
std::optional<CpuPath> ParseCpuPath(std::string_view name);

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_CPU_PATH_H_
