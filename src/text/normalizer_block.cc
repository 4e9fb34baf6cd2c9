#include "text/normalizer_block.h"

#include <array>

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "text/char_class.h"

namespace neardup::internal {

void FillIdentityBitmaps(BlockTable* table) {
  auto unchanged = [&](uint32_t cp) {
    const uint32_t entry = table->entries[cp];
    if (entry == 0) return false;
    const uint32_t length = cp < 0x800 ? 2 : 3;
    const uint32_t bytes = length == 2 ? (0xC0 | (cp >> 6)) | (0x80 | (cp & 0x3F)) << 8
                                       : (0xE0 | (cp >> 12)) | (0x80 | ((cp >> 6) & 0x3F)) << 8 |
                                             (0x80 | (cp & 0x3F)) << 16;
    return BlockEntryLength(entry) == length && (entry & 0xFFFFFF) == bytes;
  };
  table->identity_low.fill(0);
  table->identity_pages.fill(0);
  for (uint32_t cp = 0x80; cp < 0x480; ++cp) {
    const uint32_t offset = cp - 0x80;
    if (unchanged(cp)) {
      table->identity_low[(offset / 8 + 16) % 128] |= static_cast<uint8_t>(1u << (offset % 8));
    }
  }
  for (uint32_t page = 0x800 / 64; page < 0x10000 / 64; ++page) {
    bool all = true;
    for (uint32_t cp = page * 64; cp < page * 64 + 64 && all; ++cp) all = unchanged(cp);
    if (all) table->identity_pages[page / 8] |= static_cast<uint8_t>(1u << (page % 8));
  }
  table->special_unchanged.fill(0);
  table->special_removed.fill(0);
  for (uint32_t base : {0x2000u, 0x3000u}) {
    for (uint32_t cp = base; cp < base + 0x100; ++cp) {
      const uint32_t entry = table->entries[cp];
      const uint32_t byte = ((cp >> 12) & 1) * 32 + (cp >> 6) % 4 * 8 + cp % 64 / 8;
      const auto bit = static_cast<uint8_t>(1u << (cp % 8));
      if (unchanged(cp)) table->special_unchanged[byte] |= bit;
      if (entry != 0 && (entry & kBlockValid3) != 0 && BlockEntryLength(entry) == 0) {
        table->special_removed[byte] |= bit;
      }
    }
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
NEARDUP_INTRINSICS_WARNINGS_OFF

namespace {

// 1 for ASCII P*, as the normalizer's byte table.
constexpr std::array<uint8_t, 128> kAsciiPunctuationByte = [] {
  std::array<uint8_t, 128> table{};
  for (int c = 0; c < 128; ++c) table[c] = (kAsciiClass[c] & kAsciiPunctuationBit) != 0;
  return table;
}();

// vpermt2b indices over two vectors of 16 gathered entries each: lane i gets
// byte `byte` of entry i (entries 16..31 come from the second vector).
constexpr std::array<uint8_t, 64> EntryByteIndex(int byte) {
  std::array<uint8_t, 64> index{};
  for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>((4 * (i & 31) + byte) & 127);
  return index;
}
constexpr std::array<uint8_t, 64> kEntryByte0 = EntryByteIndex(0);
constexpr std::array<uint8_t, 64> kEntryByte1 = EntryByteIndex(1);
constexpr std::array<uint8_t, 64> kEntryByte2 = EntryByteIndex(2);
constexpr std::array<uint8_t, 64> kEntryByte3 = EntryByteIndex(3);

// vpermb table: kBitOfLow3[b] = 1 << (b & 7), the bit a second byte b
// selects in its identity bitmap byte (BlockTable).
constexpr std::array<uint8_t, 64> kBitOfLow3 = [] {
  std::array<uint8_t, 64> table{};
  for (int i = 0; i < 64; ++i) table[i] = static_cast<uint8_t>(1u << (i & 7));
  return table;
}();

constexpr size_t kPrefetchDistance = 1024;

#define NEARDUP_BLOCK_TARGET                                                    \
  __attribute__((                                                               \
      target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,lzcnt," \
             "popcnt")))

NEARDUP_BLOCK_TARGET inline __m512i Load(const std::array<uint8_t, 64>& bytes) {
  return _mm512_loadu_si512(bytes.data());
}

// Positions 0..bit (inclusive) of a 64-bit mask. REQUIRES: bit < 64.
inline uint64_t UpTo(unsigned bit) { return ~uint64_t{0} >> (63 - bit); }

// The bytes a window of n bytes commits: all of them when nothing in it is a
// problem and the text splits after it (split_after), else up to the last
// split point (a set bit of `splittable`) at or before the first problem
// (64: none); 0 when there is none.
NEARDUP_BLOCK_TARGET inline unsigned CutAt(unsigned first_problem, uint64_t splittable, size_t n,
                                           bool split_after) {
  if (first_problem == 64 && split_after) return static_cast<unsigned>(n);
  const uint64_t candidates =
      splittable & (first_problem == 64 ? ~uint64_t{0} : UpTo(first_problem));
  return candidates != 0 ? 63 - static_cast<unsigned>(_lzcnt_u64(candidates)) : 0;
}

}  // namespace

namespace {

// The kernel for one choice of (fold, drop_punctuation): compile-time flags
// keep the per-window branches and their constants out of the loop.
template <bool kFold, bool kDropPunctuation>
NEARDUP_BLOCK_TARGET const char* NormalizeBlocks(const char* p, const char* end,
                                                 const BlockTable& table, char** dst) {
  const uint32_t* const entries = table.entries.data();
  const __m512i identity_low_a = _mm512_loadu_si512(table.identity_low.data());
  const __m512i identity_low_b = _mm512_loadu_si512(table.identity_low.data() + 64);
  const __m512i identity_pages_a = _mm512_loadu_si512(table.identity_pages.data());
  const __m512i identity_pages_b = _mm512_loadu_si512(table.identity_pages.data() + 64);
  const __m512i bit_of_low3 = Load(kBitOfLow3);
  const __m512i special_unchanged = _mm512_loadu_si512(table.special_unchanged.data());
  const __m512i special_removed = _mm512_loadu_si512(table.special_removed.data());
  const __m512i punct_lo = _mm512_loadu_si512(kAsciiPunctuationByte.data());
  const __m512i punct_hi = _mm512_loadu_si512(kAsciiPunctuationByte.data() + 64);
  const __m512i entry_byte0 = Load(kEntryByte0);
  const __m512i entry_byte1 = Load(kEntryByte1);
  const __m512i entry_byte2 = Load(kEntryByte2);
  const __m512i entry_byte3 = Load(kEntryByte3);
  const __m512i low6 = _mm512_set1_epi16(0x3F);
  char* out = *dst;
  while (p < end) {
    const size_t remaining = static_cast<size_t>(end - p);
    if (remaining > kPrefetchDistance) _mm_prefetch(p + kPrefetchDistance, _MM_HINT_T0);
    const size_t n = remaining < 64 ? remaining : 64;
    const uint64_t valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(valid, p);  // never reads past the end
    const uint64_t high = _mm512_movepi8_mask(v);
    const uint64_t ascii = valid & ~high;
    // Whether the text splits right after the window (its end, or ASCII).
    const bool split_after = n < 64 || remaining == 64 || static_cast<signed char>(p[64]) >= 0;

    // The ASCII bytes' output: folded, punctuation not kept. Bytes >= 0x80
    // are never in 'A'..'Z'; their punctuation lookups are masked off.
    __m512i bytes = v;
    if constexpr (kFold) {
      const __mmask64 upper =
          _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('A')), _mm512_set1_epi8(26));
      bytes = _mm512_mask_add_epi8(bytes, upper, bytes, _mm512_set1_epi8(0x20));
    }
    uint64_t keep = ascii;
    if constexpr (kDropPunctuation) {
      const __m512i punct = _mm512_permutex2var_epi8(punct_lo, v, punct_hi);
      keep &= _mm512_testn_epi8_mask(punct, punct);
    }

    // cut: the bytes this window commits; p + cut is a split point.
    unsigned cut;
    if (high == 0) {
      cut = split_after ? static_cast<unsigned>(n) : static_cast<unsigned>(n) - 1;
    } else {
      const uint64_t cont =
          _mm512_mask_cmplt_epu8_mask(high, v, _mm512_set1_epi8(static_cast<char>(0xC0)));
      const uint64_t lead2 = _mm512_cmplt_epu8_mask(
          _mm512_sub_epi8(v, _mm512_set1_epi8(static_cast<char>(0xC2))), _mm512_set1_epi8(30));
      const uint64_t lead3 = _mm512_cmplt_epu8_mask(
          _mm512_sub_epi8(v, _mm512_set1_epi8(static_cast<char>(0xE0))), _mm512_set1_epi8(16));
      // Sequences whose bytes all lie in the window.
      const uint64_t lead2_in = lead2 & (valid >> 1);
      const uint64_t lead3_in = lead3 & (valid >> 2);
      const uint64_t claimed = ((lead2_in | lead3_in) << 1) | (lead3_in << 2);
      const uint64_t missing = claimed & ~cont;
      // Where the structure may be broken (or cannot be checked here): C0,
      // C1, F0..FF (4-byte forms take the code point loop), a continuation
      // byte no lead claims, a lead whose claimed bytes are not all
      // continuation bytes (marked at or before the lead), a sequence that
      // runs past the window. Everything before the first such position is
      // well-formed 2- and 3-byte sequences and ASCII.
      const uint64_t broken = (high & ~cont & ~lead2 & ~lead3) | (cont & ~claimed) |
                              (missing >> 1) | (missing >> 2) | (lead2 & ~lead2_in) |
                              (lead3 & ~lead3_in);
      const unsigned first_problem = broken != 0 ? static_cast<unsigned>(_tzcnt_u64(broken)) : 64;
      const uint64_t leads =
          (lead2_in | lead3_in) & (first_problem == 64 ? ~uint64_t{0} : UpTo(first_problem) >> 1);
      // The cut as if every sequence had a usable entry: it depends on the
      // bytes only, so the next window's loads need not wait for this
      // window's gather. Checked below (a sequence without one, at or before
      // the cut, is rare).
      cut = CutAt(first_problem, ascii | leads, n, split_after);
      if (leads != 0) {
        const uint64_t lead3_used = lead3_in & leads;
        // Unchanged sequences (BlockTable's bitmaps), looked up in byte
        // lanes at every lead from its first and second byte, before any
        // decoding: windows of lowercase Latin/Greek/Cyrillic, CJK, kana or
        // Hangul text (most windows of such text) are then copied as they
        // are. The second byte of each lead (leads lie before the window's
        // last byte) is at the same lane of a load one byte on.
        const __m512i second = _mm512_maskz_loadu_epi8(valid >> 1, p + 1);
        // Lane bits 3-6: the lead's low four bits; bits 0-2: the second
        // byte's bits 3-5 (16-bit shifts: the bits they carry across bytes
        // are masked off, and bit 7 is ignored by vpermi2b).
        const __m512i bitmap_index = _mm512_ternarylogic_epi32(
            _mm512_slli_epi16(v, 3), _mm512_srli_epi16(second, 3), _mm512_set1_epi8(0x78), 0xE4);
        const __m512i bit = _mm512_permutexvar_epi8(second, bit_of_low3);
        const uint64_t unchanged_leads =
            (_mm512_test_epi8_mask(
                 _mm512_permutex2var_epi8(identity_low_a, bitmap_index, identity_low_b), bit) &
             _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(static_cast<char>(0xD1))) & lead2_in) |
            (_mm512_test_epi8_mask(
                 _mm512_permutex2var_epi8(identity_pages_a, bitmap_index, identity_pages_b), bit) &
             lead3_used);
        // The rest may be in the special pages (E2 or E3, then 80..83).
        uint64_t copied_leads = unchanged_leads;
        uint64_t removed_leads = 0;
        const uint64_t rest = leads & ~unchanged_leads;
        if (rest != 0 &&
            (rest & ~(lead3_used &
                      _mm512_cmpeq_epi8_mask(
                          _mm512_and_si512(second, _mm512_set1_epi8(static_cast<char>(0xFC))),
                          _mm512_set1_epi8(static_cast<char>(0x80))) &
                      _mm512_cmpeq_epi8_mask(
                          _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xFE))),
                          _mm512_set1_epi8(static_cast<char>(0xE2))))) == 0) {
          const __m512i third = _mm512_maskz_loadu_epi8(valid >> 2, p + 2);
          // Lane bit 5: the lead's bit 0; bits 3-4: the second byte's bits
          // 0-1; bits 0-2: the third byte's bits 3-5 (bits 6-7 carry junk
          // from the 16-bit shifts: vpermb ignores them).
          const __m512i low5 =
              _mm512_ternarylogic_epi32(_mm512_slli_epi16(second, 3), _mm512_srli_epi16(third, 3),
                                        _mm512_set1_epi8(0x18), 0xE4);
          const __m512i special_index = _mm512_ternarylogic_epi32(_mm512_slli_epi16(v, 5), low5,
                                                                  _mm512_set1_epi8(0x20), 0xE4);
          const __m512i third_bit = _mm512_permutexvar_epi8(third, bit_of_low3);
          copied_leads |=
              _mm512_test_epi8_mask(_mm512_permutexvar_epi8(special_index, special_unchanged),
                                    third_bit) &
              rest;
          removed_leads = _mm512_test_epi8_mask(
                              _mm512_permutexvar_epi8(special_index, special_removed), third_bit) &
                          rest;
        }
        if ((leads & ~(copied_leads | removed_leads)) == 0) {
          // Every sequence stays as it is or is removed: no decoding, no
          // gather.
          const uint64_t kept = leads & ~removed_leads;
          keep |= kept | kept << 1 | (kept & lead3_used) << 2;
        } else {
          // At most 32 sequences (each at least 2 bytes): packed in lead order.
          const uint64_t is3 = _pext_u64(lead3_used, leads);
          const unsigned count = static_cast<unsigned>(_mm_popcnt_u64(leads));
          const __m512i b0 = _mm512_maskz_compress_epi8(leads, v);
          // Every lead's second byte follows it: the same order as the leads.
          const __m512i b1 = _mm512_maskz_compress_epi8(leads, second);
          const __m512i b2 =
              _mm512_maskz_compress_epi8(leads, _mm512_maskz_loadu_epi8(valid >> 2, p + 2));
          const __m512i w0 = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(b0));
          const __m512i w1 =
              _mm512_and_si512(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(b1)), low6);
          const __m512i w2 =
              _mm512_and_si512(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(b2)), low6);
          const __m512i cp2 = _mm512_or_si512(
              _mm512_slli_epi16(_mm512_and_si512(w0, _mm512_set1_epi16(0x1F)), 6), w1);
          // 16-bit lanes drop the lead's 0xE0 bits.
          const __m512i cp3 = _mm512_or_si512(
              _mm512_or_si512(_mm512_slli_epi16(w0, 12), _mm512_slli_epi16(w1, 6)), w2);
          const __m512i cp = _mm512_mask_blend_epi16(static_cast<__mmask32>(is3), cp2, cp3);
          const uint64_t lanes = (uint64_t{1} << count) - 1;
          // Lanes past `count` hold code point 0, whose entry is 0. Most
          // windows of Latin text have at most four sequences: a 4-lane gather.
          const __m512i index0 = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(cp));
          __m512i g0;
          __m512i g1 = _mm512_setzero_si512();
          if (count <= 4) {
            g0 = _mm512_zextsi128_si512(_mm_i32gather_epi32(reinterpret_cast<const int*>(entries),
                                                            _mm512_castsi512_si128(index0), 4));
          } else {
            g0 = _mm512_i32gather_epi32(index0, entries, 4);
            if (count > 16) {
              g1 = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(cp, 1)),
                                          entries, 4);
            }
          }
          const __m512i flags = _mm512_permutex2var_epi8(g0, entry_byte3, g1);
          const uint64_t usable =
              ((_mm512_test_epi8_mask(flags,
                                      _mm512_set1_epi8(static_cast<char>(kBlockValid2 >> 24))) &
                ~is3) |
               (_mm512_test_epi8_mask(flags,
                                      _mm512_set1_epi8(static_cast<char>(kBlockValid3 >> 24))) &
                is3)) &
              lanes;
          const uint64_t usable_leads = _pdep_u64(usable, leads);
          const uint64_t unusable = leads & ~usable_leads;
          if ((unusable & (cut >= 64 ? ~uint64_t{0} : UpTo(cut))) != 0) {
            const auto first_unusable = static_cast<unsigned>(_tzcnt_u64(unusable));
            cut = CutAt(first_unusable < first_problem ? first_unusable : first_problem,
                        ascii | usable_leads, n, split_after);
          }
          // The output bytes in place of each sequence's bytes; the bytes past
          // its output length are not kept.
          bytes =
              _mm512_mask_expand_epi8(bytes, leads, _mm512_permutex2var_epi8(g0, entry_byte0, g1));
          bytes = _mm512_mask_expand_epi8(bytes, leads << 1,
                                          _mm512_permutex2var_epi8(g0, entry_byte1, g1));
          bytes = _mm512_mask_expand_epi8(
              bytes, lead3_used << 2,
              _mm512_maskz_compress_epi8(is3, _mm512_permutex2var_epi8(g0, entry_byte2, g1)));
          keep |= _pdep_u64(_mm512_test_epi8_mask(
                                flags, _mm512_set1_epi8(static_cast<char>(kBlockLength1 >> 24))),
                            leads) |
                  _pdep_u64(_mm512_test_epi8_mask(
                                flags, _mm512_set1_epi8(static_cast<char>(kBlockLength2 >> 24))),
                            leads)
                      << 1 |
                  _pdep_u64(_mm512_test_epi8_mask(
                                flags, _mm512_set1_epi8(static_cast<char>(kBlockLength3 >> 24))),
                            leads)
                      << 2;
        }
      }
    }
    if (cut == 0) break;
    keep &= cut == 64 ? ~uint64_t{0} : (uint64_t{1} << cut) - 1;
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(keep, bytes));
    out += _mm_popcnt_u64(keep);
    p += cut;
  }
  *dst = out;
  return p;
}

}  // namespace

NEARDUP_BLOCK_TARGET const char* NormalizeBlocksAvx512(const char* p, const char* end,
                                                       const BlockTable& table, bool fold,
                                                       bool drop_punctuation, char** dst) {
  if (fold) {
    return drop_punctuation ? NormalizeBlocks<true, true>(p, end, table, dst)
                            : NormalizeBlocks<true, false>(p, end, table, dst);
  }
  return drop_punctuation ? NormalizeBlocks<false, true>(p, end, table, dst)
                          : NormalizeBlocks<false, false>(p, end, table, dst);
}

NEARDUP_INTRINSICS_WARNINGS_ON

#else

const char* NormalizeBlocksAvx512(const char* p, const char*, const uint32_t*, bool, bool, char**) {
  return p;
}

#endif

}  // namespace neardup::internal
