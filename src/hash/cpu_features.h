// CpuFeatures: the instruction-set extensions the kernels care about, probed
// from the CPU once per process (HostCpuFeatures) and then only read. It is
// the one place that asks the CPU; every kernel family chooses its function
// from a CpuFeatures value (hash/cpu_path.h, CpuPath levels), so a test can
// hand a family any feature set by value, and a CPU that has one extension
// of a pair but not the other (AVX-512 VBMI2 without VBMI, say) never gets a
// kernel that needs both.
//
// FeaturesAt(path) is what a kernel of level `path` may use: the host's
// features cut down to that level (kReference and kPortable: none, the
// x86-64 baseline; kAvx2: POPCNT, BMI2, AVX2; kAvx512: everything the host
// has). A kernel table of a lower level therefore never holds a kernel of a
// higher one, whatever the CPU has (NEARDUP_CPU_PATH lowers the level).
// Cost: one CPUID probe per process. Thread safety: pure; the probe is a
// function-local static.
#ifndef NEARDUP_HASH_CPU_FEATURES_H_
#define NEARDUP_HASH_CPU_FEATURES_H_

#include <array>
#include <cstddef>
#include <string>

#include "hash/cpu_path.h"
#include "neardup/check.h"

namespace neardup::internal {

struct CpuFeatures {
  bool popcnt = false;
  bool bmi2 = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
  bool avx512vbmi = false;
  bool avx512vbmi2 = false;
  bool avx512vpopcntdq = false;
  bool avx512bitalg = false;
  bool gfni = false;

  // Every feature on: for tests of the selection rules.
  static CpuFeatures All();

  // The features of `*this` a kernel of level `path` may use.
  CpuFeatures LimitedTo(CpuPath path) const;

  // Whether the features cover the level `path` (kReference and kPortable
  // always; kAvx2: AVX2 and BMI2; kAvx512: AVX-512 F, BW, DQ and BMI2).
  bool Covers(CpuPath path) const;

  // "avx2 bmi2 ...", the features that are on, for diagnostics.
  std::string ToString() const;

  friend bool operator==(const CpuFeatures&, const CpuFeatures&) = default;
};

// The features of the CPU this process runs on, probed on the first call.
const CpuFeatures& HostCpuFeatures();

// HostCpuFeatures().LimitedTo(path). REQUIRES: CpuSupports(path).
CpuFeatures FeaturesAt(CpuPath path);

// The kernel table of `path` for one module: kChoose(path, FeaturesAt(path)),
// built once per path on first use (sketch/sketch_kernels.h,
// text/text_kernels.h). REQUIRES: CpuSupports(path).
template <typename Table, Table (*kChoose)(CpuPath, const CpuFeatures&)>
const Table& KernelTableFor(CpuPath path) {
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  // Indexed by CpuPath; an entry of a path the CPU cannot run is never read.
  static const std::array<Table, 4> tables = [] {
    std::array<Table, 4> out;
    for (CpuPath p : SupportedCpuPaths()) out[static_cast<size_t>(p)] = kChoose(p, FeaturesAt(p));
    return out;
  }();
  return tables[static_cast<size_t>(path)];
}

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_CPU_FEATURES_H_
