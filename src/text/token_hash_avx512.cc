#include "text/token_hash_avx512.h"

#include <algorithm>
#include <cstring>

#include "text/token_hash_scalar.h"
#include "util/intrinsics_warnings.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_AVX512_XXH3 1
#endif

namespace neardup::internal {
namespace {

#ifdef NEARDUP_HAVE_AVX512_XXH3
NEARDUP_INTRINSICS_WARNINGS_OFF

#define NEARDUP_AVX512_XXH3_TARGET __attribute__((target("avx512f,avx512bw,avx512dq")))

NEARDUP_AVX512_XXH3_TARGET inline __m512i XorShift(__m512i v, int shift) {
  return _mm512_xor_si512(v, _mm512_srli_epi64(v, shift));
}

NEARDUP_AVX512_XXH3_TARGET inline __m512i Set(uint64_t v) {
  return _mm512_set1_epi64(static_cast<long long>(v));
}

// XXH3_mul128_fold64 per lane: the low and high 64 bits of the 128-bit
// product a * b, xored, from four 32x32->64 multiplies (vpmuludq).
NEARDUP_AVX512_XXH3_TARGET inline __m512i Mul128Fold64(__m512i a, __m512i b) {
  const __m512i low32 = Set(0xffffffffULL);
  const __m512i a_hi = _mm512_srli_epi64(a, 32);
  const __m512i b_hi = _mm512_srli_epi64(b, 32);
  const __m512i ll = _mm512_mul_epu32(a, b);
  const __m512i lh = _mm512_mul_epu32(a, b_hi);
  const __m512i hl = _mm512_mul_epu32(a_hi, b);
  const __m512i hh = _mm512_mul_epu32(a_hi, b_hi);
  // mid < 3 * 2^32: bits 32..63 of the product and the carry into the high half.
  const __m512i mid =
      _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(ll, 32), _mm512_and_si512(lh, low32)),
                       _mm512_and_si512(hl, low32));
  const __m512i high =
      _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(mid, 32)),
                       _mm512_add_epi64(_mm512_srli_epi64(lh, 32), _mm512_srli_epi64(hl, 32)));
  // low = (mid << 32) | (ll & low32).
  const __m512i low = _mm512_ternarylogic_epi64(_mm512_slli_epi64(mid, 32), ll, low32, 0xF8);
  return _mm512_xor_si512(low, high);
}

// XXH3_mix16B per lane for the lanes in `lanes` (zero in the others): the
// 16 bytes at base + at, with the secret's 16 bytes at secret_offset.
NEARDUP_AVX512_XXH3_TARGET inline __m512i Mix16B(const long long* base, __m512i at, __mmask8 lanes,
                                                 size_t secret_offset, uint64_t seed) {
  const __m512i lo = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, at, base, 1);
  const __m512i hi = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes,
                                                 _mm512_add_epi64(at, Set(8)), base, 1);
  return _mm512_maskz_mov_epi64(
      lanes, Mul128Fold64(_mm512_xor_si512(lo, Set(Xxh3SecretWord64(secret_offset) + seed)),
                          _mm512_xor_si512(hi, Set(Xxh3SecretWord64(secret_offset + 8) - seed))));
}

// XXH3_len_17to128_64b for the lanes in `lanes` (each with
// 17 <= len <= 128): two mix16B per 32 bytes of length class, from the
// front (offsets 0, 16, 32, 48) and from the back (len - 16, ..., len - 64),
// each pair only for the lanes long enough to take it. Every byte read lies
// inside the token.
NEARDUP_AVX512_XXH3_TARGET inline __m512i Hash17To128(const long long* base, __m512i begin,
                                                      __m512i len, __mmask8 lanes, uint64_t seed) {
  const __m512i end = _mm512_add_epi64(begin, len);
  __m512i acc = _mm512_mullo_epi64(len, Set(XXH_PRIME64_1));
  __mmask8 round = lanes;
  for (size_t r = 0; r < 4 && round != 0; ++r) {
    const __m512i front = _mm512_add_epi64(begin, Set(16 * r));
    const __m512i back = _mm512_sub_epi64(end, Set(16 * (r + 1)));
    acc = _mm512_add_epi64(acc, _mm512_add_epi64(Mix16B(base, front, round, 32 * r, seed),
                                                 Mix16B(base, back, round, 32 * r + 16, seed)));
    // The next pair is for lengths above 32 (r + 1).
    round &= _mm512_cmpgt_epu64_mask(len, Set(32 * (r + 1)));
  }
  return XorShift(_mm512_mullo_epi64(XorShift(acc, 37), Set(0x165667919E3779F9ULL)), 32);
}

// The spans one Xxh3ChunkAvx512 call takes (the size of its index lists).
constexpr size_t kChunk = 256;

// One group of eight spans (fewer at the end of a chunk) after the first
// pass's fetch.
struct ShortGroup {
  __m512i len;
  __m512i last8;     // the 8 bytes that end at each short lane's end
  __mmask8 short18;  // 1-8 bytes, and end >= 8
};

// Loads spans [i, i + 8) (the last, partial group padded with empty spans,
// masked out), appends the indices of the other tokens (9-16 bytes, and
// those for Hash17To128 or the scalar routine) to rest, and gathers the
// bytes of the 1-8-byte ones.
NEARDUP_AVX512_XXH3_TARGET inline ShortGroup FetchGroup(const TokenSpan* spans, size_t i,
                                                        size_t num_spans, const long long* base,
                                                        uint64_t* rest, size_t* num_rest) {
  static_assert(sizeof(TokenSpan) == 16 && sizeof(size_t) == 8);
  const TokenSpan* group = spans + i;
  __mmask8 valid = 0xff;
  TokenSpan tail[8];
  if (num_spans - i < 8) {
    const size_t count = num_spans - i;
    for (size_t lane = 0; lane < 8; ++lane)
      tail[lane] = lane < count ? group[lane] : TokenSpan{0, 0};
    group = tail;
    valid = static_cast<__mmask8>((1u << count) - 1);
  }
  const __m512i a = _mm512_loadu_si512(group);
  const __m512i b = _mm512_loadu_si512(group + 4);
  const __m512i begin =
      _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
  ShortGroup g;
  g.len = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
  // Lanes with 1 <= len <= 8 whose last 8 bytes lie inside the text
  // (end >= 8; a span lies inside the text, so end <= size).
  const __m512i end = _mm512_add_epi64(begin, g.len);
  g.short18 = valid & _mm512_cmpge_epu64_mask(end, Set(8)) &
              _mm512_cmple_epu64_mask(_mm512_sub_epi64(g.len, Set(1)), Set(7));
  const __m512i index = _mm512_add_epi64(Set(i), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
  const __mmask8 rest_lanes = valid & static_cast<__mmask8>(~g.short18);
  // Compressed in registers and stored whole (the list has 8 spare
  // entries): vpcompressq with a memory destination is microcoded on Intel
  // cores and was the loop's largest cost. One list for the 9-16-byte
  // tokens and the rarer rest (a second compress, store and count per group
  // here cost more than splitting the list in the next pass).
  _mm512_storeu_si512(rest + *num_rest, _mm512_maskz_compress_epi64(rest_lanes, index));
  *num_rest += static_cast<size_t>(__builtin_popcount(rest_lanes));
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
  __m512i mul1, shift1, mul2, shift2;
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

// The seed-free per-length entries, as constants (folded at compile time):
// shuffle controls, the 1-3-byte class's len << 8 (xored into flip) and the
// two finishers' constants.
struct ShortConstants {
  uint64_t shuffle[8], len_flip[8], mul1[8], shift1[8], mul2[8], shift2[8];
};

constexpr ShortConstants MakeShortConstants() {
  ShortConstants c{};
  for (size_t entry = 0; entry < 8; ++entry) {
    const size_t len = entry == 0 ? 8 : entry;
    const bool short13 = len <= 3;
    c.shuffle[entry] = ShuffleControl(len);
    // The 1-3-byte input word has len in byte 1, where the shuffle left zero.
    c.len_flip[entry] = short13 ? static_cast<uint64_t>(len) << 8 : 0;
    // XXH64_avalanche (1-3 bytes) and rrmxmx (4-8 bytes) have one shape:
    //   x = pre(x); x *= mul1; x ^= (x >> shift1) + add1; x *= mul2; x ^= x >> shift2
    // with add1 = 0 (1-3 bytes) or len (4-8; HashShort adds it under a mask).
    c.mul1[entry] = short13 ? XXH_PRIME64_2 : 0x9FB21C651E98DF25ULL;
    c.shift1[entry] = short13 ? 29 : 35;
    c.mul2[entry] = short13 ? XXH_PRIME64_3 : 0x9FB21C651E98DF25ULL;
    c.shift2[entry] = short13 ? 32 : 28;
  }
  return c;
}

alignas(64) constexpr ShortConstants kShortConstants = MakeShortConstants();

NEARDUP_AVX512_XXH3_TARGET inline ShortTables MakeShortTables(uint64_t seed) {
  // Seed-dependent constants of the two length classes (XXH3_len_1to3_64b,
  // XXH3_len_4to8_64b).
  const uint64_t bitflip13 =
      static_cast<uint64_t>(Xxh3SecretWord32(0) ^ Xxh3SecretWord32(4)) + seed;
  const uint64_t seed48 =
      seed ^ (static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32);
  const uint64_t bitflip48 = (Xxh3SecretWord64(8) ^ Xxh3SecretWord64(16)) - seed48;
  const ShortConstants& c = kShortConstants;
  ShortTables t;
  t.shuffle = _mm512_load_si512(c.shuffle);
  // vpshufb indexes within 128-bit lanes: the odd 64-bit lanes' bytes are
  // 8-15 there (0x80 + 8 still has the zeroing bit).
  t.lane_offset = _mm512_setr_epi64(0, 0x0808080808080808LL, 0, 0x0808080808080808LL, 0,
                                    0x0808080808080808LL, 0, 0x0808080808080808LL);
  // Entries 1-3 (lengths 1-3) take bitflip13, the others bitflip48. Built in
  // registers: eight scalar stores read back as one vector (the tables were
  // filled that way) stalled on store forwarding at every call, ~2 % of the
  // kernel's samples.
  t.flip = _mm512_xor_si512(_mm512_load_si512(c.len_flip),
                            _mm512_mask_blend_epi64(0x0e, Set(bitflip48), Set(bitflip13)));
  t.mul1 = _mm512_load_si512(c.mul1);
  t.shift1 = _mm512_load_si512(c.shift1);
  t.mul2 = _mm512_load_si512(c.mul2);
  t.shift2 = _mm512_load_si512(c.shift2);
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
  const __mmask8 short48 = _mm512_cmpgt_epu64_mask(len, Set(3));
  // x ^ (x >> 33) for 1-3 bytes, x ^ rol49 ^ rol24 for 4-8, as one
  // three-way xor of x, (x >> 33 or rol49) and (0 or rol24): the masked
  // rotates pick the class, four uops in all.
  const __m512i second = _mm512_mask_rol_epi64(_mm512_srli_epi64(x, 33), short48, x, 49);
  const __m512i third = _mm512_maskz_rol_epi64(short48, x, 24);
  __m512i h = _mm512_ternarylogic_epi64(x, second, third, 0x96);
  h = _mm512_mullo_epi64(h, _mm512_permutexvar_epi64(len, t.mul1));
  // (h >> shift1) + len for 4-8 bytes (rrmxmx), + 0 for 1-3: a masked add
  // of len, not a permuted table.
  const __m512i shifted = _mm512_srlv_epi64(h, _mm512_permutexvar_epi64(len, t.shift1));
  h = _mm512_xor_si512(h, _mm512_mask_add_epi64(shifted, short48, shifted, len));
  h = _mm512_mullo_epi64(h, _mm512_permutexvar_epi64(len, t.mul2));
  return _mm512_xor_si512(h, _mm512_srlv_epi64(h, _mm512_permutexvar_epi64(len, t.shift2)));
}

// Xxh3SpansAvx512 of at most kChunk spans. The first pass takes eight spans
// per vector and hashes the 1-3- and 4-8-byte tokens (44% and 47% of the
// words of the SpamAssassin bodies, 80% of those of the translated man
// pages), listing the indices of the others; the second hashes the listed
// 9-16-byte tokens (8%; 18% on the man pages) eight per vector, listing the
// rest again; the third the rest's 17-128-byte tokens (1.4%; 2.5% on
// the man pages; 11-12% of the bytes of either) eight per vector, and the
// remaining ones with the scalar routine. Computing every class for every
// lane and selecting one (an earlier kernel) spent about a third of its
// multiplies on the rare classes.
NEARDUP_AVX512_XXH3_TARGET void Xxh3ChunkAvx512(std::string_view text, const TokenSpan* spans,
                                                size_t num_spans, uint64_t seed,
                                                const ShortTables& caller_tables, uint64_t* out) {
  // A copy in registers: through the reference, every vpermq of the first
  // pass loaded its table again (the stores to out may alias it).
  const ShortTables tables = caller_tables;
  const __m512i bitflip1 = Set((Xxh3SecretWord64(24) ^ Xxh3SecretWord64(32)) + seed);
  const __m512i bitflip2 = Set((Xxh3SecretWord64(40) ^ Xxh3SecretWord64(48)) - seed);
  const __m512i prime_avalanche = Set(0x165667919E3779F9ULL);
  // vpshufb pattern reversing the bytes of each 64-bit lane.
  const __m512i bswap =
      _mm512_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                      14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4,
                      5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const auto* base = reinterpret_cast<const long long*>(text.data());

  // Indices (into spans) of the tokens that are not 1-8 bytes, then of
  // those that are not 9-16 bytes either.
  alignas(64) uint64_t rest[kChunk + 8];
  alignas(64) uint64_t slow[kChunk + 8];
  size_t num_rest = 0;
  size_t num_slow = 0;
  // Software-pipelined by one group: each step issues the gather of the
  // next group before hashing the one fetched in the step before. The loop
  // is bound by how many groups the out-of-order window holds (the gather
  // and the two dependent vpmullq make a long chain per group); uops that
  // would wait for a gather now arrive after it.
  if (num_spans > 0) {
    ShortGroup fetched = FetchGroup(spans, 0, num_spans, base, rest, &num_rest);
    size_t at = 0;
    for (size_t i = 8; i < num_spans; i += 8) {
      const ShortGroup next = FetchGroup(spans, i, num_spans, base, rest, &num_rest);
      _mm512_mask_storeu_epi64(out + at, fetched.short18, HashShort(fetched, tables));
      fetched = next;
      at = i;
    }
    _mm512_mask_storeu_epi64(out + at, fetched.short18, HashShort(fetched, tables));
  }

  // 9-16 bytes, eight listed tokens per vector; the others listed go on to
  // slow.
  const auto* span_words = reinterpret_cast<const long long*>(spans);
  for (size_t j = 0; j < num_rest; j += 8) {
    const __mmask8 listed = num_rest - j >= 8 ? static_cast<__mmask8>(0xff)
                                              : static_cast<__mmask8>((1u << (num_rest - j)) - 1);
    const __m512i index = _mm512_maskz_loadu_epi64(listed, rest + j);
    // TokenSpan is {begin, length}: words 2 * index and 2 * index + 1.
    const __m512i word = _mm512_slli_epi64(index, 1);
    const __m512i begin =
        _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), listed, word, span_words, 8);
    const __m512i len = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), listed,
                                                    _mm512_add_epi64(word, Set(1)), span_words, 8);
    // 9 <= len <= 16, as len - 9 <= 7 unsigned. Both 8-byte words of such a
    // token lie inside it (end >= 9).
    const __mmask8 lanes = listed & _mm512_cmple_epu64_mask(_mm512_sub_epi64(len, Set(9)), Set(7));
    const __mmask8 slow_lanes = listed & static_cast<__mmask8>(~lanes);
    _mm512_storeu_si512(slow + num_slow, _mm512_maskz_compress_epi64(slow_lanes, index));
    num_slow += static_cast<size_t>(__builtin_popcount(slow_lanes));
    const __m512i first8 =
        _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, begin, base, 1);
    const __m512i last8 = _mm512_mask_i64gather_epi64(
        _mm512_setzero_si512(), lanes, _mm512_sub_epi64(_mm512_add_epi64(begin, len), Set(8)), base,
        1);
    const __m512i input_lo = _mm512_xor_si512(first8, bitflip1);
    const __m512i input_hi = _mm512_xor_si512(last8, bitflip2);
    const __m512i fold = Mul128Fold64(input_lo, input_hi);
    __m512i h916 = _mm512_add_epi64(_mm512_add_epi64(len, _mm512_shuffle_epi8(input_lo, bswap)),
                                    _mm512_add_epi64(input_hi, fold));
    h916 = XorShift(_mm512_mullo_epi64(XorShift(h916, 37), prime_avalanche), 32);
    _mm512_mask_i64scatter_epi64(out, lanes, index, h916, 8);
  }

  // The rest: 17-128-byte tokens eight per vector (Hash17To128), the others
  // (empty, longer, or 1-8 bytes ending in the first 8 bytes of the text)
  // through the scalar routine.
  for (size_t j = 0; j < num_slow; j += 8) {
    const __mmask8 lanes = num_slow - j >= 8 ? static_cast<__mmask8>(0xff)
                                             : static_cast<__mmask8>((1u << (num_slow - j)) - 1);
    const __m512i index = _mm512_maskz_loadu_epi64(lanes, slow + j);
    const __m512i word = _mm512_slli_epi64(index, 1);
    const __m512i begin =
        _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes, word, span_words, 8);
    const __m512i len = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes,
                                                    _mm512_add_epi64(word, Set(1)), span_words, 8);
    // 17 <= len <= 128, as len - 17 <= 111 unsigned.
    const __mmask8 long_lanes =
        lanes & _mm512_cmple_epu64_mask(_mm512_sub_epi64(len, Set(17)), Set(111));
    if (long_lanes != 0) {
      _mm512_mask_i64scatter_epi64(out, long_lanes, index,
                                   Hash17To128(base, begin, len, long_lanes, seed), 8);
    }
    __mmask8 scalar_lanes = lanes & static_cast<__mmask8>(~long_lanes);
    while (scalar_lanes != 0) {
      const size_t at =
          static_cast<size_t>(slow[j + static_cast<size_t>(__builtin_ctz(scalar_lanes))]);
      Xxh3SpansScalar(text, spans + at, 1, seed, out + at);
      scalar_lanes &= static_cast<__mmask8>(scalar_lanes - 1);
    }
  }
}

NEARDUP_AVX512_XXH3_TARGET void Xxh3SpansAvx512Impl(std::string_view text, const TokenSpan* spans,
                                                    size_t num_spans, uint64_t seed,
                                                    uint64_t* out) {
  const ShortTables tables = MakeShortTables(seed);
  for (size_t at = 0; at < num_spans; at += kChunk) {
    Xxh3ChunkAvx512(text, spans + at, std::min(kChunk, num_spans - at), seed, tables, out + at);
  }
}

NEARDUP_INTRINSICS_WARNINGS_ON
#endif  // NEARDUP_HAVE_AVX512_XXH3

}  // namespace

void Xxh3SpansAvx512(std::string_view text, const TokenSpan* spans, size_t num_spans, uint64_t seed,
                     uint64_t* out) {
#ifdef NEARDUP_HAVE_AVX512_XXH3
  Xxh3SpansAvx512Impl(text, spans, num_spans, seed, out);
#else
  Xxh3SpansScalar(text, spans, num_spans, seed, out);
#endif
}

}  // namespace neardup::internal
