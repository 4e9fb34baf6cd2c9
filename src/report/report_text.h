// The text rules of the HTML report (neardup/report.h): escaping for HTML and
// for JSON embedded in a <script> element, cutting long texts at a character
// boundary, and turning byte offsets into the UTF-16 offsets that JavaScript
// strings index by. All three read invalid UTF-8 the same way (each maximal
// ill-formed subpart is one U+FFFD, text/utf8.h), so an offset computed here
// points at the same character in the text the page receives.
// Cost: O(bytes). Thread safety: pure functions.
#ifndef NEARDUP_REPORT_REPORT_TEXT_H_
#define NEARDUP_REPORT_REPORT_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::internal {

// Appends `text` with & < > " ' as character references (safe in element
// content and in quoted attribute values); invalid UTF-8 becomes U+FFFD.
void AppendHtmlEscaped(std::string* out, std::string_view text);

// A link target on the same server: an absolute path, not "//host" (a
// network-path reference), with no backslash (which browsers read as '/')
// and no control characters.
bool IsLocalPath(std::string_view href);

// Appends `text` as a JSON string that is also safe inside a <script>
// element: '<', '>' and '&' are \u003c, \u003e, \u0026 (so neither "</script"
// nor "<!--" can occur), U+2028 and U+2029 are escaped, control characters
// are \u00XX, and invalid UTF-8 becomes \ufffd.
void AppendScriptJsonString(std::string* out, std::string_view text);

// The length of the longest prefix of `text` of at most `max_bytes` bytes
// that does not end inside a UTF-8 sequence (a well-formed one; ill-formed
// bytes stand alone).
size_t CutAtCharacterBoundary(std::string_view text, size_t max_bytes);

// For each byte offset of `offsets` (any order, each <= text.size()), the
// number of UTF-16 code units of the text before it, as the page decodes
// it. An offset inside a sequence counts that character as before it.
std::vector<uint32_t> Utf16Offsets(std::string_view text, const std::vector<uint32_t>& offsets);

}  // namespace neardup::internal

#endif  // NEARDUP_REPORT_REPORT_TEXT_H_
