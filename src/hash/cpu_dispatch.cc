#include "neardup/cpu_dispatch.h"

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"

namespace neardup {

CpuDispatchInfo DescribeCpuDispatch() {
  CpuDispatchInfo info;
  info.path = std::string(internal::CpuPathName(internal::DetectCpuPath()));
  for (internal::CpuPath path : internal::SupportedCpuPaths()) {
    info.supported.emplace_back(internal::CpuPathName(path));
  }
  info.features = internal::HostCpuFeatures().ToString();
  return info;
}

std::string CpuDispatchLine() {
  const CpuDispatchInfo info = DescribeCpuDispatch();
  std::string line = "cpu path " + info.path + " (of";
  for (const std::string& path : info.supported) line += " " + path;
  line += "); features " + (info.features.empty() ? std::string("none") : info.features);
  return line;
}

}  // namespace neardup
