#include "line_id_patch.h"

#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

namespace neardup::mpi {
namespace {

// The digits to replace in one line: [begin, end), end at the id's closing
// quote; the new number and its width in digits (formatted when written:
// 24 B an edit, no string each).
struct Edit {
  size_t begin = 0;
  size_t end = 0;
  uint64_t line = 0;
  size_t width = 0;
};

// The decimal digits of `line` at `out` (edit.width of them).
void WriteDigits(const Edit& edit, char* out) { std::to_chars(out, out + edit.width, edit.line); }

}  // namespace

Status RenumberLineIds(std::string* text, const std::vector<LineIdRename>& renames) {
  constexpr std::string_view kPrefix = "{\"id\":\"";
  std::vector<Edit> edits;
  edits.reserve(renames.size());
  size_t grown = 0;
  size_t shrunk = 0;
  size_t previous_end = 0;
  for (const LineIdRename& rename : renames) {
    const size_t start = rename.start;
    if (start < previous_end || start > text->size() ||
        std::string_view(*text).substr(start, kPrefix.size()) != kPrefix) {
      return InternalError("no fingerprint line to renumber at byte " + std::to_string(start));
    }
    // The id's closing quote: a JSON string's escapes are a backslash and
    // at least one more character.
    size_t quote = start + kPrefix.size();
    while (quote < text->size() && (*text)[quote] != '"' && (*text)[quote] != '\n') {
      quote += (*text)[quote] == '\\' ? 2 : 1;
    }
    size_t digits = quote;
    while (digits > start + kPrefix.size() && quote < text->size() && (*text)[digits - 1] >= '0' &&
           (*text)[digits - 1] <= '9') {
      --digits;
    }
    if (quote >= text->size() || (*text)[quote] != '"' || digits == quote ||
        (*text)[digits - 1] != ':') {
      return InternalError("the id of the fingerprint line at byte " + std::to_string(start) +
                           " does not end in a line number");
    }
    char buffer[20];
    const size_t width = static_cast<size_t>(
        std::to_chars(buffer, buffer + sizeof(buffer), rename.line).ptr - buffer);
    edits.push_back(Edit{digits, quote, rename.line, width});
    if (width >= quote - digits) {
      grown += width - (quote - digits);
    } else {
      shrunk += (quote - digits) - width;
    }
    previous_end = quote;
  }
  if (shrunk > 0 || text->size() + grown > text->capacity()) {
    // A shorter number (not met by PieceLineNumbers: a file's line is at
    // least its stand-in), or no room to grow in place (a resize would
    // reallocate to up to twice the capacity, then move: ~3x the text at
    // its peak): one forward copy into an exact reservation, 2x at the peak.
    std::string out;
    out.reserve(text->size() + grown - shrunk);
    size_t from = 0;
    char buffer[20];
    for (const Edit& edit : edits) {
      out.append(*text, from, edit.begin - from);
      WriteDigits(edit, buffer);
      out.append(buffer, edit.width);
      from = edit.end;
    }
    out.append(*text, from, std::string::npos);
    *text = std::move(out);
    return Status::Ok();
  }
  // In place, the capacity holding the growth: from the back, the segment
  // after edit k moves right by the growth of edits 0..k, then edit k's
  // digits go right before it.
  size_t old_end = text->size();
  text->resize(text->size() + grown);
  char* data = text->data();
  size_t shift = grown;
  for (size_t k = edits.size(); k-- > 0;) {
    const Edit& edit = edits[k];
    std::memmove(data + edit.end + shift, data + edit.end, old_end - edit.end);
    shift -= edit.width - (edit.end - edit.begin);
    WriteDigits(edit, data + edit.begin + shift);
    old_end = edit.begin;
  }
  return Status::Ok();
}

}  // namespace neardup::mpi
