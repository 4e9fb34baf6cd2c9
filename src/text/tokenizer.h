// Tokenizers: split normalized UTF-8 into tokens, as views into the text (no
// allocation, no copy). Three kinds (TokenizerKind in neardup/recipe.h):
//
// kWord:       maximal runs of code points of general category L* (letters),
//              M* (marks) or N* (numbers); everything else separates. A run of
//              Han characters is one token (there are no spaces to split on)
//              unless ScriptSegmentation::kCharacters (recipe version 2) cuts
//              each run further (text/script_segments.h). Emoji (So) separate.
// kWhitespace: maximal runs of code points without the Unicode White_Space
//              property (ASCII \t \n \v \f \r space, U+0085, U+00A0, U+1680,
//              U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000); the
//              tokenizer of the SimHash FPGA paper. Punctuation stays attached
//              to words unless the normalizer removed it.
// kChar:       one token per code point (its UTF-8 bytes), except that each
//              maximal white-space run between other characters is one token
//              " " (kCharSpaceToken, a view of a static string, not into the
//              text); leading and trailing white space is dropped.
// kGrapheme:   one token per extended grapheme cluster (text/graphemes.h),
//              white space included; nothing is dropped or merged.
//
// Empty tokens are never emitted. Input is expected to be valid UTF-8
// (Normalize's output); invalid bytes are still handled safely: each maximal
// invalid subpart counts as one code point that is not a letter, mark, number
// or white space (so it separates kWord tokens, and is its own kChar token).
//
// Frozen with kRecipeFormatVersion. Cost: O(bytes); ASCII bytes take a table
// lookup, other code points a decode and (kWord) one utf8proc_category call.
// Thread safety: pure functions.
#ifndef NEARDUP_TEXT_TOKENIZER_H_
#define NEARDUP_TEXT_TOKENIZER_H_

#include <cstddef>
#include <string_view>

#include "neardup/check.h"
#include "neardup/recipe.h"
#include "text/char_class.h"
#include "text/graphemes.h"
#include "text/script_segments.h"
#include "text/utf8.h"

namespace neardup::internal {

// The kChar white-space token. An inline array has one address program-wide
// (a string literal need not), so callers may compare token.data() with
// kCharSpaceToken.data() to tell it from a view into the text.
inline constexpr char kCharSpaceTokenBytes[] = " ";
inline constexpr std::string_view kCharSpaceToken(kCharSpaceTokenBytes, 1);

// Calls on_token(std::string_view) for each maximal run of code points for
// which in_token(char32_t) holds (invalid subparts are never in a token
// unless `invalid_in_token`), with an ASCII byte-class fast path.
template <class InToken, class OnToken>
void ForEachRun(std::string_view text, uint8_t ascii_token_bits, bool ascii_bits_mean_token,
                bool invalid_in_token, InToken&& in_token, OnToken&& on_token) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const char* start = nullptr;  // start of the current token, or null
  while (p < end) {
    const auto c = static_cast<unsigned char>(*p);
    bool is_token;
    uint32_t length;
    if (c < 0x80) {
      is_token = ((kAsciiClass[c] & ascii_token_bits) != 0) == ascii_bits_mean_token;
      length = 1;
    } else {
      DecodedCodePoint d = DecodeUtf8(p, end);
      is_token = d.valid ? in_token(d.code_point) : invalid_in_token;
      length = d.length;
    }
    if (is_token) {
      if (start == nullptr) start = p;
    } else if (start != nullptr) {
      on_token(std::string_view(start, static_cast<size_t>(p - start)));
      start = nullptr;
    }
    p += length;
  }
  if (start != nullptr) on_token(std::string_view(start, static_cast<size_t>(end - start)));
}

template <class OnToken>
void ForEachWordToken(std::string_view text, OnToken&& on_token) {
  ForEachRun(
      text, kAsciiWordBit, /*ascii_bits_mean_token=*/true, /*invalid_in_token=*/false,
      [](char32_t c) { return IsNonAsciiWordCodePoint(c); }, on_token);
}

template <class OnToken>
void ForEachWhitespaceToken(std::string_view text, OnToken&& on_token) {
  ForEachRun(
      text, kAsciiWhiteSpaceBit, /*ascii_bits_mean_token=*/false, /*invalid_in_token=*/true,
      [](char32_t c) { return !IsUnicodeWhiteSpace(c); }, on_token);
}

template <class OnToken>
void ForEachCharToken(std::string_view text, OnToken&& on_token) {
  const char* p = text.data();
  const char* const end = p + text.size();
  bool seen_token = false;     // leading white space is dropped
  bool pending_space = false;  // a white-space run follows the last token
  while (p < end) {
    DecodedCodePoint d = DecodeUtf8(p, end);
    if (d.valid && IsUnicodeWhiteSpace(d.code_point)) {
      pending_space = seen_token;
    } else {
      if (pending_space) on_token(kCharSpaceToken);
      pending_space = false;
      on_token(std::string_view(p, d.length));
      seen_token = true;
    }
    p += d.length;
  }
}

// Calls on_token(std::string_view) for each token of `normalized_utf8`.
template <class OnToken>
void ForEachToken(TokenizerKind kind, std::string_view normalized_utf8, OnToken&& on_token) {
  switch (kind) {
    case TokenizerKind::kWord:
      ForEachWordToken(normalized_utf8, on_token);
      return;
    case TokenizerKind::kWhitespace:
      ForEachWhitespaceToken(normalized_utf8, on_token);
      return;
    case TokenizerKind::kChar:
      ForEachCharToken(normalized_utf8, on_token);
      return;
    case TokenizerKind::kGrapheme:
      ForEachGraphemeToken(normalized_utf8, on_token);
      return;
  }
  NEARDUP_CHECK(false) << "unknown TokenizerKind " << static_cast<int>(kind);
}

// ForEachToken with the recipe's script segmentation: for kWord with
// kCharacters, each word token cut by ForEachScriptSegment.
template <class OnToken>
void ForEachToken(TokenizerKind kind, ScriptSegmentation segmentation,
                  std::string_view normalized_utf8, OnToken&& on_token) {
  if (kind == TokenizerKind::kWord && segmentation == ScriptSegmentation::kCharacters) {
    ForEachWordToken(normalized_utf8,
                     [&](std::string_view token) { ForEachScriptSegment(token, on_token); });
    return;
  }
  ForEachToken(kind, normalized_utf8, on_token);
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKENIZER_H_
