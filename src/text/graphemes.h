// Extended grapheme clusters (Unicode UAX #29), the user-perceived
// characters: "e" + U+0301 is one, a flag (two regional indicators) is one,
// an emoji ZWJ sequence is one, "\r\n" is one. The kGrapheme tokenizer's
// unit, as Elixir's String.graphemes splits text.
//
// Boundaries come from utf8proc_grapheme_break_stateful (Unicode 13 in
// Debian 12's utf8proc 2.6); frozen with it and kRecipeFormatVersion.
// Invalid UTF-8 (never in Normalize's output) is handled safely: each
// maximal invalid subpart is a cluster of its own.
// Cost: O(bytes), one utf8proc call per code point. Thread safety: pure
// functions.
#ifndef NEARDUP_TEXT_GRAPHEMES_H_
#define NEARDUP_TEXT_GRAPHEMES_H_

#include <cstddef>
#include <string_view>

namespace neardup::internal {

// The end (exclusive) of the grapheme cluster that starts at text[start].
// REQUIRES: start < text.size().
size_t GraphemeClusterEnd(std::string_view text, size_t start);

// Calls on_token(std::string_view) for each grapheme cluster of `text`, in
// order; the tokens cover the text exactly.
template <class OnToken>
void ForEachGraphemeToken(std::string_view text, OnToken&& on_token) {
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = GraphemeClusterEnd(text, start);
    on_token(text.substr(start, end - start));
    start = end;
  }
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_GRAPHEMES_H_
