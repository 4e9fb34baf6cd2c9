#include "text/non_ascii_class.h"

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/non_ascii_class_avx512_inl.h"
#include "text/script_segments.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

constexpr size_t kBlock = 64;

// Bits [from, to) of a 64-bit mask, 0 <= from <= to <= 64.
inline uint64_t BitRange(uint32_t from, uint32_t to) {
  const uint64_t upto = to >= 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  return from >= 64 ? 0 : upto & ~((uint64_t{1} << from) - 1);
}

// The class ForEachRun gives a decoded unit (code point or invalid subpart);
// `word_bits` is BmpWordBitset(), fetched once per block.
inline bool InToken(bool word, const uint64_t* word_bits, const DecodedCodePoint& d) {
  if (!word) return !d.valid || !IsUnicodeWhiteSpace(d.code_point);
  if (!d.valid) return false;
  if (d.code_point < 0x10000) return (word_bits[d.code_point / 64] >> (d.code_point % 64)) & 1;
  return IsNonAsciiWordCodePoint(d.code_point);
}

}  // namespace

NonAsciiBlockClass ClassifyNonAsciiScalar(bool word, const char* block, size_t available,
                                          uint64_t high) {
  NonAsciiBlockClass result;
  const char* const end = block + available;
  const uint64_t* const word_bits = word ? BmpWordBitset() : nullptr;
  while (high != 0) {
    const auto i = static_cast<uint32_t>(__builtin_ctzll(high));
    const DecodedCodePoint d = DecodeUtf8(block + i, end);
    const bool in_token = InToken(word, word_bits, d);
    result.segment_leads |= in_token && IsSegmentLeadByte(static_cast<unsigned char>(block[i]));
    const uint32_t stop = i + d.length;
    const uint64_t bits = BitRange(i, stop > kBlock ? kBlock : stop);
    if (in_token) result.token_bits |= bits;
    high &= ~bits;
    if (stop > kBlock) {
      result.spill_length = stop - kBlock;
      result.spill_in_token = in_token;
    }
  }
  return result;
}

#ifdef NEARDUP_HAVE_NON_ASCII_AVX512

namespace non_ascii_avx512 {

LookupTables::LookupTables() {
  const auto* bits = reinterpret_cast<const uint8_t*>(BmpWordBitset());
  for (int i = 0; i < 256; ++i) two_byte[i] = bits[i];
  for (int page = 0; page < 256; ++page) {
    bool all = true;
    bool none = true;
    for (int i = 0; i < 32; ++i) {
      all = all && bits[page * 32 + i] == 0xFF;
      none = none && bits[page * 32 + i] == 0;
    }
    page_class[page] = all ? 0xFF : none ? 0 : kGatherPage;
  }
  for (int slot = 0; slot < kSlots; ++slot) {
    const int page = kSlotPages[slot];
    for (int i = 0; i < 32; ++i) slot_bits[slot * 32 + i] = bits[page * 32 + i];
    if (page_class[page] == kGatherPage) page_class[page] = static_cast<uint8_t>(slot + 1);
  }
}

const LookupTables& Tables() {
  static const LookupTables tables;
  return tables;
}

namespace {

// GatherClasses for the lanes of `mask` among the 16 lowest byte lanes.
NEARDUP_NON_ASCII_TARGET __mmask16 GatherSixteen(__m512i b0, __m512i b1, __m512i b2,
                                                 __mmask16 mask) {
  const __m512i low6 = _mm512_set1_epi32(0x3F);
  const auto* bitset = reinterpret_cast<const int*>(BmpWordBitset());
  const __m512i w0 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(b0));
  const __m512i w1 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(b1));
  const __m512i w2 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(b2));
  // 1110xxxx 10yyyyyy 10zzzzzz -> xxxxyyyyyyzzzzzz.
  const __m512i cp = _mm512_or_si512(
      _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w0, _mm512_set1_epi32(0x0F)), 12),
                      _mm512_slli_epi32(_mm512_and_si512(w1, low6), 6)),
      _mm512_and_si512(w2, low6));
  const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask,
                                                    _mm512_srli_epi32(cp, 5), bitset, 4);
  return _mm512_mask_test_epi32_mask(
      mask, _mm512_srlv_epi32(words, _mm512_and_si512(cp, _mm512_set1_epi32(31))),
      _mm512_set1_epi32(1));
}

}  // namespace

NEARDUP_NON_ASCII_TARGET uint64_t GatherClasses(const char* block, size_t available,
                                                uint64_t leads) {
  // At most 21 leads (3 bytes each): their bytes compressed into the low
  // lanes, 16 per gather.
  const __m512i b0 = _mm512_maskz_compress_epi8(leads, LoadShifted(block, available, 0));
  const __m512i b1 = _mm512_maskz_compress_epi8(leads, LoadShifted(block, available, 1));
  const __m512i b2 = _mm512_maskz_compress_epi8(leads, LoadShifted(block, available, 2));
  const uint64_t lanes = (uint64_t{1} << __builtin_popcountll(leads)) - 1;
  uint64_t classes = GatherSixteen(b0, b1, b2, static_cast<__mmask16>(lanes));
  if ((lanes >> 16) != 0) {
    // Lanes 16..31 moved down to 0..15.
    const __m512i zero = _mm512_setzero_si512();
    classes |= static_cast<uint64_t>(GatherSixteen(
                   _mm512_alignr_epi32(zero, b0, 4), _mm512_alignr_epi32(zero, b1, 4),
                   _mm512_alignr_epi32(zero, b2, 4), static_cast<__mmask16>(lanes >> 16)))
               << 16;
  }
  return _pdep_u64(classes, leads);
}

}  // namespace non_ascii_avx512

NEARDUP_NON_ASCII_TARGET bool ClassifyNonAsciiAvx512(bool word, const char* block, size_t available,
                                                     uint32_t spill_length,
                                                     NonAsciiBlockClass* out) {
  const non_ascii_avx512::LookupTables& tables = non_ascii_avx512::Tables();
  return word ? non_ascii_avx512::ClassifyBlock<true>(block, available, spill_length, tables, out)
              : non_ascii_avx512::ClassifyBlock<false>(block, available, spill_length, tables, out);
}

#else

bool ClassifyNonAsciiAvx512(bool, const char*, size_t, uint32_t, NonAsciiBlockClass*) {
  NEARDUP_CHECK(false) << "ClassifyNonAsciiAvx512 needs an x86-64 build";
  return false;
}

#endif

}  // namespace neardup::internal
