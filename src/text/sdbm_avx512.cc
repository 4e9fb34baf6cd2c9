#include "text/sdbm_avx512.h"

#include <array>

#include "hash/feature_hash.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_SDBM_AVX512 1
#endif

namespace neardup::internal {
namespace {

constexpr uint64_t kSdbmMultiplier = 65599;

// SdbmSpansImpl takes at most this many spans per call (its deferred list
// lives on the stack).
constexpr size_t kMaxSpans = 256;  // h * 65599 = (h << 6) + (h << 16) - h

// kPowers[k] = P^k mod 2^64.
constexpr std::array<uint64_t, 65> kPowers = [] {
  std::array<uint64_t, 65> powers{};
  uint64_t p = 1;
  for (uint64_t& x : powers) {
    x = p;
    p *= kSdbmMultiplier;
  }
  return powers;
}();

// P^n mod 2^64 for any n, by squaring.
uint64_t Power(uint64_t n) {
  uint64_t result = 1;
  uint64_t base = kSdbmMultiplier;
  while (n != 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  return result;
}

#ifdef NEARDUP_HAVE_SDBM_AVX512
NEARDUP_INTRINSICS_WARNINGS_OFF

#define NEARDUP_SDBM_TARGET __attribute__((target("avx512f,avx512bw,avx512dq")))

NEARDUP_SDBM_TARGET inline __m512i Set(uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

// Per 64-bit lane x with bytes b_0 (lowest) .. b_7: sum_j b_j * P^(7-j),
// the sdbm of the 8 bytes with seed 0 (zero bytes in front add nothing, so a
// short token right-aligned in the lane gives its own sdbm).
//   p_k = b_2k * P + b_2k+1 = (b_2k << 16) + (63 * b_2k + b_2k+1) < 2^24,
//   q_0 = p_0 * P^2 + p_1,  q_1 = p_2 * P^2 + p_3  (P^2 = 2^32 + 8261505),
//   result = q_0 * P^4 + q_1.
NEARDUP_SDBM_TARGET inline __m512i Sdbm8(__m512i x) {
  const __m512i even_bytes = _mm512_and_si512(x, Set(0x00FF00FF00FF00FFULL));
  // Word k: 63 * b_2k + b_2k+1 (unsigned bytes times signed bytes, <= 16320).
  const __m512i t = _mm512_maddubs_epi16(x, _mm512_set1_epi16(0x013F));
  // Dwords (p_0, p_2) and (p_1, p_3) of each lane.
  const __m512i low_words = Set(0x0000FFFF0000FFFFULL);
  const __m512i high_words = Set(0xFFFF0000FFFF0000ULL);
  const __m512i p_even =
      _mm512_ternarylogic_epi64(t, _mm512_slli_epi32(even_bytes, 16), low_words, 0xEC);
  const __m512i p_odd =
      _mm512_ternarylogic_epi64(_mm512_srli_epi32(t, 16), even_bytes, high_words, 0xF8);
  const __m512i p2_low = Set(8261505);
  const __m512i low32 = Set(0xFFFFFFFFULL);
  const __m512i q0 = _mm512_add_epi64(
      _mm512_add_epi64(_mm512_slli_epi64(p_even, 32), _mm512_mul_epu32(p_even, p2_low)),
      _mm512_and_si512(p_odd, low32));
  const __m512i q1 =
      _mm512_add_epi64(_mm512_add_epi64(_mm512_andnot_si512(low32, p_even),
                                        _mm512_mul_epu32(_mm512_srli_epi64(p_even, 32), p2_low)),
                       _mm512_srli_epi64(p_odd, 32));
  return _mm512_add_epi64(_mm512_mullo_epi64(q0, Set(kPowers[4])), q1);
}

// The sum of the eight lanes mod 2^64 (GCC's _mm512_reduce_add_epi64 adds as
// signed integers, which the sanitizers report as overflow).
NEARDUP_SDBM_TARGET inline uint64_t ReduceAdd(__m512i v) {
  const __m256i half = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  const __m128i quarter =
      _mm_add_epi64(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(quarter)) +
         static_cast<uint64_t>(_mm_extract_epi64(quarter, 1));
}

NEARDUP_SDBM_TARGET uint64_t SdbmLong(const char* p, size_t n, uint64_t seed) {
  // The bytes as 8-byte chunks of a sequence padded in front to a multiple of
  // 8 (the padding is zero, which adds nothing): chunk k of the sequence is
  // weighted by P^(8 * (chunks after it)).
  const size_t pad = (8 - (n & 7)) & 7;
  const size_t total = n + pad;
  const char* const start = p - pad;  // never read: those bytes are masked
  // kChunkWeights[8 - c + k] = P^(8 * (c - 1 - k)) for the c chunks of a step.
  alignas(64) static constexpr std::array<uint64_t, 8> kChunkWeights = {
      kPowers[56], kPowers[48], kPowers[40], kPowers[32],
      kPowers[24], kPowers[16], kPowers[8],  kPowers[0]};
  uint64_t h = 0;
  for (size_t g = 0; g < total; g += 64) {
    const size_t bytes = total - g < 64 ? total - g : 64;
    const size_t chunks = bytes / 8;
    __mmask64 load = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
    if (g == 0) load &= ~((__mmask64{1} << pad) - 1);
    // Masked: bytes outside the token are neither read nor faulted on.
    const __m512i v = _mm512_maskz_loadu_epi8(load, start + g);
    const __m512i weights = _mm512_maskz_loadu_epi64(static_cast<__mmask8>((1u << chunks) - 1),
                                                     kChunkWeights.data() + 8 - chunks);
    const uint64_t step = ReduceAdd(_mm512_mullo_epi64(Sdbm8(v), weights));
    h = h * kPowers[8 * chunks] + step;
  }
  return seed == 0 ? h : h + seed * Power(n);
}

// The stopword probe of eight lanes (StopwordProbeTable in text/stopwords.h):
// which lanes of `lanes` have the key (key_a, key_b) in the table.
struct ProbeConstants {
  __m512i multiplier;
  __m512i slot_mask;
  __m512i slot_shift;
  __m512i displacement_lo;
  __m512i displacement_hi;
  const long long* keys;
};

NEARDUP_SDBM_TARGET inline __mmask8 Probe(const ProbeConstants& c, __mmask8 lanes, __m512i key_a,
                                          __m512i key_b) {
  const __m512i x = _mm512_xor_si512(key_a, key_b);
  // Low dword of each lane: the 32-bit hash (vpmuludq reads low dwords).
  const __m512i h = _mm512_mul_epu32(_mm512_xor_si512(x, _mm512_srli_epi64(x, 32)), c.multiplier);
  const __m512i bucket = _mm512_srli_epi32(h, 32 - StopwordProbeTable::kBucketBits);
  // Word 0 of each lane: displacement[bucket].
  const __m512i displacement =
      _mm512_maskz_permutex2var_epi16(0x11111111, c.displacement_lo, bucket, c.displacement_hi);
  const __m512i slot = _mm512_ternarylogic_epi64(_mm512_srlv_epi32(h, c.slot_shift), c.slot_mask,
                                                 displacement, 0x6A);  // (a & b) ^ c
  const __m512i index = _mm512_slli_epi64(slot, 1);
  const __m512i want_a =
      _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, index, c.keys, 8);
  const __m512i want_b =
      _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, index, c.keys + 1, 8);
  return _mm512_mask_cmpeq_epi64_mask(lanes, want_a, key_a) &
         _mm512_mask_cmpeq_epi64_mask(lanes, want_b, key_b);
}

// One group of eight spans (fewer at the end: the lanes past num_spans
// are empty and not valid) and the bytes of its 1-8-byte tokens.
struct Fetched {
  __m512i begin;
  __m512i len;
  __m512i last8;     // the 8 bytes that end at each 1-8-byte lane's end
  __mmask8 valid;    // lanes before num_spans
  __mmask8 short18;  // 1-8 bytes whose last 8 bytes lie inside the text
  __mmask8 mid;      // 9-15 bytes
};

NEARDUP_SDBM_TARGET inline Fetched Fetch(const TokenSpan* spans, size_t i, size_t num_spans,
                                         const long long* base) {
  constexpr size_t kShort = StopwordProbeTable::kMaxLength;
  const TokenSpan* group = spans + i;
  Fetched f;
  f.valid = 0xff;
  TokenSpan tail[8];
  if (num_spans - i < 8) {
    const size_t count = num_spans - i;
    for (size_t lane = 0; lane < 8; ++lane) tail[lane] = lane < count ? group[lane] : TokenSpan{};
    group = tail;
    f.valid = static_cast<__mmask8>((1u << count) - 1);
  }
  const __m512i a = _mm512_loadu_si512(group);
  const __m512i b = _mm512_loadu_si512(group + 4);
  f.begin = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
  f.len = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
  const __m512i end = _mm512_add_epi64(f.begin, f.len);
  // 1-8 bytes whose last 8 bytes lie inside the text (end >= 8; a span
  // lies inside the text, so end <= size).
  f.short18 = f.valid & _mm512_cmpge_epu64_mask(end, Set(8)) &
              _mm512_cmple_epu64_mask(_mm512_sub_epi64(f.len, Set(1)), Set(7));
  // 9-15 bytes: both 8-byte halves lie inside the token.
  f.mid = f.valid & _mm512_cmple_epu64_mask(_mm512_sub_epi64(f.len, Set(9)), Set(kShort - 9));
  f.last8 = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), f.short18,
                                        _mm512_sub_epi64(end, Set(8)), base, 1);
  return f;
}

// In three passes over at most kMaxSpans spans, each hash first written to
// out[] at its span's index (out[] has room for num_spans values), then the
// kept ones compacted in place:
//  1. eight spans per vector; the 1-8-byte tokens (80% of the tokens of the
//     translated man pages, 90% of SpamAssassin's) are hashed and probed
//     with one gather of their bytes (a token of at most 8 bytes lies in the
//     8 bytes that end at its end); the 9-15-byte ones are listed, the longer
//     ones that cannot be stopwords deferred, the rest (edges of the text,
//     empty tokens, long possible stopwords) hashed by the scalar code;
//  2. the listed 9-15-byte tokens, eight per vector (two gathers of bytes);
//  3. the deferred tokens, 64 bytes per step;
// then the compaction by the keep bits (one byte per group of eight).
// Compared with one pass that computed both 8-byte halves of every lane, a
// 1-8-byte token costs one gather of bytes and one Sdbm8 instead of two.
NEARDUP_SDBM_TARGET size_t SdbmSpansImpl(std::string_view text, const TokenSpan* spans,
                                         size_t num_spans, uint64_t seed,
                                         const StopwordSet* stopwords, uint64_t* out) {
  static_assert(sizeof(TokenSpan) == 16 && sizeof(size_t) == 8);
  constexpr size_t kShort = StopwordProbeTable::kMaxLength;
  const StopwordProbeTable* table = stopwords != nullptr ? stopwords->probe_table() : nullptr;
  // Tokens longer than this are never stopwords: their hash is computed
  // after the loop (deferred), with no branch in it.
  const size_t never_stop =
      stopwords != nullptr && stopwords->max_length() > kShort ? stopwords->max_length() : kShort;
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i ones = Set(~uint64_t{0});
  // P^0..P^7 (weight of the first 8 bytes of a token of 8 + k bytes), and
  // seed * P^n for n = 0..15.
  const __m512i high_weights = _mm512_loadu_si512(kPowers.data());
  alignas(64) std::array<uint64_t, 16> seed_terms;
  for (size_t n = 0; n < 16; ++n) seed_terms[n] = seed * kPowers[n];
  const __m512i seed_lo = _mm512_load_si512(seed_terms.data());
  const __m512i seed_hi = _mm512_load_si512(seed_terms.data() + 8);
  // The probe table's constants (unused without a table).
  ProbeConstants probe{};
  if (table != nullptr) {
    probe.multiplier = Set(table->multiplier);
    probe.slot_mask = Set(table->slot_mask);
    probe.slot_shift = Set(32 - StopwordProbeTable::kBucketBits - table->slot_bits);
    probe.displacement_lo = _mm512_loadu_si512(table->displacement.data());
    probe.displacement_hi = _mm512_loadu_si512(table->displacement.data() + 32);
    probe.keys = reinterpret_cast<const long long*>(table->keys.data());
  } else {
    probe.multiplier = probe.slot_mask = probe.slot_shift = probe.displacement_lo =
        probe.displacement_hi = _mm512_setzero_si512();
    probe.keys = nullptr;
  }
  const auto* base = reinterpret_cast<const long long*>(text.data());
  // The listed 9-15-byte tokens and the deferred ones: index, begin, length.
  alignas(64) uint64_t mid_at[kMaxSpans + 8];
  alignas(64) uint64_t mid_begin[kMaxSpans + 8];
  alignas(64) uint64_t mid_length[kMaxSpans + 8];
  size_t num_mid = 0;
  alignas(64) uint64_t deferred_at[kMaxSpans + 8];
  alignas(64) uint64_t deferred_begin[kMaxSpans + 8];
  alignas(64) uint64_t deferred_length[kMaxSpans + 8];
  size_t num_deferred = 0;
  // Bit k of keep[g]: span 8g + k is not a stopword (and exists).
  uint8_t keep[kMaxSpans / 8 + 1];

  // Software-pipelined by one group: the spans and the gather of group i + 8
  // are issued before group i is hashed and probed (the gather, the probe's
  // slot and its two gathers make a long chain per group; the loop is bound
  // by how many groups the out-of-order window holds).
  Fetched next = Fetch(spans, 0, num_spans, base);
  for (size_t i = 0; i < num_spans; i += 8) {
    const Fetched f = next;
    if (i + 8 < num_spans) next = Fetch(spans, i + 8, num_spans, base);
    const __mmask8 valid = f.valid;
    const __m512i begin = f.begin;
    const __m512i len = f.len;
    const __mmask8 short18 = f.short18;
    const __mmask8 mid = f.mid;
    const __m512i last8 = f.last8;
    const __mmask8 deferred = valid & _mm512_cmpgt_epu64_mask(len, Set(never_stop));
    // The token right-aligned (its bytes at the top of the lane, as Sdbm8
    // wants) and as the probe's KeyA (at the bottom, zero above).
    const __m512i shift = _mm512_slli_epi64(_mm512_sub_epi64(Set(8), len), 3);
    const __m512i aligned = _mm512_and_si512(last8, _mm512_sllv_epi64(ones, shift));
    __mmask8 stop = 0;
    if (table != nullptr) {
      stop = Probe(probe, short18, _mm512_srlv_epi64(last8, shift), len);
    }
    __m512i hash =
        _mm512_add_epi64(Sdbm8(aligned), _mm512_permutex2var_epi64(seed_lo, len, seed_hi));

    const __m512i at = _mm512_add_epi64(Set(i), iota);
    _mm512_storeu_si512(mid_at + num_mid, _mm512_maskz_compress_epi64(mid, at));
    _mm512_storeu_si512(mid_begin + num_mid, _mm512_maskz_compress_epi64(mid, begin));
    _mm512_storeu_si512(mid_length + num_mid, _mm512_maskz_compress_epi64(mid, len));
    num_mid += static_cast<size_t>(__builtin_popcount(mid));
    _mm512_storeu_si512(deferred_at + num_deferred, _mm512_maskz_compress_epi64(deferred, at));
    _mm512_storeu_si512(deferred_begin + num_deferred,
                        _mm512_maskz_compress_epi64(deferred, begin));
    _mm512_storeu_si512(deferred_length + num_deferred, _mm512_maskz_compress_epi64(deferred, len));
    num_deferred += static_cast<size_t>(__builtin_popcount(deferred));

    // Lanes of no class above: at the edges of the text, empty, or long but
    // possibly a stopword (rare): scalar.
    const auto slow = static_cast<__mmask8>(valid & ~(short18 | mid | deferred));
    if (slow != 0) {
      alignas(64) uint64_t lanes[8];
      _mm512_store_si512(lanes, hash);
      for (unsigned lane = 0; lane < 8; ++lane) {
        if ((slow >> lane & 1) == 0) continue;
        const TokenSpan& span = spans[i + lane];
        const std::string_view token = text.substr(span.begin, span.length);
        lanes[lane] = SdbmLong(token.data(), token.size(), seed);
        if (stopwords != nullptr && stopwords->Contains(token)) {
          stop = static_cast<__mmask8>(stop | (1u << lane));
        }
      }
      hash = _mm512_load_si512(lanes);
    }
    // Lanes past num_spans are not written (out[] has room for num_spans).
    _mm512_mask_storeu_epi64(out + i, valid, hash);
    keep[i / 8] = static_cast<uint8_t>(valid & ~stop);
  }

  // 9-15 bytes: the first 8 bytes whole, bytes 8..n-1 at the top of last8.
  for (size_t j = 0; j < num_mid; j += 8) {
    const __mmask8 lanes = num_mid - j >= 8 ? static_cast<__mmask8>(0xff)
                                            : static_cast<__mmask8>((1u << (num_mid - j)) - 1);
    const __m512i at = _mm512_load_si512(mid_at + j);
    const __m512i begin = _mm512_load_si512(mid_begin + j);
    const __m512i len = _mm512_load_si512(mid_length + j);
    const __m512i first8 =
        _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, begin, base, 1);
    const __m512i last8 = _mm512_mask_i64gather_epi64(
        _mm512_setzero_si512(), lanes, _mm512_sub_epi64(_mm512_add_epi64(begin, len), Set(8)), base,
        1);
    const __m512i tail = _mm512_and_si512(
        last8, _mm512_sllv_epi64(ones, _mm512_slli_epi64(_mm512_sub_epi64(Set(16), len), 3)));
    if (table != nullptr) {
      __mmask8 stop = Probe(probe, lanes, first8, _mm512_or_si512(len, tail));
      // Few 9-15-byte tokens are stopwords: clear their keep bits one by one.
      if (stop != 0) {
        alignas(64) uint64_t index[8];
        _mm512_store_si512(index, at);
        for (; stop != 0; stop = static_cast<__mmask8>(stop & (stop - 1))) {
          const uint64_t k = index[__builtin_ctz(stop)];
          keep[k / 8] = static_cast<uint8_t>(keep[k / 8] & ~(1u << (k % 8)));
        }
      }
    }
    // Unseeded sdbm: the first 8 bytes weigh P^(n - 8) more than the last 8.
    const __m512i unseeded = _mm512_add_epi64(
        _mm512_mullo_epi64(Sdbm8(first8),
                           _mm512_permutexvar_epi64(_mm512_sub_epi64(len, Set(8)), high_weights)),
        Sdbm8(tail));
    const __m512i hash =
        _mm512_add_epi64(unseeded, _mm512_permutex2var_epi64(seed_lo, len, seed_hi));
    _mm512_mask_i64scatter_epi64(out, lanes, at, hash, 8);
  }
  for (size_t k = 0; k < num_deferred; ++k) {
    out[deferred_at[k]] = SdbmLong(text.data() + deferred_begin[k], deferred_length[k], seed);
  }

  // In place: the kept hashes of group g go to out[n, ...) with n <= 8g, so
  // a store never reaches a group not yet read.
  size_t n = 0;
  for (size_t i = 0; i < num_spans; i += 8) {
    const auto lanes = static_cast<__mmask8>(keep[i / 8]);
    const size_t count = static_cast<size_t>(__builtin_popcount(lanes));
    const __m512i hash = _mm512_maskz_compress_epi64(
        lanes, _mm512_maskz_loadu_epi64(
                   static_cast<__mmask8>(num_spans - i >= 8 ? 0xff : (1u << (num_spans - i)) - 1),
                   out + i));
    if (i + 8 <= num_spans) {
      _mm512_storeu_si512(out + n, hash);  // n + 8 <= i + 8 <= num_spans
    } else {
      _mm512_mask_storeu_epi64(out + n, static_cast<__mmask8>((1u << count) - 1), hash);
    }
    n += count;
  }
  return n;
}

NEARDUP_INTRINSICS_WARNINGS_ON
#endif  // NEARDUP_HAVE_SDBM_AVX512

}  // namespace

size_t SdbmSpansAvx512(std::string_view text, const TokenSpan* spans, size_t num_spans,
                       uint64_t seed, const StopwordSet* stopwords, uint64_t* out) {
#ifdef NEARDUP_HAVE_SDBM_AVX512
  size_t n = 0;
  for (size_t start = 0; start < num_spans; start += kMaxSpans) {
    const size_t count = num_spans - start < kMaxSpans ? num_spans - start : kMaxSpans;
    n += SdbmSpansImpl(text, spans + start, count, seed, stopwords, out + n);
  }
  return n;
#else
  size_t n = 0;
  for (size_t i = 0; i < num_spans; ++i) {
    const std::string_view token = text.substr(spans[i].begin, spans[i].length);
    if (stopwords != nullptr && stopwords->Contains(token)) continue;
    out[n++] = SdbmHash(token, seed);
  }
  return n;
#endif
}

uint64_t SdbmHashAvx512(std::string_view bytes, uint64_t seed) {
#ifdef NEARDUP_HAVE_SDBM_AVX512
  return SdbmLong(bytes.data(), bytes.size(), seed);
#else
  return SdbmHash(bytes, seed);
#endif
}

}  // namespace neardup::internal
