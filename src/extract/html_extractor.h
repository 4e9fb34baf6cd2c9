// The visible text of an HTML page, through gumbo (an HTML5 parser, so the
// page is read as a browser reads it: entities decoded, unclosed elements
// closed, script bodies never markup).
// Visible text: no script, style, noscript, template, head, nav, select,
// iframe or object content; runs of white space collapse to one space (but
// not in <pre>); block elements (p, div, li, h1-h6, tr, br, ...) end a line
// and table cells are separated by a tab. Navigation (<nav>) is left out
// because it repeats on every page of a site and would make the pages of a
// site near-duplicates of each other. The <title> is returned apart.
// Thread safety: may run concurrently (gumbo has no global state).
#ifndef NEARDUP_EXTRACT_HTML_EXTRACTOR_H_
#define NEARDUP_EXTRACT_HTML_EXTRACTOR_H_

#include <string>
#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup::internal {

// A page in another encoding than UTF-8 is converted first
// (extract/html_charset.h); `transport_charset` is the charset of the HTTP
// Content-Type it came with ("" when none).
// ResourceExhausted when the page (before or after its conversion to UTF-8)
// is over options.max_markup_bytes or nests elements deeper than
// kMaxHtmlDepth (gumbo frees its tree recursively).
Result<ExtractedDocument> ExtractHtml(std::string_view bytes, std::string_view name,
                                      const ExtractOptions& options,
                                      std::string_view transport_charset = {});

inline constexpr int kMaxHtmlDepth = 10000;

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_HTML_EXTRACTOR_H_
