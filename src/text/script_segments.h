// Script segmentation: the step of the word tokenizer (text/tokenizer.h,
// recipe field segment_scripts, recipe version 2) that cuts the scripts
// written without spaces into units, the way the Unicode word-boundary rules
// (UAX #29) and search engines do:
// - each Han ideograph (U+3005..U+3007, U+3021..U+3029, U+3038..U+303B,
//   U+3400..U+4DBF, U+4E00..U+9FFF, U+F900..U+FAFF, U+20000..U+3FFFF), each
//   Hiragana (U+3040..U+309F) and each Bopomofo (U+3100..U+312F,
//   U+31A0..U+31BF) character is its own token;
// - a run of Katakana (U+30A0..U+30FF with the prolonged sound mark U+30FC,
//   U+31F0..U+31FF, half-width U+FF66..U+FF9F) is one token (UAX #29 WB13);
// - Thai (U+0E00..U+0E7F), Lao (U+0E80..U+0EFF), Myanmar (U+1000..U+109F,
//   U+A9E0..U+A9FF, U+AA60..U+AA7F) and Khmer (U+1780..U+17FF,
//   U+19E0..U+19FF), where words need a dictionary: the documented fallback is
//   one token per character, a base letter with the combining marks that
//   follow it (so a Thai syllable's vowel and tone marks stay with their
//   consonant);
// - everything else (Latin, Cyrillic, Hangul, digits, ...) stays as the word
//   tokenizer cut it, except that a run stops where one of the above begins.
// A combining mark (general category M*) never starts a token: it belongs to
// the character before it. Shingles of these single-character tokens act as
// character n-grams, the measure that works for near-duplicates in these
// scripts (docs/RECIPES.md: why characters and not Lucene's bigrams).
//
// Every code point that is cut here has a UTF-8 lead byte in
// IsSegmentLeadByte's set; a token without such a byte passes unchanged, so
// the block scanner only looks at tokens of blocks that hold one.
//
// Frozen with kRecipeFormatVersion 2. Cost: O(bytes of the token); a token
// without a lead byte of the set costs one scan of its bytes.
// Thread safety: pure functions.
#ifndef NEARDUP_TEXT_SCRIPT_SEGMENTS_H_
#define NEARDUP_TEXT_SCRIPT_SEGMENTS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/utf8.h"

namespace neardup::internal {

// The classes a code point of a word token has for segmentation.
enum class SegmentClass : uint8_t {
  kOther,     // joins the run it is in, as the plain word tokenizer does
  kSingle,    // a token of its own (with the marks after it)
  kKatakana,  // runs of Katakana are one token
  kMark,      // general category M*: stays with the character before it
};

// Bit (b - 0xE0) of this mask: the lead bytes E0 E1 E3..EA EF F0 of every
// code point that is not kOther (E2, the lead of U+2000..U+2FFF punctuation,
// and EB..EE, Hangul, are left out so that English quotes and Korean text
// need no look).
inline constexpr uint32_t kSegmentLeadBits = 0x187FB;

constexpr bool IsSegmentLeadByte(unsigned char byte) {
  return byte >= 0xE0 && byte <= 0xF0 && ((kSegmentLeadBits >> (byte - 0xE0)) & 1) != 0;
}

// The class of a code point of a word token (a letter, mark or number).
SegmentClass ScriptSegmentClass(char32_t c);

// The class of the code points that need no table: Han (U+3400..U+4DBF,
// U+4E00..U+9FFF), the Hiragana letters U+3041..U+3096 and the Katakana
// U+30A1..U+30FA, U+30FC..U+30FF (all letters, none a mark); kMark for
// "ask ScriptSegmentClass". REQUIRES: U+3000 <= c <= U+9FFF (lead E3..E9).
inline SegmentClass CommonCjkSegmentClass(char32_t c) {
  if (c >= 0x4E00 || (c >= 0x3400 && c <= 0x4DBF)) return SegmentClass::kSingle;
  if (c >= 0x3041 && c <= 0x3096) return SegmentClass::kSingle;
  if ((c >= 0x30A1 && c <= 0x30FA) || (c >= 0x30FC && c <= 0x30FF)) {
    return SegmentClass::kKatakana;
  }
  return SegmentClass::kMark;
}

// Whether some byte of `token` is a segment lead byte.
inline bool HasSegmentLeadByte(std::string_view token) {
  for (char c : token) {
    if (IsSegmentLeadByte(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

// Cuts one word token (a maximal run of letters, marks and numbers, valid
// UTF-8) into its segments, one per Next call, in order; their
// concatenation is the token.
class ScriptSegmentCursor {
 public:
  explicit ScriptSegmentCursor(std::string_view token)
      : p_(token.data()), end_(token.data() + token.size()) {}

  // Sets *segment to the next segment and returns true, or returns false
  // when the token is done.
  bool Next(std::string_view* segment) {
    if (p_ == end_) return false;
    const char* const begin = p_;
    SegmentClass base = Take();
    if (base == SegmentClass::kMark) base = SegmentClass::kOther;  // no base before it
    while (p_ != end_) {
      const char* const here = p_;
      const SegmentClass next = Take();
      if (next == SegmentClass::kMark) continue;
      if (next == SegmentClass::kSingle || next != base || base == SegmentClass::kSingle) {
        // The next segment starts here; keep its first code point decoded.
        pending_ = next;
        pending_end_ = p_;
        has_pending_ = true;
        p_ = here;
        break;
      }
    }
    *segment = std::string_view(begin, static_cast<size_t>(p_ - begin));
    return true;
  }

 private:
  // The class of the code point at p_ (decoded by the previous Next when it
  // stopped there), advancing past it.
  SegmentClass Take() {
    if (has_pending_) {
      has_pending_ = false;
      p_ = pending_end_;
      return pending_;
    }
    return Step();
  }

  // Decodes the code point at p_, advances past it, returns its class. The
  // common code points of Chinese and Japanese (3-byte, U+3041..U+9FFF)
  // take a branch-light path with no table lookup: tokens hold only valid
  // UTF-8 (ForEachRun puts no invalid subpart in a word token), and the
  // bytes are checked to be continuation bytes anyway.
  SegmentClass Step() {
    const auto lead = static_cast<unsigned char>(*p_);
    if (lead < 0x80) {
      ++p_;
      return SegmentClass::kOther;
    }
    if (lead >= 0xE3 && lead <= 0xE9 && end_ - p_ >= 3) {
      const auto b1 = static_cast<unsigned char>(p_[1]);
      const auto b2 = static_cast<unsigned char>(p_[2]);
      if ((b1 & 0xC0) == 0x80 && (b2 & 0xC0) == 0x80) {
        const char32_t c =
            (char32_t{lead & 0x0Fu} << 12) | (char32_t{b1 & 0x3Fu} << 6) | char32_t{b2 & 0x3Fu};
        const SegmentClass fast = CommonCjkSegmentClass(c);
        if (fast != SegmentClass::kMark) {  // kMark: not decided here
          p_ += 3;
          return fast;
        }
      }
    }
    const DecodedCodePoint d = DecodeUtf8(p_, end_);
    p_ += d.length;
    return ScriptSegmentClass(d.code_point);
  }

  const char* p_;
  const char* end_;
  bool has_pending_ = false;                     // the code point at p_ is decoded: its class
  SegmentClass pending_ = SegmentClass::kOther;  // and where it ends
  const char* pending_end_ = nullptr;
};

// Calls on_segment(std::string_view) for each segment of a word token; the
// token itself, at once, when it has no segment lead byte.
template <class OnSegment>
void ForEachScriptSegment(std::string_view token, OnSegment&& on_segment) {
  if (!HasSegmentLeadByte(token)) {
    on_segment(token);
    return;
  }
  ScriptSegmentCursor cursor(token);
  std::string_view segment;
  while (cursor.Next(&segment)) on_segment(segment);
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_SCRIPT_SEGMENTS_H_
