#include "text/text_kernels.h"

#include "text/sdbm_avx512.h"
#include "text/token_hash_avx2.h"
#include "text/token_hash_avx512.h"

namespace neardup::internal {

TextKernels ChooseTextKernels(CpuPath path, const CpuFeatures& f) {
  TextKernels kernels;
  kernels.path = path;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // The x86 kernels are compiled on exactly this condition (their files).
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512dq;
  const bool vbmi_pair = f.avx512vbmi && f.avx512vbmi2;  // VBMI2 does not imply VBMI
  kernels.ascii_normalizer_avx512 = avx512 && vbmi_pair;
  kernels.ascii_copy_avx512bw = avx512 && !vbmi_pair;
  kernels.block_normalizer = kernels.ascii_normalizer_avx512 && f.avx512vl && f.bmi2 && f.popcnt;
  kernels.compress_tokens = avx512 && f.bmi2 && vbmi_pair;
  if (avx512) {
    kernels.xxh3_spans = &Xxh3SpansAvx512;
    kernels.sdbm_spans = &SdbmSpansAvx512;
  } else if (f.avx2 && f.bmi2) {
    kernels.xxh3_spans = &Xxh3SpansAvx2;
  }
#else
  (void)f;
#endif
  return kernels;
}

const TextKernels& TextKernelsFor(CpuPath path) {
  return KernelTableFor<TextKernels, &ChooseTextKernels>(path);
}

}  // namespace neardup::internal
