// What this process's fingerprint kernels run on: the CPU path (the fastest
// one the CPU covers, lowered by NEARDUP_CPU_PATH as it is set when called)
// and the CPU features probed. For bug reports and benchmark records:
// `neardup --version` prints it. Every path gives bit-identical
// fingerprints; they differ only in speed (docs/CPU_DISPATCH.md).
// Thread safety: pure; the probe runs once per process.
#ifndef NEARDUP_CPU_DISPATCH_H_
#define NEARDUP_CPU_DISPATCH_H_

#include <string>
#include <vector>

namespace neardup {

struct CpuDispatchInfo {
  std::string path;                    // reference | portable | avx2 | avx512
  std::vector<std::string> supported;  // every path this CPU runs, slowest first
  std::string features;                // e.g. "popcnt bmi2 avx2 avx512f ..."
};

CpuDispatchInfo DescribeCpuDispatch();

// One line: "cpu path avx512 (of reference portable avx2 avx512); features
// popcnt bmi2 ...".
std::string CpuDispatchLine();

}  // namespace neardup

#endif  // NEARDUP_CPU_DISPATCH_H_
