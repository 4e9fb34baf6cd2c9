#include "hash/cpu_path.h"

#include <cstdlib>

namespace neardup::internal {

bool CpuSupports(CpuPath path) {
  switch (path) {
    case CpuPath::kReference:
    case CpuPath::kPortable:
      return true;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    case CpuPath::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
    case CpuPath::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("bmi2");
#else
    case CpuPath::kAvx2:
    case CpuPath::kAvx512:
      return false;
#endif
  }
  return false;
}

CpuPath DetectCpuPath() {
  CpuPath best = CpuPath::kPortable;
  for (CpuPath path : {CpuPath::kAvx2, CpuPath::kAvx512}) {
    if (CpuSupports(path)) best = path;
  }
  // Read per call (fingerprinters are built rarely), never cached globally.
  if (const char* forced = std::getenv("NEARDUP_CPU_PATH"); forced != nullptr) {
    std::optional<CpuPath> path = ParseCpuPath(forced);
    if (path && CpuSupports(*path) && *path < best) best = *path;
  }
  return best;
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
