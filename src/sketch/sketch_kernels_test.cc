#include "sketch/sketch_kernels.h"

#include <gtest/gtest.h>

namespace neardup::internal {
namespace {

constexpr CpuPath kAllPaths[] = {CpuPath::kReference, CpuPath::kPortable, CpuPath::kAvx2,
                                 CpuPath::kAvx512};

TEST(SketchKernelsTest, PortableLevelsGetThePortableKernels) {
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable}) {
    const SketchKernels k = ChooseSketchKernels(path, CpuFeatures::All().LimitedTo(path));
    EXPECT_EQ(k.simhash.name, "scalar");
    EXPECT_EQ(k.bottom_k.name, "portable");
    EXPECT_EQ(k.prefix_filter, &PrefixFilterScalar);
    EXPECT_EQ(k.merge_walk, &MergeWalkSplit);
    EXPECT_EQ(k.summary, SummaryKernel::kPortable);
    EXPECT_EQ(k.chunk_set.name, "portable");
  }
}

#if defined(__x86_64__)
TEST(SketchKernelsTest, EachLevelGetsItsOwnKernelsAndNoHigher) {
  const SketchKernels avx2 =
      ChooseSketchKernels(CpuPath::kAvx2, CpuFeatures::All().LimitedTo(CpuPath::kAvx2));
  EXPECT_EQ(avx2.simhash.name, "avx2");
  EXPECT_EQ(avx2.bottom_k.name, "avx2");
  EXPECT_EQ(avx2.prefix_filter, &PrefixFilterScalar);
  EXPECT_EQ(avx2.merge_walk, &MergeWalkSplit);
  EXPECT_EQ(avx2.summary, SummaryKernel::kPopcnt);
  EXPECT_EQ(avx2.chunk_set.name, "portable");

  const SketchKernels avx512 = ChooseSketchKernels(CpuPath::kAvx512, CpuFeatures::All());
  EXPECT_EQ(avx512.simhash.name, "avx512gfni");
  EXPECT_EQ(avx512.bottom_k.name, "avx512");
  EXPECT_EQ(avx512.prefix_filter, &PrefixFilterAvx512);
  EXPECT_EQ(avx512.merge_walk, &MergeWalkAvx512);
  EXPECT_EQ(avx512.summary, SummaryKernel::kAvx512);
  EXPECT_EQ(avx512.chunk_set.name, "avx512");
}

TEST(SketchKernelsTest, AKernelNeedingTwoExtensionsIsNotChosenWithOne) {
  // A CPU with AVX-512 VBMI2 but not VBMI (the build machine's kind): the
  // GFNI SimHash counter needs vpermb (VBMI) and must not be chosen.
  CpuFeatures f = CpuFeatures::All();
  f.avx512vbmi = false;
  EXPECT_EQ(ChooseSketchKernels(CpuPath::kAvx512, f).simhash.name, "avx512bw");
  f = CpuFeatures::All();
  f.avx512vpopcntdq = false;
  EXPECT_EQ(ChooseSketchKernels(CpuPath::kAvx512, f).summary, SummaryKernel::kPopcnt);
  f = CpuFeatures::All();
  f.avx512vl = false;
  EXPECT_EQ(ChooseSketchKernels(CpuPath::kAvx512, f).bottom_k.name, "avx2");
  EXPECT_EQ(ChooseSketchKernels(CpuPath::kAvx512, f).prefix_filter, &PrefixFilterScalar);
  f = CpuFeatures::All();
  f.avx512f = false;
  EXPECT_EQ(ChooseSketchKernels(CpuPath::kAvx512, f).chunk_set.name, "portable");
}
#endif

TEST(SketchKernelsTest, TheTablesOfThisCpuUseOnlyWhatItRuns) {
  for (CpuPath path : SupportedCpuPaths()) {
    const SketchKernels& k = SketchKernelsFor(path);
    EXPECT_EQ(k.path, path);
    const SketchKernels want = ChooseSketchKernels(path, HostCpuFeatures().LimitedTo(path));
    EXPECT_EQ(k.simhash.name, want.simhash.name) << CpuPathName(path);
    EXPECT_EQ(k.bottom_k.name, want.bottom_k.name) << CpuPathName(path);
    EXPECT_EQ(k.prefix_filter, want.prefix_filter) << CpuPathName(path);
    EXPECT_EQ(k.merge_walk, want.merge_walk) << CpuPathName(path);
    EXPECT_EQ(k.summary, want.summary) << CpuPathName(path);
    EXPECT_EQ(k.chunk_set.name, want.chunk_set.name) << CpuPathName(path);
    // Every kernel of the table is one the CPU's kernel lists offer.
    bool found = false;
    for (const SimHashKernel& s : SupportedSimHashKernels()) found |= s.name == k.simhash.name;
    EXPECT_TRUE(found) << k.simhash.name;
  }
  for (CpuPath path : kAllPaths) {
    if (!CpuSupports(path)) {
      EXPECT_DEATH(SketchKernelsFor(path), "not supported");
    }
  }
  EXPECT_EQ(ActiveSketchKernels().path, DetectCpuPath());
}

}  // namespace
}  // namespace neardup::internal
