#include "sketch/simhash_kernels.h"

#include <array>
#include <cstring>

#include "hash/cpu_features.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace neardup::internal {
namespace {

// kByteToLanes[x] has lane j equal to bit j of x: adding it to a word of
// eight 8-bit counters counts the eight bits of x at once.
constexpr std::array<uint64_t, 256> MakeByteToLanes() {
  std::array<uint64_t, 256> table{};
  for (int x = 0; x < 256; ++x) {
    for (int j = 0; j < 8; ++j) table[x] |= static_cast<uint64_t>((x >> j) & 1) << (8 * j);
  }
  return table;
}
constexpr std::array<uint64_t, 256> kByteToLanes = MakeByteToLanes();

void CountBitsScalar(const uint64_t* values, size_t count, uint64_t* lanes) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t value = values[i];
    for (int b = 0; b < 8; ++b) lanes[b] += kByteToLanes[(value >> (8 * b)) & 0xff];
  }
}

void FoldScalar(uint64_t* lanes, int64_t num_pending, int64_t* sums) {
  for (int b = 0; b < 8; ++b) {
    for (int j = 0; j < 8; ++j) {
      const auto ones = static_cast<int64_t>((lanes[b] >> (8 * j)) & 0xff);
      sums[8 * b + j] += 2 * ones - num_pending;
    }
    lanes[b] = 0;
  }
}

uint64_t SignBitsScalar(const int64_t* sums) {
  uint64_t bits = 0;
  for (int k = 0; k < 64; ++k) bits |= static_cast<uint64_t>(sums[k] >= 0) << k;
  return bits;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_X86_KERNELS 1

NEARDUP_INTRINSICS_WARNINGS_OFF
// Lane k is byte k of the lanes on little-endian x86: 8 widened per step.
__attribute__((target("avx512f"))) void FoldAvx512(uint64_t* lanes, int64_t num_pending,
                                                   int64_t* sums) {
  const __m512i pending = _mm512_set1_epi64(num_pending);
  for (int b = 0; b < 8; ++b) {
    const __m512i ones =
        _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<__m128i*>(lanes + b)));
    const __m512i votes = _mm512_sub_epi64(_mm512_slli_epi64(ones, 1), pending);
    _mm512_storeu_si512(sums + 8 * b, _mm512_add_epi64(_mm512_loadu_si512(sums + 8 * b), votes));
  }
  _mm512_storeu_si512(lanes, _mm512_setzero_si512());
}

__attribute__((target("avx512f"))) uint64_t SignBitsAvx512(const int64_t* sums) {
  uint64_t bits = 0;
  for (int b = 0; b < 8; ++b) {
    const __mmask8 nonnegative =
        _mm512_cmpge_epi64_mask(_mm512_loadu_si512(sums + 8 * b), _mm512_setzero_si512());
    bits |= static_cast<uint64_t>(nonnegative) << (8 * b);
  }
  return bits;
}
NEARDUP_INTRINSICS_WARNINGS_ON

__attribute__((target("avx2"))) void CountBitsAvx2(const uint64_t* values, size_t count,
                                                   uint64_t* lanes) {
  // Counter byte k of a 32-byte half tests bit k % 8 of value byte k / 8
  // (pshufb works within 128-bit lanes; the broadcast fills both).
  const __m256i select_lo = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                             2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i select_hi = _mm256_setr_epi8(4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6,
                                             6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  __m256i acc_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes));
  __m256i acc_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + 4));
  for (size_t i = 0; i < count; ++i) {
    const __m256i v = _mm256_set1_epi64x(static_cast<int64_t>(values[i]));
    const __m256i lo = _mm256_and_si256(_mm256_shuffle_epi8(v, select_lo), bit);
    const __m256i hi = _mm256_and_si256(_mm256_shuffle_epi8(v, select_hi), bit);
    // cmpeq gives -1 where the bit is set; subtracting adds 1.
    acc_lo = _mm256_sub_epi8(acc_lo, _mm256_cmpeq_epi8(lo, bit));
    acc_hi = _mm256_sub_epi8(acc_hi, _mm256_cmpeq_epi8(hi, bit));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), acc_lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + 4), acc_hi);
}

__attribute__((target("avx512f,avx512bw"))) void CountBitsAvx512(const uint64_t* values,
                                                                 size_t count, uint64_t* lanes) {
  // Two accumulators halve the dependency chain of the byte subtractions.
  __m512i acc0 = _mm512_loadu_si512(lanes);
  __m512i acc1 = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 2 <= count; i += 2) {
    acc0 = _mm512_sub_epi8(acc0, _mm512_movm_epi8(static_cast<__mmask64>(values[i])));
    acc1 = _mm512_sub_epi8(acc1, _mm512_movm_epi8(static_cast<__mmask64>(values[i + 1])));
  }
  if (i < count) acc0 = _mm512_sub_epi8(acc0, _mm512_movm_epi8(static_cast<__mmask64>(values[i])));
  _mm512_storeu_si512(lanes, _mm512_add_epi8(acc0, acc1));
}

NEARDUP_INTRINSICS_WARNINGS_OFF
// See simhash_kernels.h: eight values per step, no work per value.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni"))) void CountBitsAvx512Gfni(
    const uint64_t* values, size_t count, uint64_t* lanes) {
  // Byte 8b + r of the transposed vector is byte b of value r.
  alignas(64) static constexpr std::array<uint8_t, 64> kTranspose = [] {
    std::array<uint8_t, 64> index{};
    for (int b = 0; b < 8; ++b) {
      for (int r = 0; r < 8; ++r) index[8 * b + r] = static_cast<uint8_t>(8 * r + b);
    }
    return index;
  }();
  const __m512i transpose = _mm512_load_si512(kTranspose.data());
  // Input byte k = 1 << k: output bit i is bit k of matrix row 7 - i.
  const __m512i columns = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ULL));
  __m512i acc = _mm512_loadu_si512(lanes);
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m512i matrices = _mm512_permutexvar_epi8(transpose, _mm512_loadu_si512(values + i));
    const __m512i bits = _mm512_gf2p8affine_epi64_epi8(columns, matrices, 0);
    acc = _mm512_add_epi8(acc, _mm512_popcnt_epi8(bits));
  }
  if (i < count) {
    // Missing values load as zero and count nothing.
    const auto rest = static_cast<__mmask8>((1u << (count - i)) - 1);
    const __m512i matrices =
        _mm512_permutexvar_epi8(transpose, _mm512_maskz_loadu_epi64(rest, values + i));
    const __m512i bits = _mm512_gf2p8affine_epi64_epi8(columns, matrices, 0);
    acc = _mm512_add_epi8(acc, _mm512_popcnt_epi8(bits));
  }
  _mm512_storeu_si512(lanes, acc);
}
NEARDUP_INTRINSICS_WARNINGS_ON

#endif

}  // namespace

std::vector<SimHashKernel> SimHashKernelsFor(const CpuFeatures& f) {
  std::vector<SimHashKernel> kernels = {
      {"scalar", "portable", &CountBitsScalar, &FoldScalar, &SignBitsScalar}};
#ifdef NEARDUP_HAVE_X86_KERNELS
  if (f.avx2) kernels.push_back({"avx2", "avx2", &CountBitsAvx2, &FoldScalar, &SignBitsScalar});
  const bool avx512 = f.avx512f && f.avx512bw;
  if (avx512)
    kernels.push_back({"avx512bw", "avx512", &CountBitsAvx512, &FoldAvx512, &SignBitsAvx512});
  // vpermb is VBMI (VBMI2 alone does not have it).
  if (avx512 && f.avx512vbmi && f.avx512bitalg && f.gfni)
    kernels.push_back({"avx512gfni", "avx512", &CountBitsAvx512Gfni, &FoldAvx512, &SignBitsAvx512});
#else
  (void)f;
#endif
  return kernels;
}

std::vector<SimHashKernel> SupportedSimHashKernels() {
  return SimHashKernelsFor(HostCpuFeatures());
}

SimHashKernel SimHashKernelFor(const CpuFeatures& features) {
  return SimHashKernelsFor(features).back();
}

}  // namespace neardup::internal
