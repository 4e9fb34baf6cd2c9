// NormalizeAsciiWord: the ASCII-word normalizer (NormalizerKind::kAsciiWord),
// the normalizer of the Elixir library ExLSH:
//   1. repair invalid UTF-8 (each maximal invalid subpart becomes U+FFFD and
//      is counted, as in text/normalizer.h; ExLSH itself rejects such text);
//   2. Unicode NFC;
//   3. Unicode lower case with full mappings (U+0130 "İ" becomes "i" and
//      U+0307, as Elixir's String.downcase does);
//   4. every character that is not an ASCII word character [A-Za-z0-9_]
//      becomes a space, and each run of spaces becomes one space. Leading
//      and trailing spaces stay (a grapheme tokenizer sees them).
// So the output is ASCII: [a-z0-9_] and single spaces. Lower-casing comes
// before the ASCII filter, so a character whose lower case is ASCII (U+0130,
// and U+212A KELVIN SIGN, which NFC already maps to "K") keeps its letter.
//
// Frozen with kRecipeFormatVersion (and with utf8proc's Unicode version).
// Cost: O(bytes). ASCII text: one pass, no allocation once *out has
// capacity; other text: one utf8proc NFC pass and a copy.
// Thread safety: pure function.
#ifndef NEARDUP_TEXT_ASCII_WORD_NORMALIZER_H_
#define NEARDUP_TEXT_ASCII_WORD_NORMALIZER_H_

#include <string>
#include <string_view>

#include "text/normalizer.h"

namespace neardup::internal {

// Replaces *out with the normalized form of `text`. `stats` may be null.
void NormalizeAsciiWord(std::string_view text, std::string* out, NormalizeStats* stats);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_ASCII_WORD_NORMALIZER_H_
