#include "sketch/sketch_kernels.h"

namespace neardup::internal {

SketchKernels ChooseSketchKernels(CpuPath path, const CpuFeatures& features) {
  SketchKernels kernels;
  kernels.path = path;
  kernels.simhash = SimHashKernelFor(features);
  kernels.bottom_k = BottomKKernelFor(features);
  kernels.prefix_filter = PrefixFilterFor(features);
  kernels.merge_walk = MergeWalkFor(features);
  kernels.summary = SummaryKernelFor(features);
  kernels.intersection_size = IntersectionSizeFor(features);
  kernels.chunk_set = ChunkSetKernelFor(features);
  return kernels;
}

const SketchKernels& SketchKernelsFor(CpuPath path) {
  return KernelTableFor<SketchKernels, &ChooseSketchKernels>(path);
}

const SketchKernels& ActiveSketchKernels() { return SketchKernelsFor(DetectCpuPath()); }

}  // namespace neardup::internal
