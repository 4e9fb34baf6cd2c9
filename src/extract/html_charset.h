// The character encoding of an HTML page, and its conversion to UTF-8
// (issue 21): pages of the web and of old archives come in windows-1252,
// ISO-8859-x, Shift_JIS, GB18030, ... and gumbo reads UTF-8 only.
//
// The encoding is found as a browser finds it (WHATWG HTML, "determining the
// character encoding"), in this order: a byte-order mark (UTF-8, UTF-16LE,
// UTF-16BE); the transport's charset (a WARC record's HTTP Content-Type);
// a <meta charset> or <meta http-equiv="Content-Type" content="...;
// charset=..."> in the first 1024 bytes (comments skipped); an XML
// declaration's encoding (XHTML); else UTF-8. Labels map to encodings as the
// WHATWG Encoding Standard maps them (iso-8859-1, latin1 and us-ascii are
// windows-1252; shift_jis is windows-31j; gb2312 and gbk are GB18030;
// euc-kr is windows-949; big5 is Big5-HKSCS); a meta tag's UTF-16 label
// means UTF-8 (the tag could not have been read otherwise).
//
// Conversion goes through glibc's iconv. Bytes that are not valid in the
// page's encoding become U+FFFD, one per invalid sequence, as a browser
// shows them: the page is still read (one bad byte in an old page is no
// reason to lose it). A label that iconv does not know is no declaration
// (the next source decides, as a browser ignores a label it does not know);
// with none, the page is read as UTF-8, as before (invalid sequences are
// replaced later, as for text files).
// Cost: one pass over the page; output at most 4 bytes per input byte.
// Thread safety: pure functions (an iconv descriptor per call).
#ifndef NEARDUP_EXTRACT_HTML_CHARSET_H_
#define NEARDUP_EXTRACT_HTML_CHARSET_H_

#include <string>
#include <string_view>

namespace neardup::internal {

struct HtmlEncoding {
  // The iconv name of the encoding ("UTF-8", "WINDOWS-1252", "CP932", ...).
  std::string name;
  // Bytes at the start that are not text (a byte-order mark).
  size_t skip = 0;
};

// The encoding of `bytes` as described above; `transport_charset` is the
// charset parameter of the HTTP Content-Type ("" when none).
HtmlEncoding DetectHtmlEncoding(std::string_view bytes, std::string_view transport_charset);

// The iconv name for an encoding label (any case, surrounding white space
// ignored), as the WHATWG Encoding Standard maps labels; "" for an empty
// label.
std::string EncodingForLabel(std::string_view label);

// `bytes` converted from encoding `name` (an iconv name) to UTF-8, invalid
// sequences replaced by U+FFFD. `*converted` is false (and the bytes are
// returned as they are) when the encoding is UTF-8, "" or unknown to iconv.
std::string ConvertToUtf8(std::string_view bytes, const std::string& name, bool* converted);

// The charset parameter of a Content-Type value ("text/html; charset=x"), or
// "" when it has none.
std::string_view CharsetOfContentType(std::string_view content_type);

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_HTML_CHARSET_H_
