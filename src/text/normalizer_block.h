// The normalizer's block kernel (text/normalizer.h): normalizes UTF-8 text
// 64 bytes at a time with AVX-512 (F, BW, VBMI, VBMI2), ASCII and 2- and
// 3-byte sequences alike, wherever the text splits into units that need no
// context. normalizer.cc falls back to its code-point loop at the first
// window the kernel cannot finish.
//
// The block table. For a BMP code point X and a choice of (nfkc, case_fold,
// remove_punctuation), BlockTable entry X is nonzero when X is context-free
// (normalizer.cc: it splits the text exactly before it, and alone it is a
// unit when the code point after it is context-free or ASCII) and its
// normalization, with punctuation removed when asked, is no longer than X's
// own UTF-8 sequence. The entry holds that output:
//   bits 0-23:  the output bytes (byte i of the output in bits 8i..8i+7;
//               unused bytes zero),
//   bits 24-26: the output length as a thermometer (bit 24: at least 1 byte,
//               25: at least 2, 26: 3),
//   bit 27:     X < U+0800 (valid as a 2-byte sequence),
//   bit 28:     X >= U+0800 (valid as a 3-byte sequence).
// Entries for surrogates and for code points that are not context-free are
// zero. Bits 27/28 make a code point decoded from an overlong 3-byte form
// (E0 80..9F) fail its test: one gather both validates and normalizes.
//
// Why it is exact: in a window, the kernel decodes every 2- and 3-byte
// sequence and fetches its entry; it commits the window up to the last
// position P such that every code point before P is ASCII or has a usable
// entry, the structure before P is valid UTF-8, and P starts an ASCII
// character or a code point with a usable entry (or is the end of the text).
// Every code point before P is then a unit (what follows it is ASCII or
// context-free), so its output is its table bytes (ASCII: folded, or
// removed when punctuation), and P is a split point again.
//
// Cost: about 30 vector instructions per window when every sequence in it
// is its own output or removed (looked up in bitmaps held in registers,
// BlockTable), about 60 and one or two 16-lane gathers otherwise (up to 32
// multi-byte sequences). Thread safety: pure function.
#ifndef NEARDUP_TEXT_NORMALIZER_BLOCK_H_
#define NEARDUP_TEXT_NORMALIZER_BLOCK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup::internal {

inline constexpr uint32_t kBlockLength1 = uint32_t{1} << 24;
inline constexpr uint32_t kBlockLength2 = uint32_t{1} << 25;
inline constexpr uint32_t kBlockLength3 = uint32_t{1} << 26;
inline constexpr uint32_t kBlockValid2 = uint32_t{1} << 27;
inline constexpr uint32_t kBlockValid3 = uint32_t{1} << 28;

// Output length of a nonzero block table entry.
inline uint32_t BlockEntryLength(uint32_t entry) {
  return ((entry >> 24) & 1) + ((entry >> 25) & 1) + ((entry >> 26) & 1);
}

// The block table with two bitmaps of the code points it leaves unchanged
// (entry output == the code point's own bytes), so that a window whose
// sequences are all unchanged needs no gather: lowercase Latin, Greek and
// Cyrillic letters, most CJK, kana and Hangul.
struct BlockTable {
  std::vector<uint32_t> entries;  // 65536 entries, as above
  // Both bitmaps are indexed by the bytes of a sequence, so that the kernel
  // looks them up in byte lanes at each lead without decoding: with lead
  // byte b0 and second byte b1, byte ((b0 & 0xF) << 3 | (b1 >> 3) & 7) and
  // bit (b1 & 7).
  // identity_low, for 2-byte sequences of cp in [U+0080, U+0480) (leads
  // C2..D1): cp is unchanged. Bit (cp - 0x80) % 8 of byte
  // ((cp - 0x80) / 8 + 16) % 128 (the index above is that rotated by 16).
  std::array<uint8_t, 128> identity_low{};
  // identity_pages, for 3-byte sequences: bit (cp / 64) % 8 of byte
  // cp / 512 is set when the 64 code points from cp & ~63 are all
  // unchanged. Zero below U+0800 (so a code point decoded from an overlong
  // 3-byte form is never in it) and for the surrogate pages.
  std::array<uint8_t, 128> identity_pages{};
  // Per code point, for eight pages that identity_pages cannot hold whole
  // but most text uses: U+2000..U+20FF (quotes, dashes, bullets: the page
  // also holds spaces that NFKC changes) and U+3000..U+30FF (CJK
  // punctuation, hiragana, katakana: also voicing marks that combine),
  // whether the code point is unchanged (special_unchanged) or removed, its
  // output empty (special_removed: punctuation with remove_punctuation).
  // Indexed by the sequence's bytes b0 b1 b2 (E2 or E3, 80..83, any):
  // bit (b2 & 7) of byte (b0 & 1) << 5 | (b1 & 3) << 3 | (b2 >> 3) & 7,
  // that is bit cp % 8 of byte ((cp >> 12) & 1) * 32 + (cp >> 6) % 4 * 8 +
  // cp % 64 / 8.
  std::array<uint8_t, 64> special_unchanged{};
  std::array<uint8_t, 64> special_removed{};
};

// Sets table->identity_low, identity_pages, special_unchanged and
// special_removed from table->entries.
void FillIdentityBitmaps(BlockTable* table);

// Normalizes [p, end) window by window into dst while the windows allow it
// (see above) and returns where it stopped: `end`, or a split point where
// the code point loop must take over (a code point without a usable entry,
// a 4-byte sequence or invalid UTF-8 within the next few bytes). Advances
// *dst past the output written. `table`: the block table for the options. `fold` maps ASCII A-Z to
// a-z; `drop_punctuation` removes ASCII punctuation (the table already holds the rest). REQUIRES:
// TextKernels::block_normalizer (text/text_kernels.h); p is a split point (the start of the text,
// or a position before which the text splits, normalizer.cc); *dst has room for (end - p) + 64
// bytes.
const char* NormalizeBlocksAvx512(const char* p, const char* end, const BlockTable& table,
                                  bool fold, bool drop_punctuation, char** dst);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_NORMALIZER_BLOCK_H_
