#include "hash/cpu_path.h"

#include <cstdlib>

#include "hash/cpu_features.h"

namespace neardup::internal {

bool CpuSupports(CpuPath path) { return HostCpuFeatures().Covers(path); }

CpuPath ChooseCpuPath(const CpuFeatures& features, const char* forced) {
  CpuPath best = CpuPath::kPortable;
  for (CpuPath path : {CpuPath::kAvx2, CpuPath::kAvx512}) {
    if (features.Covers(path)) best = path;
  }
  if (forced != nullptr) {
    std::optional<CpuPath> path = ParseCpuPath(forced);
    if (path && features.Covers(*path) && *path < best) best = *path;
  }
  return best;
}

CpuPath DetectCpuPath() {
  // The one read of the override. Per call, not cached: a fingerprinter
  // built after a change of the variable (tests that compare paths in one
  // process) gets the new path; the kernel tables themselves are built once.
  return ChooseCpuPath(HostCpuFeatures(), std::getenv("NEARDUP_CPU_PATH"));
}

std::vector<CpuPath> SupportedCpuPaths() {
  std::vector<CpuPath> paths;
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable, CpuPath::kAvx2, CpuPath::kAvx512}) {
    if (CpuSupports(path)) paths.push_back(path);
  }
  return paths;
}

std::string_view CpuPathName(CpuPath path) {
  switch (path) {
    case CpuPath::kReference:
      return "reference";
    case CpuPath::kPortable:
      return "portable";
    case CpuPath::kAvx2:
      return "avx2";
    case CpuPath::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<CpuPath> ParseCpuPath(std::string_view name) {
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable, CpuPath::kAvx2, CpuPath::kAvx512}) {
    if (CpuPathName(path) == name) return path;
  }
  return std::nullopt;
}

}  // namespace neardup::internal
