#include "sketch/set_intersection.h"

#include <bit>

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
NEARDUP_INTRINSICS_WARNINGS_OFF
#include <immintrin.h>
#endif

namespace neardup::internal {

size_t IntersectionSizeScalar(const uint32_t* a, size_t na, const uint32_t* b, size_t nb) {
  size_t i = 0;
  size_t j = 0;
  size_t common = 0;
  while (i < na && j < nb) {
    const uint32_t x = a[i];
    const uint32_t y = b[j];
    common += static_cast<size_t>(x == y);
    i += static_cast<size_t>(x <= y);
    j += static_cast<size_t>(y <= x);
  }
  return common;
}

#if defined(__x86_64__)

// The lanes of `x` equal to some lane of `y`: y in its 16 rotations. The
// rotations depend on `y` only, so they issue back to back.
#define NEARDUP_MATCH_ROTATION(r) _mm512_cmpeq_epi32_mask(x, _mm512_alignr_epi32(y, y, r))

__attribute__((target("avx512f,popcnt"))) size_t IntersectionSizeAvx512(const uint32_t* a,
                                                                        size_t na,
                                                                        const uint32_t* b,
                                                                        size_t nb) {
  size_t i = 0;
  size_t j = 0;
  size_t common = 0;
  while (i + 16 <= na && j + 16 <= nb) {
    const __m512i x = _mm512_loadu_si512(a + i);
    const __m512i y = _mm512_loadu_si512(b + j);
    const __mmask16 m0 = static_cast<__mmask16>(
        _mm512_cmpeq_epi32_mask(x, y) | NEARDUP_MATCH_ROTATION(1) | NEARDUP_MATCH_ROTATION(2) |
        NEARDUP_MATCH_ROTATION(3) | NEARDUP_MATCH_ROTATION(4) | NEARDUP_MATCH_ROTATION(5) |
        NEARDUP_MATCH_ROTATION(6) | NEARDUP_MATCH_ROTATION(7));
    const __mmask16 m1 = static_cast<__mmask16>(
        NEARDUP_MATCH_ROTATION(8) | NEARDUP_MATCH_ROTATION(9) | NEARDUP_MATCH_ROTATION(10) |
        NEARDUP_MATCH_ROTATION(11) | NEARDUP_MATCH_ROTATION(12) | NEARDUP_MATCH_ROTATION(13) |
        NEARDUP_MATCH_ROTATION(14) | NEARDUP_MATCH_ROTATION(15));
    common += static_cast<size_t>(std::popcount(static_cast<unsigned>(m0 | m1)));
    const uint32_t last_a = a[i + 15];
    const uint32_t last_b = b[j + 15];
    i += last_a <= last_b ? 16 : 0;
    j += last_b <= last_a ? 16 : 0;
  }
  return common + IntersectionSizeScalar(a + i, na - i, b + j, nb - j);
}

#undef NEARDUP_MATCH_ROTATION
NEARDUP_INTRINSICS_WARNINGS_ON

#endif  // __x86_64__

IntersectionSizeFn IntersectionSizeFor(const CpuFeatures& features) {
#if defined(__x86_64__)
  if (features.avx512f && features.popcnt) return &IntersectionSizeAvx512;
#else
  (void)features;
#endif
  return &IntersectionSizeScalar;
}

std::vector<IntersectionSizeFn> SupportedIntersectionSizes() {
  std::vector<IntersectionSizeFn> kernels = {&IntersectionSizeScalar};
  IntersectionSizeFn best = IntersectionSizeFor(HostCpuFeatures());
  if (best != &IntersectionSizeScalar) kernels.push_back(best);
  return kernels;
}

}  // namespace neardup::internal
