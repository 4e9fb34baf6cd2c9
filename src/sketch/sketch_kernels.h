// SketchKernels: the kernel table of one CPU path for the sketch module, one
// function (or kernel choice) per family: SimHash bit counting, bottom-k
// filter/sort/unique, the chunk sets' sort, the Jaccard prefix filter, the
// exact merge walk and the BottomKSummary test. The text module has the same kind of table for its
// families (text/text_kernels.h); both are filled from the one feature probe
// (hash/cpu_features.h) cut down to the path's level, so a table never holds
// a kernel above its path, and NEARDUP_CPU_PATH (read in hash/cpu_path.cc
// only) lowers every family at once.
//
// How a kernel family joins: it declares `XFor(const CpuFeatures&)` (the
// fastest of its kernels whose features are all present) beside its
// kernels, and ChooseSketchKernels adds one field for it. A new instruction
// set (NEON, say) is a new CpuPath level plus the kernels' `XFor` cases
// (docs/CPU_DISPATCH.md).
// Cost: the tables of the four paths are built once, on first use.
// Thread safety: the tables are immutable after construction.
#ifndef NEARDUP_SKETCH_SKETCH_KERNELS_H_
#define NEARDUP_SKETCH_SKETCH_KERNELS_H_

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"
#include "sketch/bottom_k_kernels.h"
#include "sketch/chunk_set_kernels.h"
#include "sketch/set_intersection.h"
#include "sketch/simhash_kernels.h"
#include "sketch/similarity_kernels.h"

namespace neardup::internal {

struct SketchKernels {
  CpuPath path = CpuPath::kPortable;
  SimHashKernel simhash;
  BottomKKernel bottom_k;
  PrefixFilterFn prefix_filter = nullptr;
  MergeWalkFn merge_walk = nullptr;
  SummaryKernel summary = SummaryKernel::kPortable;
  IntersectionSizeFn intersection_size = nullptr;  // exact Jaccard of chunk sets
  ChunkSetKernel chunk_set{"portable", nullptr};   // chunk sets' sort and unique
};

// The table for a feature set, by value (tests hand any set; the CPU need
// not run what it returns).
SketchKernels ChooseSketchKernels(CpuPath path, const CpuFeatures& features);

// ChooseSketchKernels(path, FeaturesAt(path)), built once per path.
// REQUIRES: CpuSupports(path).
const SketchKernels& SketchKernelsFor(CpuPath path);

// SketchKernelsFor(DetectCpuPath()): the table the library's calls use.
const SketchKernels& ActiveSketchKernels();

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_SKETCH_KERNELS_H_
