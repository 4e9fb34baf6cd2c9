#include "text/text_kernels.h"

#include <gtest/gtest.h>

#include "text/sdbm_avx512.h"
#include "text/token_hash_avx2.h"
#include "text/token_hash_avx512.h"

namespace neardup::internal {
namespace {

TEST(TextKernelsTest, PortableLevelsGetNoVectorKernels) {
  for (CpuPath path : {CpuPath::kReference, CpuPath::kPortable}) {
    const TextKernels k = ChooseTextKernels(path, CpuFeatures::All().LimitedTo(path));
    EXPECT_EQ(k.path, path);
    EXPECT_FALSE(k.ascii_normalizer_avx512);
    EXPECT_FALSE(k.ascii_copy_avx512bw);
    EXPECT_FALSE(k.block_normalizer);
    EXPECT_FALSE(k.compress_tokens);
    EXPECT_EQ(k.xxh3_spans, nullptr);
    EXPECT_EQ(k.sdbm_spans, nullptr);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
TEST(TextKernelsTest, EachLevelGetsItsOwnKernels) {
  const TextKernels avx2 =
      ChooseTextKernels(CpuPath::kAvx2, CpuFeatures::All().LimitedTo(CpuPath::kAvx2));
  EXPECT_EQ(avx2.xxh3_spans, &Xxh3SpansAvx2);
  EXPECT_EQ(avx2.sdbm_spans, nullptr);
  EXPECT_FALSE(avx2.compress_tokens);
  EXPECT_FALSE(avx2.ascii_normalizer_avx512);
  EXPECT_FALSE(avx2.ascii_copy_avx512bw);

  const TextKernels avx512 = ChooseTextKernels(CpuPath::kAvx512, CpuFeatures::All());
  EXPECT_EQ(avx512.xxh3_spans, &Xxh3SpansAvx512);
  EXPECT_EQ(avx512.sdbm_spans, &SdbmSpansAvx512);
  EXPECT_TRUE(avx512.compress_tokens);
  EXPECT_TRUE(avx512.ascii_normalizer_avx512);
  EXPECT_FALSE(avx512.ascii_copy_avx512bw);  // never both
  EXPECT_TRUE(avx512.block_normalizer);
}

TEST(TextKernelsTest, Vbmi2WithoutVbmiGetsNoKernelThatNeedsBoth) {
  // A kind of CPU some build machines were (KVM hides extensions): AVX-512
  // VBMI2 but not VBMI.
  CpuFeatures f = CpuFeatures::All();
  f.avx512vbmi = false;
  const TextKernels k = ChooseTextKernels(CpuPath::kAvx512, f);
  EXPECT_FALSE(k.ascii_normalizer_avx512);
  EXPECT_FALSE(k.block_normalizer);
  EXPECT_FALSE(k.compress_tokens);
  // The ASCII copy that needs neither takes its place.
  EXPECT_TRUE(k.ascii_copy_avx512bw);
  // The kernels that need neither stay.
  EXPECT_EQ(k.xxh3_spans, &Xxh3SpansAvx512);
  EXPECT_EQ(k.sdbm_spans, &SdbmSpansAvx512);
  // And the other way round.
  f = CpuFeatures::All();
  f.avx512vbmi2 = false;
  EXPECT_FALSE(ChooseTextKernels(CpuPath::kAvx512, f).compress_tokens);
  EXPECT_FALSE(ChooseTextKernels(CpuPath::kAvx512, f).ascii_normalizer_avx512);
  EXPECT_TRUE(ChooseTextKernels(CpuPath::kAvx512, f).ascii_copy_avx512bw);
}

TEST(TextKernelsTest, TheBwAsciiCopyNeedsAvx512FBwAndDq) {
  for (bool CpuFeatures::*missing :
       {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq}) {
    CpuFeatures f = CpuFeatures::All();
    f.avx512vbmi = false;
    f.avx512vbmi2 = false;
    f.*missing = false;
    const TextKernels k = ChooseTextKernels(CpuPath::kAvx512, f);
    EXPECT_FALSE(k.ascii_copy_avx512bw) << f.ToString();
    EXPECT_FALSE(k.ascii_normalizer_avx512) << f.ToString();
  }
}
#endif

TEST(TextKernelsTest, TheTablesOfThisCpuFollowItsFeatures) {
  const CpuFeatures& host = HostCpuFeatures();
  for (CpuPath path : SupportedCpuPaths()) {
    const TextKernels& k = TextKernelsFor(path);
    const TextKernels want = ChooseTextKernels(path, host.LimitedTo(path));
    EXPECT_EQ(k.path, path);
    EXPECT_EQ(k.ascii_normalizer_avx512, want.ascii_normalizer_avx512) << CpuPathName(path);
    EXPECT_EQ(k.ascii_copy_avx512bw, want.ascii_copy_avx512bw) << CpuPathName(path);
    EXPECT_EQ(k.block_normalizer, want.block_normalizer) << CpuPathName(path);
    EXPECT_EQ(k.compress_tokens, want.compress_tokens) << CpuPathName(path);
    EXPECT_EQ(k.xxh3_spans, want.xxh3_spans) << CpuPathName(path);
    EXPECT_EQ(k.sdbm_spans, want.sdbm_spans) << CpuPathName(path);
    if (k.compress_tokens || k.ascii_normalizer_avx512) {
      EXPECT_TRUE(host.avx512vbmi && host.avx512vbmi2) << host.ToString();
    }
  }
}

}  // namespace
}  // namespace neardup::internal
