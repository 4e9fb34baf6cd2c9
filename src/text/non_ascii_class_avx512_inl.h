// The AVX-512 block kernel of text/non_ascii_class.h as an inline function,
// for the block loop of the tokenizer (token_scan.cc), which inlines it so
// that its constants and tables stay out of the per-block path, and for
// non_ascii_class.cc, whose ClassifyNonAsciiAvx512 is the same code out of
// line (the one the tests call). Private to those two files; x86-64 only.
#ifndef NEARDUP_TEXT_NON_ASCII_CLASS_AVX512_INL_H_
#define NEARDUP_TEXT_NON_ASCII_CLASS_AVX512_INL_H_

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_NON_ASCII_AVX512 1

NEARDUP_INTRINSICS_WARNINGS_OFF
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "text/char_class.h"
#include "text/non_ascii_class.h"
#include "text/utf8.h"

#define NEARDUP_NON_ASCII_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2")))

namespace neardup::internal::non_ascii_avx512 {

constexpr size_t kBlock = 64;

// Bits [from, to) of a 64-bit mask, 0 <= from <= to <= 64.
inline uint64_t BitRange(uint32_t from, uint32_t to) {
  const uint64_t upto = to >= 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  return from >= 64 ? 0 : upto & ~((uint64_t{1} << from) - 1);
}

// The in-register lookup tables of the kWord block kernel, built once from
// the BMP word bitset.
// Invariant: class bytes 0x00 and 0xFF mean the whole page of 256 code
// points is of that class; 1..kSlots name a page copied to slot_bits;
// kGatherPage (any other mixed page) sends the code point to a gather.
constexpr int kSlots = 4;
constexpr uint8_t kGatherPage = 0x80;
// The mixed 3-byte pages most text uses: general punctuation, superscripts
// and currency (U+2000..); CJK punctuation and kana (U+3000..); Devanagari
// (U+0900..); Thai (U+0E00..). Other mixed pages are gathered.
constexpr uint8_t kSlotPages[kSlots] = {0x20, 0x30, 0x09, 0x0E};

struct LookupTables {
  // Bytes 0..255 of the bitset: code points 0..0x7FF, 8 per byte.
  alignas(64) uint8_t two_byte[256];
  alignas(64) uint8_t page_class[256];
  // kSlots pages of 32 bytes.
  alignas(64) uint8_t slot_bits[kSlots * 32];

  // Built from BmpWordBitset().
  LookupTables();
};

// The tables, built on first use. Thread-safe (a function-local static).
const LookupTables& Tables();

// The text's bytes [block + shift, block + shift + 64), those past its end
// (block + available) zero: a plain load where the text is long enough, else
// a masked one, which never reads the masked bytes.
NEARDUP_NON_ASCII_TARGET inline __m512i LoadShifted(const char* block, size_t available,
                                                    size_t shift) {
  if (available >= kBlock + shift) return _mm512_loadu_si512(block + shift);
  if (available <= shift) return _mm512_setzero_si512();
  return _mm512_maskz_loadu_epi8((__mmask64{1} << (available - shift)) - 1, block + shift);
}

NEARDUP_NON_ASCII_TARGET inline __m512i Bytes(int c) {
  return _mm512_set1_epi8(static_cast<char>(c));
}

// Selects bits: (a & mask) | (b & ~mask), bytewise.
NEARDUP_NON_ASCII_TARGET inline __m512i Select(__m512i a, __m512i b, int mask) {
  return _mm512_ternarylogic_epi32(a, b, Bytes(mask), 0xE4);
}

// table[index] for 64 byte indexes into a 256-byte table.
NEARDUP_NON_ASCII_TARGET inline __m512i Lookup256(const uint8_t* table, __m512i index) {
  const __m512i low =
      _mm512_permutex2var_epi8(_mm512_load_si512(table), index, _mm512_load_si512(table + 64));
  const __m512i high = _mm512_permutex2var_epi8(_mm512_load_si512(table + 128), index,
                                                _mm512_load_si512(table + 192));
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high);
}

// The token bits (at the leads) of the well-formed 3-byte code points whose
// leads are the bits of `leads` in the block, from the BMP bitset with
// 32-bit gathers: the pages no slot holds. Out of line and rare; takes no
// vector arguments, so that its callers keep no vectors on the stack.
uint64_t GatherClasses(const char* block, size_t available, uint64_t leads);

// kWhitespace: the token bits from the byte patterns of the White_Space code
// points (see the header). `v1`, `v2`: the block's bytes shifted by 1 and 2.
NEARDUP_NON_ASCII_TARGET inline NonAsciiBlockClass WhitespaceClass(__m512i v, __m512i v1,
                                                                   __m512i v2,
                                                                   uint32_t spill_length) {
  // U+0085, U+00A0: C2 85, C2 A0.
  const __mmask64 c2 = _mm512_cmpeq_epi8_mask(v, Bytes(0xC2));
  const __mmask64 white2 = _mm512_mask_cmpeq_epi8_mask(c2, v1, Bytes(0x85)) |
                           _mm512_mask_cmpeq_epi8_mask(c2, v1, Bytes(0xA0));
  // U+1680: E1 9A 80.
  __mmask64 e1 = _mm512_cmpeq_epi8_mask(v, Bytes(0xE1));
  e1 = _mm512_mask_cmpeq_epi8_mask(e1, v1, Bytes(0x9A));
  // U+2000..U+200A, U+2028, U+2029, U+202F: E2 80 80..8A, E2 80 A8, A9, AF;
  // U+205F: E2 81 9F.
  const __mmask64 e2 = _mm512_cmpeq_epi8_mask(v, Bytes(0xE2));
  const __mmask64 e2_80 = _mm512_mask_cmpeq_epi8_mask(e2, v1, Bytes(0x80));
  const __mmask64 e2_81 = _mm512_mask_cmpeq_epi8_mask(e2, v1, Bytes(0x81));
  // U+3000: E3 80 80.
  __mmask64 e3 = _mm512_cmpeq_epi8_mask(v, Bytes(0xE3));
  e3 = _mm512_mask_cmpeq_epi8_mask(e3, v1, Bytes(0x80));
  // Third bytes: 80 (E1 9A, E2 80, E3 80), 81..8A, A8, A9, AF (E2 80), 9F (E2 81).
  const __mmask64 third_80 = _mm512_cmpeq_epi8_mask(v2, Bytes(0x80));
  const __mmask64 third_81_8a =
      _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v2, Bytes(0x81)), Bytes(0x8A - 0x81 + 1));
  const __mmask64 third_a8_a9 = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v2, Bytes(0xA8)), Bytes(2));
  const __mmask64 third_af = _mm512_cmpeq_epi8_mask(v2, Bytes(0xAF));
  const __mmask64 third_9f = _mm512_cmpeq_epi8_mask(v2, Bytes(0x9F));
  const __mmask64 white3 = ((e1 | e2_80 | e3) & third_80) |
                           (e2_80 & (third_81_8a | third_a8_a9 | third_af)) | (e2_81 & third_9f);
  const __mmask64 white = white2 | (white2 << 1) | white3 | (white3 << 1) | (white3 << 2);
  NonAsciiBlockClass result;
  result.token_bits = _mm512_movepi8_mask(v) & ~white & ~BitRange(0, spill_length);
  // A White_Space code point that runs past the block: its bytes in the next
  // block are not in a token. Any other unit that runs past the end has its
  // bytes there in a token, which they also are as continuation bytes
  // classified on their own (an invalid subpart is in a token), so the spill
  // is left 0 for them.
  if ((white2 | white3) >> 62 != 0) {
    result.spill_length = static_cast<uint32_t>(white2 >> 63) +
                          static_cast<uint32_t>(white3 >> 63) * 2 +
                          static_cast<uint32_t>((white3 >> 62) & 1);
    result.spill_in_token = false;
  }
  return result;
}

template <bool kWord>
NEARDUP_NON_ASCII_TARGET __attribute__((always_inline)) inline bool ClassifyBlock(
    const char* block, size_t available, uint32_t spill_length, const LookupTables& tables,
    NonAsciiBlockClass* out) {
  NEARDUP_DCHECK(available >= 1 && spill_length <= 3 && spill_length < available);
  // The block and the block shifted by one and two bytes (each code point's
  // lead, second and third byte in the lead's lane); bytes past the text are
  // zero (ASCII).
  const __m512i v = LoadShifted(block, available, 0);
  const __m512i v1 = LoadShifted(block, available, 1);
  if constexpr (!kWord) {
    *out = WhitespaceClass(v, v1, LoadShifted(block, available, 2), spill_length);
    return true;
  }
  // Bytes 64..66, for the continuation bytes of a code point that runs past
  // the block.
  __m512i next = _mm512_setzero_si512();
  if (available > kBlock) {
    const size_t more = available - kBlock;
    next = _mm512_maskz_loadu_epi8((__mmask64{1} << (more < 3 ? more : 3)) - 1, block + kBlock);
  }

  // Well-formedness (utf8.h, Table 3-7): the continuation bytes 80..BF are
  // exactly those the leads C2..F4 (and the previous block's spill) call
  // for; the ones past the block that the leads call for are there; the
  // second bytes after E0, ED, F0 and F4 are in their narrower ranges. The
  // bytes C0, C1, F5..FF need no test: each is a one-byte invalid subpart
  // outside any token in ForEachRun, and gets no token bit here either; a
  // continuation byte after one is called for by no lead, so the block is
  // declined.
  const uint64_t cont = _mm512_cmplt_epi8_mask(v, Bytes(0xC0));  // signed: 80..BF
  const uint64_t lead =
      _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, Bytes(0xC2)), Bytes(0xF4 - 0xC2 + 1));
  const uint64_t lead34 = lead & _mm512_cmpge_epu8_mask(v, Bytes(0xE0));
  const uint64_t lead4 = lead & _mm512_cmpge_epu8_mask(v, Bytes(0xF0));
  const uint64_t wanted = BitRange(0, spill_length) | (lead << 1) | (lead34 << 2) | (lead4 << 3);
  const uint64_t wanted_next = (lead >> 63) | (lead34 >> 62) | (lead4 >> 61);
  const uint64_t cont_next = _mm512_cmplt_epi8_mask(next, Bytes(0xC0)) & 7;
  // Second bytes: E0 A0..BF, ED 80..9F, F0 90..BF, F4 80..8F (no test for
  // blocks of 2-byte code points only: Latin, Greek, Cyrillic text).
  uint64_t bad_second = 0;
  uint64_t segment_lead_bytes = 0;
  if (lead34 != 0) {
    // IsSegmentLeadByte (text/script_segments.h): E0 E1 E3..EA EF F0.
    const __mmask64 not_segment =
        _mm512_cmpeq_epi8_mask(v, Bytes(0xE2)) |
        _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, Bytes(0xEB)), Bytes(4)) |
        _mm512_cmpgt_epu8_mask(v, Bytes(0xF0));
    segment_lead_bytes = lead34 & ~not_segment;
    const __mmask64 e0 = _mm512_cmpeq_epi8_mask(v, Bytes(0xE0));
    const __mmask64 ed = _mm512_cmpeq_epi8_mask(v, Bytes(0xED));
    const __mmask64 f0 = _mm512_cmpeq_epi8_mask(v, Bytes(0xF0));
    const __mmask64 f4 = _mm512_cmpeq_epi8_mask(v, Bytes(0xF4));
    bad_second = _mm512_mask_cmplt_epu8_mask(e0, v1, Bytes(0xA0)) |
                 _mm512_mask_cmpgt_epu8_mask(ed, v1, Bytes(0x9F)) |
                 _mm512_mask_cmplt_epu8_mask(f0, v1, Bytes(0x90)) |
                 _mm512_mask_cmpgt_epu8_mask(f4, v1, Bytes(0x8F));
  }
  if (cont != wanted || (wanted_next & ~cont_next) != 0 || bad_second != 0) {
    return false;
  }

  // The 2- and 3-byte code points, classified in place: every byte lane
  // computes the lookup as if a lead stood there, and the leads' lanes are
  // kept. The byte shifts are 16-bit shifts whose bits from the neighbouring
  // byte the select masks drop.
  const uint64_t lead23 = lead & ~lead4;
  const uint64_t lead3 = lead34 & ~lead4;
  // 2 bytes: 110xxxxx 10yyyyyy, code point xxxxxyyyyyy < 0x800: byte
  // xxxxxyyy of the bitset, bit yyy.
  const __m512i two_index = Select(_mm512_slli_epi16(v, 3), _mm512_srli_epi16(v1, 3), 0xF8);
  __m512i class_byte = Lookup256(tables.two_byte, two_index);
  // The bit to test is the low three bits of the code point's last byte.
  __m512i last = v1;
  uint64_t gather = 0;
  __m512i v2 = v1;
  if (lead3 != 0) {
    v2 = LoadShifted(block, available, 2);
    // 3 bytes: 1110xxxx 10yyyyyy 10zzzzzz: page xxxxyyyy (code point >> 8),
    // whose class byte is all ones or zeros when the whole page is one
    // class, else a slot of the in-register pages (1..kSlots) or
    // kGatherPage.
    const __m512i page = Select(_mm512_slli_epi16(v, 4), _mm512_srli_epi16(v1, 2), 0xF0);
    const __m512i page_class = Lookup256(tables.page_class, page);
    gather = _mm512_mask_cmpeq_epi8_mask(lead3, page_class, Bytes(kGatherPage));
    const uint64_t slotted =
        _mm512_mask_cmplt_epu8_mask(lead3, _mm512_sub_epi8(page_class, Bytes(1)), Bytes(kSlots));
    // In a slot: byte (slot << 5) | yyzzz of the slot table, bit zzz.
    const __m512i in_page = _mm512_and_si512(
        Select(_mm512_slli_epi16(v1, 3), _mm512_srli_epi16(v2, 3), 0x18), Bytes(0x1F));
    const __m512i slot_index =
        Select(_mm512_slli_epi16(_mm512_sub_epi8(page_class, Bytes(1)), 5), in_page, 0x60);
    const __m512i slot_byte = _mm512_permutex2var_epi8(
        _mm512_load_si512(tables.slot_bits), slot_index, _mm512_load_si512(tables.slot_bits + 64));
    __m512i three_byte = _mm512_maskz_mov_epi8(~gather, page_class);
    three_byte = _mm512_mask_mov_epi8(three_byte, slotted, slot_byte);
    class_byte = _mm512_mask_mov_epi8(class_byte, lead3, three_byte);
    last = _mm512_mask_mov_epi8(v1, lead3, v2);
  }
  const __m512i bit =
      _mm512_shuffle_epi8(_mm512_set1_epi64(static_cast<long long>(0x8040201008040201ULL)),
                          _mm512_and_si512(last, Bytes(7)));
  uint64_t token_leads = _mm512_mask_test_epi8_mask(lead23, class_byte, bit);
  if (gather != 0) token_leads |= GatherClasses(block, available, gather);
  NonAsciiBlockClass result;
  result.token_bits = token_leads | (token_leads << 1) | ((token_leads & lead3) << 2);
  // The code point that runs past the block, if any, without a branch (CJK
  // text has one in most blocks): a lead at 63 leaves 1 (2-byte) or 2
  // (3-byte) bytes, a 3-byte lead at 62 leaves 1 (well-formed, at most one of
  // these holds). Its class is that of byte 63, which it covers.
  result.spill_length = static_cast<uint32_t>((lead23 >> 63) + (lead3 >> 63) + ((lead3 >> 62) & 1));
  result.spill_in_token = (result.token_bits >> 63) != 0;
  // Code points above the BMP (emoji, CJK extension B, ...): rare; one scalar
  // lookup each, their bytes known to be well-formed.
  for (uint64_t rest = lead4; rest != 0; rest &= rest - 1) {
    const auto at = static_cast<uint32_t>(__builtin_ctzll(rest));
    const DecodedCodePoint d = DecodeUtf8(block + at, block + available);
    const uint32_t stop = at + 4;
    if (IsNonAsciiWordCodePoint(d.code_point)) {
      result.token_bits |= BitRange(at, stop > kBlock ? static_cast<uint32_t>(kBlock) : stop);
    }
    if (stop > kBlock) {
      result.spill_length = stop - static_cast<uint32_t>(kBlock);
      result.spill_in_token = IsNonAsciiWordCodePoint(d.code_point);
    }
  }
  // Only leads of code points in tokens (4-byte ones included, so after
  // the loop above): U+FFFD (lead EF), which repaired 8-bit mail text is
  // full of, is not a word character.
  result.segment_leads = (segment_lead_bytes & result.token_bits) != 0;
  *out = result;
  return true;
}

}  // namespace neardup::internal::non_ascii_avx512

NEARDUP_INTRINSICS_WARNINGS_ON

#endif  // x86-64

#endif  // NEARDUP_TEXT_NON_ASCII_CLASS_AVX512_INL_H_
