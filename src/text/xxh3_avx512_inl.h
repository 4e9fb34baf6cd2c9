// The first pass of the AVX-512 XXH3 span kernel (token_hash_avx512.cc) as
// inline functions: XXH3 of 1-8-byte tokens eight per vector, listing the
// others for the later passes (Xxh3Lists). Shared with the block loop of
// the tokenizer (token_scan.cc), which runs this pass on groups of spans it
// has just stored, between blocks, so that the hash's long multiply chains
// overlap the scanner's work. Private to those two files; x86-64 only.
#ifndef NEARDUP_TEXT_XXH3_AVX512_INL_H_
#define NEARDUP_TEXT_XXH3_AVX512_INL_H_

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_XXH3_AVX512_INL 1

NEARDUP_INTRINSICS_WARNINGS_OFF
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "text/token_hash_avx512.h"
#include "text/token_hash_scalar.h"

#define NEARDUP_AVX512_XXH3_TARGET __attribute__((target("avx512f,avx512bw,avx512dq")))

namespace neardup::internal::xxh3_avx512 {

NEARDUP_AVX512_XXH3_TARGET inline __m512i XorShift(__m512i v, int shift) {
  return _mm512_xor_si512(v, _mm512_srli_epi64(v, shift));
}

NEARDUP_AVX512_XXH3_TARGET inline __m512i Set(uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

// One group of eight spans after the first pass's fetch.
struct ShortGroup {
  __m512i len;
  __m512i last8;     // the 8 bytes that end at each short lane's end
  __mmask8 short18;  // 1-8 bytes, and end >= 8
};

// Lanes `valid` of a group of eight spans (begin, len), the first being span
// `first` of the batch: appends the indices of the 9-16-byte tokens to
// lists->mid and of those for the scalar routine to lists->slow, and
// gathers the bytes of the 1-8-byte ones.
NEARDUP_AVX512_XXH3_TARGET inline ShortGroup ListGroup(__m512i begin, __m512i len, __mmask8 valid,
                                                       size_t first, const long long* base,
                                                       Xxh3Lists* lists) {
  ShortGroup g;
  g.len = len;
  // Lanes with 1 <= len <= 16 whose last 8 bytes lie inside the text
  // (end >= 8; a span lies inside the text, so end <= size). The first 8
  // bytes of a 9-16-byte token then lie inside it too.
  const __m512i end = _mm512_add_epi64(begin, len);
  __mmask8 ok = valid & _mm512_cmpge_epu64_mask(end, Set(8));
  ok &= _mm512_cmple_epu64_mask(_mm512_sub_epi64(len, Set(1)), Set(15));
  g.short18 = ok & _mm512_cmple_epu64_mask(len, Set(8));
  const __m512i index = _mm512_add_epi64(Set(first), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
  const __mmask8 mid_lanes = ok & static_cast<__mmask8>(~g.short18);
  const __mmask8 slow_lanes = valid & static_cast<__mmask8>(~ok);
  // Compressed in registers and stored whole (the lists have 8 spare
  // entries): vpcompressq with a memory destination is microcoded on Intel
  // cores and was the loop's largest cost.
  _mm512_storeu_si512(lists->mid + lists->num_mid, _mm512_maskz_compress_epi64(mid_lanes, index));
  lists->num_mid += static_cast<size_t>(__builtin_popcount(mid_lanes));
  _mm512_storeu_si512(lists->slow + lists->num_slow,
                      _mm512_maskz_compress_epi64(slow_lanes, index));
  lists->num_slow += static_cast<size_t>(__builtin_popcount(slow_lanes));
  // One gather: a token of at most 8 bytes lies within the 8 bytes that
  // end at its end (HashShort takes its first bytes from them).
  g.last8 = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), g.short18,
                                        _mm512_sub_epi64(end, Set(8)), base, 1);
  return g;
}

// Per-length constants of the 1-8-byte classes, one 64-bit entry per
// length, indexed by len mod 8 (vpermq reads the low 3 bits of each index:
// entry 0 is for 8 bytes). Built once per call: `flip` depends on the seed.
struct ShortTables {
  __m512i shuffle;      // vpshufb control gathering each class's input word
  __m512i lane_offset;  // added to the control: vpshufb indexes 128-bit lanes
  __m512i flip;         // what the input word is xored with
  __m512i mul1, shift1, add1, mul2, shift2;
};

// Little-endian byte k of a control word is the source byte of output byte
// k within the 8 bytes that end at the token's end (the token is bytes
// 8 - len .. 7); 0x80 writes a zero.
constexpr uint64_t ShuffleControl(size_t len) {
  uint8_t control[8] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  const size_t first = 8 - len;
  if (len <= 3) {
    // XXH3_len_1to3_64b: c1 << 16 | c2 << 24 | c3 (| len << 8, from flip).
    control[0] = 7;                                      // c3, the last byte
    control[2] = static_cast<uint8_t>(first);            // c1, the first
    control[3] = static_cast<uint8_t>(first + len / 2);  // c2, the middle
  } else {
    // XXH3_len_4to8_64b: the last 4 bytes | the first 4 bytes << 32.
    for (size_t k = 0; k < 4; ++k) {
      control[k] = static_cast<uint8_t>(4 + k);
      control[4 + k] = static_cast<uint8_t>(first + k);
    }
  }
  uint64_t word = 0;
  for (size_t k = 0; k < 8; ++k) word |= static_cast<uint64_t>(control[k]) << (8 * k);
  return word;
}

NEARDUP_AVX512_XXH3_TARGET inline ShortTables MakeShortTables(uint64_t seed) {
  // Seed-dependent constants of the two length classes (XXH3_len_1to3_64b,
  // XXH3_len_4to8_64b).
  const uint64_t bitflip13 =
      static_cast<uint64_t>(Xxh3SecretWord32(0) ^ Xxh3SecretWord32(4)) + seed;
  const uint64_t seed48 =
      seed ^ (static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32);
  const uint64_t bitflip48 = (Xxh3SecretWord64(8) ^ Xxh3SecretWord64(16)) - seed48;
  alignas(64) uint64_t shuffle[8], flip[8], mul1[8], shift1[8], add1[8], mul2[8], shift2[8];
  for (size_t entry = 0; entry < 8; ++entry) {
    const size_t len = entry == 0 ? 8 : entry;
    const bool short13 = len <= 3;
    shuffle[entry] = ShuffleControl(len);
    // The 1-3-byte input word has len in byte 1, where the shuffle left zero.
    flip[entry] = short13 ? bitflip13 ^ (static_cast<uint64_t>(len) << 8) : bitflip48;
    // XXH64_avalanche (1-3 bytes) and rrmxmx (4-8 bytes) have one shape:
    //   x = pre(x); x *= mul1; x ^= (x >> shift1) + add1; x *= mul2; x ^= x >> shift2
    mul1[entry] = short13 ? XXH_PRIME64_2 : 0x9FB21C651E98DF25ULL;
    shift1[entry] = short13 ? 29 : 35;
    add1[entry] = short13 ? 0 : len;
    mul2[entry] = short13 ? XXH_PRIME64_3 : 0x9FB21C651E98DF25ULL;
    shift2[entry] = short13 ? 32 : 28;
  }
  ShortTables t;
  t.shuffle = _mm512_load_si512(shuffle);
  // vpshufb indexes within 128-bit lanes: the odd 64-bit lanes' bytes are
  // 8-15 there (0x80 + 8 still has the zeroing bit).
  t.lane_offset = _mm512_setr_epi64(0, 0x0808080808080808LL, 0, 0x0808080808080808LL, 0,
                                    0x0808080808080808LL, 0, 0x0808080808080808LL);
  t.flip = _mm512_load_si512(flip);
  t.mul1 = _mm512_load_si512(mul1);
  t.shift1 = _mm512_load_si512(shift1);
  t.add1 = _mm512_load_si512(add1);
  t.mul2 = _mm512_load_si512(mul2);
  t.shift2 = _mm512_load_si512(shift2);
  return t;
}

// XXH3 of the 1-8-byte lanes of a group: each lane's class input word comes
// from one vpshufb of its gathered bytes, and every per-class constant from
// one vpermq by length, so both classes run one branch-free chain.
NEARDUP_AVX512_XXH3_TARGET inline __m512i HashShort(const ShortGroup& g, const ShortTables& t) {
  const __m512i len = g.len;
  // The lane offsets depend on the 64-bit lane, not on the length, so they
  // are added after the permute.
  const __m512i control = _mm512_add_epi8(_mm512_permutexvar_epi64(len, t.shuffle), t.lane_offset);
  const __m512i x = _mm512_xor_si512(_mm512_shuffle_epi8(g.last8, control),
                                     _mm512_permutexvar_epi64(len, t.flip));
  const __mmask8 short13 = _mm512_cmple_epu64_mask(len, Set(3));
  const __m512i pre48 =
      _mm512_ternarylogic_epi64(x, _mm512_rol_epi64(x, 49), _mm512_rol_epi64(x, 24), 0x96);
  __m512i h = _mm512_mask_blend_epi64(short13, pre48, XorShift(x, 33));
  h = _mm512_mullo_epi64(h, _mm512_permutexvar_epi64(len, t.mul1));
  h = _mm512_xor_si512(
      h, _mm512_add_epi64(_mm512_srlv_epi64(h, _mm512_permutexvar_epi64(len, t.shift1)),
                          _mm512_permutexvar_epi64(len, t.add1)));
  h = _mm512_mullo_epi64(h, _mm512_permutexvar_epi64(len, t.mul2));
  return _mm512_xor_si512(h, _mm512_srlv_epi64(h, _mm512_permutexvar_epi64(len, t.shift2)));
}

}  // namespace neardup::internal::xxh3_avx512

NEARDUP_INTRINSICS_WARNINGS_ON
#endif  // x86-64

#endif  // NEARDUP_TEXT_XXH3_AVX512_INL_H_
