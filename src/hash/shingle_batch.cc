#include "hash/shingle_batch.h"

#include <algorithm>
#include <cstring>

#include "neardup/check.h"
#include "util/intrinsics_warnings.h"
#include "util/mix.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_AVX512_SHINGLES 1
#endif

namespace neardup::internal {
namespace {

#ifdef NEARDUP_HAVE_AVX512_SHINGLES
NEARDUP_INTRINSICS_WARNINGS_OFF
#define NEARDUP_AVX512DQ_TARGET __attribute__((target("avx512f,avx512dq")))

NEARDUP_AVX512DQ_TARGET inline __m512i Mix64Avx512(__m512i x) {
  x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
  x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL)));
  x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
  x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x94d049bb133111ebULL)));
  return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

// The lanes [0, count) of a vector of 8, count >= 1.
inline __mmask8 Lanes(size_t count) {
  return count >= 8 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << count) - 1);
}

// Calls body(k, lanes) for k = 0, 8, 16, ... < count with the lanes of
// [k, count): whole vectors first, with a constant mask (no per-iteration
// mask arithmetic: these loops are bound by how many iterations fit in the
// out-of-order window, so every uop per iteration counts), then the tail.
template <typename Body>
NEARDUP_AVX512DQ_TARGET inline void ForEachVector(size_t count, Body body) {
  size_t k = 0;
  for (; k + 8 <= count; k += 8) body(k, static_cast<__mmask8>(0xff));
  if (k < count) body(k, Lanes(count - k));
}

// out[i] = Mix64(in[i]) for i < n.
NEARDUP_AVX512DQ_TARGET void Mix64ManyAvx512(const uint64_t* in, size_t n, uint64_t* out) {
  ForEachVector(n, [&](size_t i, __mmask8 lanes) NEARDUP_AVX512DQ_TARGET {
    _mm512_mask_storeu_epi64(out + i, lanes, Mix64Avx512(_mm512_maskz_loadu_epi64(lanes, in + i)));
  });
}

// HornerWindows<kWidth> eight windows at a time: lane k of a vector holds
// the window starting at m[k]. Widths 3-5 take HornerSumsAvx512 below and
// then Mix64ManyAvx512 instead.
template <int kWidth>
NEARDUP_AVX512DQ_TARGET void HornerAvx512(const uint64_t* m, size_t count, uint64_t leading_times_p,
                                          uint64_t* out) {
  const __m512i p = _mm512_set1_epi64(static_cast<long long>(kShingleMultiplier));
  const __m512i first = _mm512_set1_epi64(static_cast<long long>(leading_times_p));
  for (size_t k = 0; k < count; k += 8) {
    const __mmask8 lanes = Lanes(count - k);
    __m512i acc = _mm512_add_epi64(first, _mm512_maskz_loadu_epi64(lanes, m + k));
    for (int j = 1; j < kWidth; ++j) {
      acc =
          _mm512_add_epi64(_mm512_mullo_epi64(acc, p), _mm512_maskz_loadu_epi64(lanes, m + k + j));
    }
    _mm512_mask_storeu_epi64(out + k, lanes, Mix64Avx512(acc));
  }
}
// Widths 3-5 on AVX-512 regroup the Horner sum (the same value modulo
// 2^64) so that a window's multiplies are independent or shared between
// windows, instead of one chain of `width` dependent multiplies (vpmullq
// has a latency of 15 cycles; the chain, not the multiplier's throughput,
// bounded the loop). With P = kShingleMultiplier, c = h_0 (so
// leading_times_p = c P) and the window starting at m_0:
//   width 3:  c P^3 + m_0 P^2 + m_1 P + m_2
//             = (m_0 P^2 + c P^3) + (m_1 P + m_2)        2 independent
// and with the pair sums B_j = m_j P + m_(j+1), one multiply per token
// shared by the two windows that use it:
//   width 4:  c P^4 + m_0 P^3 + ... + m_3 = B_0 P^2 + (B_2 + c P^4)
//   width 5:  c P^5 + m_0 P^4 + ... + m_4
//             = (B_0 P^3 + c P^5) + (B_2 P + m_4)        2 independent
// so width 5 takes 3 multiplies per window instead of 4, width 4 takes 2
// instead of 3, and no chain is longer than two multiplies.
// Each width stores the window sums in one loop (HornerSumsAvx512), and
// its caller, HornerWindows, takes Mix64 of them in a second pass over
// them (in L1; the three widths share that call site): a loop whose
// iterations are independent runs as many of them at once as the core's
// scheduler holds waiting uops, so a long chain per iteration (a
// multiply, two adds, then Mix64's two multiplies: ~53 cycles for width
// 3) bounds it. Two loops with short chains (~17 and ~36 cycles) keep
// more windows in flight: the shingle stage's samples per sample of
// unchanged code in `fingerprint --simhash` x0.93-0.97 for width 3
// (docs/BENCHMARKS.md, "Session 16, scan and hash"), in
// `fingerprint --minhash` x0.92 for width 5 ("Session 17, kernels").
NEARDUP_AVX512DQ_TARGET inline __m512i Set64(uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

// out[k] = the unmixed Horner sum of the window at m[k]; widths 3-5 only.
template <int kWidth>
NEARDUP_AVX512DQ_TARGET void HornerSumsAvx512(const uint64_t* m, size_t count,
                                              uint64_t leading_times_p, uint64_t* out);

template <>
NEARDUP_AVX512DQ_TARGET void HornerSumsAvx512<3>(const uint64_t* m, size_t count,
                                                 uint64_t leading_times_p, uint64_t* out) {
  constexpr uint64_t kP = kShingleMultiplier;
  const __m512i p = Set64(kP);
  const __m512i p2 = Set64(kP * kP);
  const __m512i leading_p3 = Set64(leading_times_p * kP * kP);
  ForEachVector(count, [&](size_t k, __mmask8 lanes) NEARDUP_AVX512DQ_TARGET {
    const __m512i head = _mm512_add_epi64(
        _mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, m + k), p2), leading_p3);
    const __m512i tail =
        _mm512_add_epi64(_mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, m + k + 1), p),
                         _mm512_maskz_loadu_epi64(lanes, m + k + 2));
    _mm512_mask_storeu_epi64(out + k, lanes, _mm512_add_epi64(head, tail));
  });
}

// pairs[j] = B_j = m_j P + m_(j+1) for j < num_pairs (whole vectors are
// written: pairs has room for num_pairs rounded up to 8).
NEARDUP_AVX512DQ_TARGET inline void PairSumsAvx512(const uint64_t* m, size_t num_pairs,
                                                   uint64_t* pairs) {
  const __m512i p = Set64(kShingleMultiplier);
  ForEachVector(num_pairs, [&](size_t k, __mmask8 lanes) NEARDUP_AVX512DQ_TARGET {
    _mm512_store_si512(
        pairs + k, _mm512_add_epi64(_mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, m + k), p),
                                    _mm512_maskz_loadu_epi64(lanes, m + k + 1)));
  });
}

template <>
NEARDUP_AVX512DQ_TARGET void HornerSumsAvx512<4>(const uint64_t* m, size_t count,
                                                 uint64_t leading_times_p, uint64_t* out) {
  constexpr uint64_t kP = kShingleMultiplier;
  const __m512i p2 = Set64(kP * kP);
  const __m512i leading_p4 = Set64(leading_times_p * kP * kP * kP);
  // B_j for j < count + 2 (windows read B_k and B_(k+2)).
  alignas(64) uint64_t pairs[ShingleBatch::kMaxBatch + 16];
  PairSumsAvx512(m, count + 2, pairs);
  ForEachVector(count, [&](size_t k, __mmask8 lanes) NEARDUP_AVX512DQ_TARGET {
    const __m512i head = _mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, pairs + k), p2);
    const __m512i tail =
        _mm512_add_epi64(_mm512_maskz_loadu_epi64(lanes, pairs + k + 2), leading_p4);
    _mm512_mask_storeu_epi64(out + k, lanes, _mm512_add_epi64(head, tail));
  });
}

template <>
NEARDUP_AVX512DQ_TARGET void HornerSumsAvx512<5>(const uint64_t* m, size_t count,
                                                 uint64_t leading_times_p, uint64_t* out) {
  constexpr uint64_t kP = kShingleMultiplier;
  const __m512i p = Set64(kP);
  const __m512i p3 = Set64(kP * kP * kP);
  const __m512i leading_p5 = Set64(leading_times_p * kP * kP * kP * kP);
  alignas(64) uint64_t pairs[ShingleBatch::kMaxBatch + 16];
  PairSumsAvx512(m, count + 2, pairs);
  ForEachVector(count, [&](size_t k, __mmask8 lanes) NEARDUP_AVX512DQ_TARGET {
    const __m512i head = _mm512_add_epi64(
        _mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, pairs + k), p3), leading_p5);
    const __m512i tail =
        _mm512_add_epi64(_mm512_mullo_epi64(_mm512_maskz_loadu_epi64(lanes, pairs + k + 2), p),
                         _mm512_maskz_loadu_epi64(lanes, m + k + 4));
    _mm512_mask_storeu_epi64(out + k, lanes, _mm512_add_epi64(head, tail));
  });
}
NEARDUP_INTRINSICS_WARNINGS_ON
#endif

}  // namespace

ShingleBatch::ShingleBatch(uint64_t seed, CpuPath path)
    : avx512_(path == CpuPath::kAvx512),
      leading_(ShingleHasher::LeadingCoefficient(seed)),
      leading_times_p_(leading_ * kShingleMultiplier) {
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  mixed_.fill(0);
}

void ShingleBatch::Reset() {
  count_ = 0;
  history_ = 0;
  batch_ = 0;
}

void ShingleBatch::Append(std::span<const uint64_t> token_hashes) {
  NEARDUP_CHECK(token_hashes.size() <= kMaxBatch)
      << "ShingleBatch::Append of " << token_hashes.size() << " hashes (at most " << kMaxBatch
      << ")";
  // Keep the last kHistory tokens as the history of the new batch.
  const size_t held = history_ + batch_;
  const size_t keep = std::min(held, kHistory);
  if (keep > 0 && held > keep) {
    std::memmove(mixed_.data(), mixed_.data() + held - keep, keep * sizeof(uint64_t));
  }
  history_ = keep;
  batch_ = token_hashes.size();
  batch_raw_ = token_hashes.data();
  if (count_ == 0 && batch_ > 0) first_raw_ = token_hashes[0];
  const uint64_t* raw = token_hashes.data();
  uint64_t* mixed = mixed_.data() + history_;
#ifdef NEARDUP_HAVE_AVX512_SHINGLES
  if (avx512_) {
    Mix64ManyAvx512(raw, batch_, mixed);
    count_ += batch_;
    return;
  }
#endif
  for (size_t i = 0; i < batch_; ++i) mixed[i] = Mix64(raw[i]);
  count_ += batch_;
}

template <int kWidth>
void ShingleBatch::HornerWindows(size_t first, uint64_t* out) const {
  // The window ending at batch token k is mixed_[history_ + k + 1 - kWidth,
  // history_ + k]; for k >= first the start is >= 0.
  const uint64_t* m = mixed_.data() + (history_ + first + 1 - kWidth);
#ifdef NEARDUP_HAVE_AVX512_SHINGLES
  if (avx512_) {
    if constexpr (kWidth >= 3 && kWidth <= 5) {
      // The sums in one loop, Mix64 of them in a second (see
      // HornerSumsAvx512).
      HornerSumsAvx512<kWidth>(m, batch_ - first, leading_times_p_, out);
      Mix64ManyAvx512(out, batch_ - first, out);
    } else {
      HornerAvx512<kWidth>(m, batch_ - first, leading_times_p_, out);
    }
    return;
  }
#endif
  for (size_t k = 0; k < batch_ - first; ++k) {
    // h_0 * P is a constant: one multiply fewer per window.
    uint64_t acc = leading_times_p_ + m[k];
    for (int j = 1; j < kWidth; ++j) acc = acc * kShingleMultiplier + m[k + j];
    out[k] = Mix64(acc);
  }
}

void ShingleBatch::HornerWindows(int width, size_t first, uint64_t* out) const {
  const uint64_t* m = mixed_.data() + (history_ + first + 1 - static_cast<size_t>(width));
  for (size_t k = 0; k < batch_ - first; ++k) {
    uint64_t acc = leading_;
    for (int j = 0; j < width; ++j) acc = acc * kShingleMultiplier + m[k + j];
    out[k] = Mix64(acc);
  }
}

size_t ShingleBatch::Features(int width, uint64_t* out) const {
  NEARDUP_DCHECK(width >= 1 && width <= kMaxShingleWidth);
  if (width == 1) {
    NEARDUP_DCHECK(batch_ == 0 || batch_raw_ != nullptr);
    if (batch_ > 0) std::memcpy(out, batch_raw_, batch_ * sizeof(uint64_t));
    return batch_;
  }
  // The first batch token whose window is complete: global index >= width - 1.
  const uint64_t before = count_ - batch_;
  const auto needed = static_cast<uint64_t>(width - 1);
  const size_t first = before >= needed ? 0 : static_cast<size_t>(needed - before);
  if (first >= batch_) return 0;
  switch (width) {
    case 2:
      HornerWindows<2>(first, out);
      break;
    case 3:
      HornerWindows<3>(first, out);
      break;
    case 4:
      HornerWindows<4>(first, out);
      break;
    case 5:
      HornerWindows<5>(first, out);
      break;
    default:
      HornerWindows(width, first, out);
      break;
  }
  return batch_ - first;
}

std::optional<uint64_t> ShingleBatch::ShortDocumentFeature(int width) const {
  if (count_ == 0 || count_ >= static_cast<uint64_t>(width)) return std::nullopt;
  // Fewer than kMaxShingleWidth tokens: all are in mixed_[0, count_).
  if (count_ == 1) return first_raw_;
  uint64_t acc = leading_;
  for (size_t i = 0; i < count_; ++i) acc = acc * kShingleMultiplier + mixed_[i];
  return Mix64(acc);
}

}  // namespace neardup::internal
