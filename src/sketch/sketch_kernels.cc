#include "sketch/sketch_kernels.h"

#include <array>

#include "neardup/check.h"

namespace neardup::internal {

SketchKernels ChooseSketchKernels(CpuPath path, const CpuFeatures& features) {
  SketchKernels kernels;
  kernels.path = path;
  kernels.simhash = SimHashKernelFor(features);
  kernels.bottom_k = BottomKKernelFor(features);
  kernels.prefix_filter = PrefixFilterFor(features);
  kernels.merge_walk = MergeWalkFor(features);
  kernels.summary = SummaryKernelFor(features);
  return kernels;
}

const SketchKernels& SketchKernelsFor(CpuPath path) {
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  // Indexed by CpuPath; an entry of a path the CPU cannot run is never read.
  static const std::array<SketchKernels, 4> tables = [] {
    std::array<SketchKernels, 4> out;
    for (CpuPath p : SupportedCpuPaths()) {
      out[static_cast<size_t>(p)] = ChooseSketchKernels(p, FeaturesAt(p));
    }
    return out;
  }();
  return tables[static_cast<size_t>(path)];
}

const SketchKernels& ActiveSketchKernels() { return SketchKernelsFor(DetectCpuPath()); }

}  // namespace neardup::internal
