#include "text/graphemes.h"

#include <utf8proc.h>

#include "text/utf8.h"

namespace neardup::internal {

size_t GraphemeClusterEnd(std::string_view text, size_t start) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin + start;
  DecodedCodePoint first = DecodeUtf8(p, end);
  p += first.length;
  if (!first.valid) return static_cast<size_t>(p - begin);
  // The break state (regional-indicator parity, emoji ZWJ sequences) belongs
  // to one cluster, so it starts fresh at each cluster.
  utf8proc_int32_t state = 0;
  utf8proc_int32_t previous = static_cast<utf8proc_int32_t>(first.code_point);
  while (p < end) {
    DecodedCodePoint next = DecodeUtf8(p, end);
    if (!next.valid) break;
    const auto code_point = static_cast<utf8proc_int32_t>(next.code_point);
    if (utf8proc_grapheme_break_stateful(previous, code_point, &state)) break;
    previous = code_point;
    p += next.length;
  }
  return static_cast<size_t>(p - begin);
}

}  // namespace neardup::internal
