// The backend factory: names, errors, and that every backend it hands out
// fingerprints as the CPU backend does. Runs everywhere: where no GPU is
// usable, `cuda` must fail clearly and `auto` must fall back to the CPU.
#include "neardup/fingerprint_backend.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"

namespace neardup {
namespace {

TEST(FingerprintBackendTest, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(ParseFingerprintBackend("cpu").value(), FingerprintBackend::kCpu);
  EXPECT_EQ(ParseFingerprintBackend("gpu").value(), FingerprintBackend::kCuda);
  EXPECT_EQ(ParseFingerprintBackend("cuda").value(), FingerprintBackend::kCuda);
  EXPECT_EQ(ParseFingerprintBackend("auto").value(), FingerprintBackend::kAuto);
  Result<FingerprintBackend> bad = ParseFingerprintBackend("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("tpu"), std::string::npos);
  for (FingerprintBackend b :
       {FingerprintBackend::kCpu, FingerprintBackend::kCuda, FingerprintBackend::kAuto}) {
    EXPECT_EQ(ParseFingerprintBackend(FingerprintBackendName(b)).value(), b);
  }
}

TEST(FingerprintBackendTest, CudaFailsClearlyWhereUnavailable) {
  const Status available = CudaBackendAvailable();
  Result<std::unique_ptr<Fingerprinter>> cuda =
      CreateFingerprinter(FingerprintBackend::kCuda, Recipe{}, internal::gpu::AllSketches());
  if (available.ok()) {
    ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
    EXPECT_EQ((*cuda)->backend_name(), "cuda");
    return;
  }
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(cuda.status().message().empty());
  if (!CudaBackendCompiled()) {
    EXPECT_NE(available.message().find("not compiled"), std::string::npos);
  }
}

TEST(FingerprintBackendTest, BadRecipeOrSelectionFailsOnEveryBackend) {
  Recipe bad;
  bad.simhash.bits = 65;
  for (FingerprintBackend b :
       {FingerprintBackend::kCpu, FingerprintBackend::kCuda, FingerprintBackend::kAuto}) {
    EXPECT_FALSE(CreateFingerprinter(b, bad, internal::gpu::AllSketches()).ok());
    EXPECT_FALSE(CreateFingerprinter(b, Recipe{}, SketchSelection{}).ok());
  }
}

// `auto` is the GPU where one is usable, else the CPU; either way the
// fingerprints are the CPU backend's.
TEST(FingerprintBackendTest, AutoEqualsCpu) {
  const std::vector<std::string> texts =
      internal::gpu::SyntheticCorpus(/*seed=*/7, /*num_docs=*/60, /*max_bytes=*/3000,
                                     /*non_ascii_every=*/5);
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  for (const Recipe& recipe : internal::gpu::GpuTestRecipes()) {
    const SketchSelection selection = internal::gpu::AllSketches();
    auto cpu = CreateFingerprinter(FingerprintBackend::kCpu, recipe, selection).value();
    auto automatic = CreateFingerprinter(FingerprintBackend::kAuto, recipe, selection).value();
    EXPECT_EQ(automatic->backend_name(), CudaBackendAvailable().ok() ? "cuda" : "cpu");
    std::vector<Fingerprint> expected;
    std::vector<Fingerprint> actual;
    ASSERT_TRUE(cpu->ComputeBatch(views, &expected).ok());
    ASSERT_TRUE(automatic->ComputeBatch(views, &actual).ok());
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      ASSERT_EQ(internal::gpu::FingerprintDifference(actual[i], expected[i], selection, recipe), "")
          << recipe.name << " document " << i;
    }
  }
}

}  // namespace
}  // namespace neardup
