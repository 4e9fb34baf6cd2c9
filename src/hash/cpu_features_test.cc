#include "hash/cpu_features.h"

#include <gtest/gtest.h>

namespace neardup::internal {
namespace {

TEST(CpuFeaturesTest, LevelsCutTheFeaturesDown) {
  const CpuFeatures all = CpuFeatures::All();
  EXPECT_EQ(all.LimitedTo(CpuPath::kReference), CpuFeatures{});
  EXPECT_EQ(all.LimitedTo(CpuPath::kPortable), CpuFeatures{});
  const CpuFeatures avx2 = all.LimitedTo(CpuPath::kAvx2);
  EXPECT_EQ(avx2.ToString(), "popcnt bmi2 avx2");
  EXPECT_EQ(all.LimitedTo(CpuPath::kAvx512), all);
  // A level never adds a feature the CPU lacks.
  CpuFeatures no_bmi2 = all;
  no_bmi2.bmi2 = false;
  EXPECT_FALSE(no_bmi2.LimitedTo(CpuPath::kAvx2).bmi2);
  EXPECT_FALSE(no_bmi2.Covers(CpuPath::kAvx2));
  EXPECT_FALSE(no_bmi2.Covers(CpuPath::kAvx512));
}

TEST(CpuFeaturesTest, CoversFollowsTheLevelRequirements) {
  const CpuFeatures none{};
  EXPECT_TRUE(none.Covers(CpuPath::kReference));
  EXPECT_TRUE(none.Covers(CpuPath::kPortable));
  EXPECT_FALSE(none.Covers(CpuPath::kAvx2));
  EXPECT_FALSE(none.Covers(CpuPath::kAvx512));
  CpuFeatures f;
  f.avx512f = f.avx512bw = f.avx512dq = f.bmi2 = true;
  EXPECT_TRUE(f.Covers(CpuPath::kAvx512));
  f.avx512dq = false;
  EXPECT_FALSE(f.Covers(CpuPath::kAvx512));
}

TEST(CpuFeaturesTest, TheHostIsProbedOnceAndAgreesWithCpuSupports) {
  const CpuFeatures& host = HostCpuFeatures();
  EXPECT_EQ(&host, &HostCpuFeatures());
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable, CpuPath::kAvx2, CpuPath::kAvx512}) {
    EXPECT_EQ(host.Covers(path), CpuSupports(path)) << CpuPathName(path);
    if (CpuSupports(path)) {
      EXPECT_EQ(FeaturesAt(path), host.LimitedTo(path));
    }
  }
  // AVX-512 VBMI2 does not imply VBMI: the features are read one by one.
  SCOPED_TRACE(host.ToString());
}

}  // namespace
}  // namespace neardup::internal
