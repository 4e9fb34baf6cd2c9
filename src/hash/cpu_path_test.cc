#include "hash/cpu_path.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "hash/cpu_features.h"
#include "neardup/cpu_dispatch.h"

namespace neardup::internal {
namespace {

TEST(CpuPathTest, NamesRoundTrip) {
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable, CpuPath::kAvx2, CpuPath::kAvx512}) {
    EXPECT_EQ(ParseCpuPath(CpuPathName(path)), path);
  }
  EXPECT_EQ(ParseCpuPath("sse9"), std::nullopt);
  EXPECT_EQ(ParseCpuPath(""), std::nullopt);
}

TEST(CpuPathTest, PortablePathsAlwaysSupported) {
  EXPECT_TRUE(CpuSupports(CpuPath::kReference));
  EXPECT_TRUE(CpuSupports(CpuPath::kPortable));
  std::vector<CpuPath> paths = SupportedCpuPaths();
  ASSERT_GE(paths.size(), 2u);
  EXPECT_EQ(paths[0], CpuPath::kReference);
  EXPECT_EQ(paths[1], CpuPath::kPortable);
  for (CpuPath path : paths) EXPECT_TRUE(CpuSupports(path));
  // AVX-512 implies AVX2 on every x86 CPU that has it.
  if (CpuSupports(CpuPath::kAvx512)) {
    EXPECT_TRUE(CpuSupports(CpuPath::kAvx2));
  }
}

TEST(CpuPathTest, EnvironmentLowersButNeverRaisesTheChoice) {
  const char* saved = std::getenv("NEARDUP_CPU_PATH");
  std::string saved_value = saved != nullptr ? saved : "";
  ::unsetenv("NEARDUP_CPU_PATH");
  const CpuPath best = DetectCpuPath();
  EXPECT_NE(best, CpuPath::kReference);  // the reference is only ever forced
  EXPECT_TRUE(CpuSupports(best));
  for (CpuPath path : SupportedCpuPaths()) {
    ::setenv("NEARDUP_CPU_PATH", std::string(CpuPathName(path)).c_str(), 1);
    EXPECT_EQ(DetectCpuPath(), path <= best ? path : best) << CpuPathName(path);
  }
  ::setenv("NEARDUP_CPU_PATH", "no-such-path", 1);
  EXPECT_EQ(DetectCpuPath(), best);
  if (saved != nullptr) {
    ::setenv("NEARDUP_CPU_PATH", saved_value.c_str(), 1);
  } else {
    ::unsetenv("NEARDUP_CPU_PATH");
  }
}

TEST(CpuPathTest, DispatchDescriptionNamesThePathInUseAndTheProbedFeatures) {
  const char* saved = std::getenv("NEARDUP_CPU_PATH");
  std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("NEARDUP_CPU_PATH", "portable", 1);
  const CpuDispatchInfo info = DescribeCpuDispatch();
  EXPECT_EQ(info.path, "portable");
  ASSERT_EQ(info.supported.size(), SupportedCpuPaths().size());
  for (size_t i = 0; i < info.supported.size(); ++i) {
    EXPECT_EQ(info.supported[i], CpuPathName(SupportedCpuPaths()[i]));
  }
  EXPECT_EQ(info.features, HostCpuFeatures().ToString());
  const std::string line = CpuDispatchLine();
  EXPECT_EQ(line.rfind("cpu path portable (of reference portable", 0), 0u) << line;
  EXPECT_NE(line.find("); features "), std::string::npos) << line;
  if (saved != nullptr) {
    ::setenv("NEARDUP_CPU_PATH", saved_value.c_str(), 1);
  } else {
    ::unsetenv("NEARDUP_CPU_PATH");
  }
  EXPECT_EQ(DescribeCpuDispatch().path, CpuPathName(DetectCpuPath()));
}

TEST(CpuPathTest, ChooseByValueLowersButNeverRaises) {
  const CpuFeatures all = CpuFeatures::All();
  EXPECT_EQ(ChooseCpuPath(all, nullptr), CpuPath::kAvx512);
  EXPECT_EQ(ChooseCpuPath(all, "avx2"), CpuPath::kAvx2);
  EXPECT_EQ(ChooseCpuPath(all, "reference"), CpuPath::kReference);
  EXPECT_EQ(ChooseCpuPath(all, "bogus"), CpuPath::kAvx512);
  const CpuFeatures avx2_only = all.LimitedTo(CpuPath::kAvx2);
  EXPECT_EQ(ChooseCpuPath(avx2_only, nullptr), CpuPath::kAvx2);
  EXPECT_EQ(ChooseCpuPath(avx2_only, "avx512"), CpuPath::kAvx2);
  EXPECT_EQ(ChooseCpuPath(CpuFeatures{}, "avx2"), CpuPath::kPortable);
}

}  // namespace
}  // namespace neardup::internal
