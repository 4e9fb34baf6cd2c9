#include "text/token_hash_avx2.h"

#include <cstring>

#include "text/token_hash_scalar.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_AVX2_XXH3 1
#endif

namespace neardup::internal {
namespace {

#ifdef NEARDUP_HAVE_AVX2_XXH3
#define NEARDUP_AVX2_XXH3_TARGET __attribute__((target("avx2")))

NEARDUP_AVX2_XXH3_TARGET inline __m256i Set(uint64_t v) {
  return _mm256_set1_epi64x(static_cast<long long>(v));
}

NEARDUP_AVX2_XXH3_TARGET inline __m256i XorShift(__m256i v, int shift) {
  return _mm256_xor_si256(v, _mm256_srli_epi64(v, shift));
}

// The low 64 bits of a * b per lane (b_hi = b >> 32): lo(a) lo(b) +
// ((hi(a) lo(b) + lo(a) hi(b)) << 32); hi(a) hi(b) only reaches bit 64.
NEARDUP_AVX2_XXH3_TARGET inline __m256i MulLo64(__m256i a, __m256i b, __m256i b_hi) {
  const __m256i ll = _mm256_mul_epu32(a, b);
  const __m256i cross =
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b), _mm256_mul_epu32(a, b_hi));
  return _mm256_add_epi64(ll, _mm256_slli_epi64(cross, 32));
}

// The seed-dependent constants of the 1-8-byte classes.
struct ShortConstants {
  __m256i bitflip13;  // XXH3_len_1to3_64b
  __m256i bitflip48;  // XXH3_len_4to8_64b
};

// XXH3 of four tokens of 1-8 bytes; last8 holds the 8 bytes that end at each
// token's end (the token is its top len bytes), len their lengths. Lanes
// with other lengths produce garbage (the caller overwrites them).
//   1-3 bytes: x = (c1 << 16 | c2 << 24 | c3 | len << 8) ^ bitflip13, then
//     XXH64_avalanche: x ^= x >> 33; x *= P2; x ^= x >> 29; x *= P3; x ^= x >> 32.
//   4-8 bytes: x = (last4 | first4 << 32) ^ bitflip48, then rrmxmx:
//     x ^= rotl(x, 49) ^ rotl(x, 24); x *= C; x ^= (x >> 35) + len; x *= C;
//     x ^= x >> 28.
// After the first step both are x *= mul1; x ^= (x >> shift1) + add1;
// x *= mul2; x ^= x >> shift2 with per-class constants, blended per lane.
NEARDUP_AVX2_XXH3_TARGET inline __m256i HashShort4(__m256i last8, __m256i len,
                                                   const ShortConstants& k) {
  const __m256i byte = Set(0xff);
  // The token's bytes at the bottom: last8 >> (64 - 8 len) (0 for len 8).
  const __m256i token =
      _mm256_srlv_epi64(last8, _mm256_sub_epi64(Set(64), _mm256_slli_epi64(len, 3)));
  // 4-8 bytes: the last 4 bytes | the first 4 << 32.
  const __m256i in48 = _mm256_or_si256(_mm256_srli_epi64(last8, 32), _mm256_slli_epi64(token, 32));
  // 1-3 bytes: c1 = first byte, c2 = byte len / 2, c3 = last byte.
  const __m256i c1 = _mm256_and_si256(token, byte);
  const __m256i c2 = _mm256_and_si256(
      _mm256_srlv_epi64(token, _mm256_slli_epi64(_mm256_srli_epi64(len, 1), 3)), byte);
  const __m256i c3 = _mm256_srli_epi64(last8, 56);
  const __m256i in13 =
      _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi64(c1, 16), _mm256_slli_epi64(c2, 24)),
                      _mm256_or_si256(c3, _mm256_slli_epi64(len, 8)));
  const __m256i x13 = _mm256_xor_si256(in13, k.bitflip13);
  const __m256i x48 = _mm256_xor_si256(in48, k.bitflip48);
  const __m256i pre48 = _mm256_xor_si256(
      x48,
      _mm256_xor_si256(_mm256_or_si256(_mm256_slli_epi64(x48, 49), _mm256_srli_epi64(x48, 15)),
                       _mm256_or_si256(_mm256_slli_epi64(x48, 24), _mm256_srli_epi64(x48, 40))));
  // All ones in the 1-3-byte lanes (len < 4).
  const __m256i short13 = _mm256_cmpgt_epi64(Set(4), len);
  __m256i h = _mm256_blendv_epi8(pre48, XorShift(x13, 33), short13);
  constexpr uint64_t kRrmxmx = 0x9FB21C651E98DF25ULL;
  const __m256i mul1 = _mm256_blendv_epi8(Set(kRrmxmx), Set(XXH_PRIME64_2), short13);
  const __m256i mul2 = _mm256_blendv_epi8(Set(kRrmxmx), Set(XXH_PRIME64_3), short13);
  const __m256i shift1 = _mm256_blendv_epi8(Set(35), Set(29), short13);
  const __m256i shift2 = _mm256_blendv_epi8(Set(28), Set(32), short13);
  const __m256i add1 = _mm256_andnot_si256(short13, len);
  h = MulLo64(h, mul1, _mm256_srli_epi64(mul1, 32));
  h = _mm256_xor_si256(h, _mm256_add_epi64(_mm256_srlv_epi64(h, shift1), add1));
  h = MulLo64(h, mul2, _mm256_srli_epi64(mul2, 32));
  return _mm256_xor_si256(h, _mm256_srlv_epi64(h, shift2));
}

NEARDUP_AVX2_XXH3_TARGET void Xxh3SpansAvx2Impl(std::string_view text, const TokenSpan* spans,
                                                size_t num_spans, uint64_t seed, uint64_t* out) {
  // A 1-8-byte token ending before byte 8 would load before the text; with
  // a text that short every token is one.
  if (text.size() < 8) {
    Xxh3SpansScalar(text, spans, num_spans, seed, out);
    return;
  }
  ShortConstants k;
  k.bitflip13 = Set(static_cast<uint64_t>(Xxh3SecretWord32(0) ^ Xxh3SecretWord32(4)) + seed);
  const uint64_t seed48 =
      seed ^ (static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32);
  k.bitflip48 = Set((Xxh3SecretWord64(8) ^ Xxh3SecretWord64(16)) - seed48);
  const char* base = text.data();

  // Groups of four spans: each lane's index is listed in `slow` (kept only
  // when it is not a 1-8-byte token ending at byte 8 or later: the append is
  // branch-free, since the 9-16-byte tokens are too common to predict), and
  // its 8-byte word loaded (from the text's first byte for a slow lane, so
  // every load lies inside the text).
  constexpr size_t kStep = 256;
  size_t slow[kStep];
  for (size_t at = 0; at < num_spans; at += kStep) {
    const size_t count = num_spans - at < kStep ? num_spans - at : kStep;
    const TokenSpan* group = spans + at;
    uint64_t* group_out = out + at;
    size_t num_slow = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
      uint64_t word[4];
      uint64_t length[4];
      for (size_t lane = 0; lane < 4; ++lane) {
        const size_t len = group[i + lane].length;
        const size_t end = group[i + lane].begin + len;
        const bool fast = len - 1 < 8 && end >= 8;
        slow[num_slow] = i + lane;
        num_slow += !fast;
        std::memcpy(&word[lane], base + (fast ? end - 8 : 0), 8);
        length[lane] = len;
      }
      const __m256i last8 =
          _mm256_set_epi64x(static_cast<long long>(word[3]), static_cast<long long>(word[2]),
                            static_cast<long long>(word[1]), static_cast<long long>(word[0]));
      const __m256i len =
          _mm256_set_epi64x(static_cast<long long>(length[3]), static_cast<long long>(length[2]),
                            static_cast<long long>(length[1]), static_cast<long long>(length[0]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(group_out + i), HashShort4(last8, len, k));
    }
    for (; i < count; ++i) slow[num_slow++] = i;
    for (size_t j = 0; j < num_slow; ++j)
      Xxh3SpansScalar(text, group + slow[j], 1, seed, group_out + slow[j]);
  }
}
#endif  // NEARDUP_HAVE_AVX2_XXH3

}  // namespace

void Xxh3SpansAvx2(std::string_view text, const TokenSpan* spans, size_t num_spans, uint64_t seed,
                   uint64_t* out) {
#ifdef NEARDUP_HAVE_AVX2_XXH3
  Xxh3SpansAvx2Impl(text, spans, num_spans, seed, out);
#else
  Xxh3SpansScalar(text, spans, num_spans, seed, out);
#endif
}

}  // namespace neardup::internal
