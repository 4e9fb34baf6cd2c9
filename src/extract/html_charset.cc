#include "extract/html_charset.h"

#include <errno.h>
#include <iconv.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace neardup::internal {
namespace {

// WHATWG's prescan looks at the first 1024 bytes only.
constexpr size_t kPrescanBytes = 1024;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Whether `s` has `lower_prefix` (lower case) at `at`, in any letter case.
bool HasAt(std::string_view s, size_t at, std::string_view lower_prefix) {
  if (at > s.size() || s.size() - at < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (Lower(s[at + i]) != lower_prefix[i]) return false;
  }
  return true;
}

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

// The WHATWG Encoding Standard's labels whose encoding is not simply the
// label itself, as iconv names.
struct LabelEncoding {
  std::string_view label;
  std::string_view encoding;
};
constexpr LabelEncoding kLabels[] = {
    {"utf-8", "UTF-8"},
    {"utf8", "UTF-8"},
    {"unicode-1-1-utf-8", "UTF-8"},
    {"utf-16", "UTF-16LE"},
    {"utf-16le", "UTF-16LE"},
    {"utf-16be", "UTF-16BE"},
    {"us-ascii", "WINDOWS-1252"},
    {"ascii", "WINDOWS-1252"},
    {"iso-8859-1", "WINDOWS-1252"},
    {"iso8859-1", "WINDOWS-1252"},
    {"iso_8859-1", "WINDOWS-1252"},
    {"latin1", "WINDOWS-1252"},
    {"l1", "WINDOWS-1252"},
    {"cp1252", "WINDOWS-1252"},
    {"x-cp1252", "WINDOWS-1252"},
    {"cp819", "WINDOWS-1252"},
    {"ibm819", "WINDOWS-1252"},
    {"iso-8859-9", "WINDOWS-1254"},
    {"latin5", "WINDOWS-1254"},
    {"iso-8859-11", "WINDOWS-874"},
    {"tis-620", "WINDOWS-874"},
    {"shift_jis", "CP932"},
    {"shift-jis", "CP932"},
    {"sjis", "CP932"},
    {"x-sjis", "CP932"},
    {"ms_kanji", "CP932"},
    {"ms932", "CP932"},
    {"windows-31j", "CP932"},
    {"csshiftjis", "CP932"},
    {"gb2312", "GB18030"},
    {"gbk", "GB18030"},
    {"x-gbk", "GB18030"},
    {"gb18030", "GB18030"},
    {"chinese", "GB18030"},
    {"csgb2312", "GB18030"},
    {"cp936", "GB18030"},
    {"windows-936", "GB18030"},
    {"euc-kr", "CP949"},
    {"ks_c_5601-1987", "CP949"},
    {"windows-949", "CP949"},
    {"korean", "CP949"},
    {"big5", "BIG5-HKSCS"},
    {"big5-hkscs", "BIG5-HKSCS"},
    {"x-x-big5", "BIG5-HKSCS"},
    {"cn-big5", "BIG5-HKSCS"},
    {"x-euc-jp", "EUC-JP"},
    {"koi8", "KOI8-R"},
    {"koi", "KOI8-R"},
    {"koi8-ru", "KOI8-U"},
};

// Whether iconv converts from `name` (an encoding it does not know is no
// declaration: the next source decides, as a browser ignores a label it
// does not know).
bool Known(const std::string& name) {
  if (name.empty()) return false;
  iconv_t cd = iconv_open("UTF-8", name.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return false;
  iconv_close(cd);
  return true;
}

// One attribute of a tag, read from `*at` (WHATWG "get an attribute",
// simplified); false at the tag's end.
bool NextAttribute(std::string_view s, size_t* at, std::string* name, std::string* value) {
  size_t i = *at;
  while (i < s.size() && (IsSpace(s[i]) || s[i] == '/')) ++i;
  if (i >= s.size() || s[i] == '>') {
    *at = i;
    return false;
  }
  name->clear();
  value->clear();
  while (i < s.size() && s[i] != '=' && s[i] != '>' && s[i] != '/' && !IsSpace(s[i])) {
    name->push_back(Lower(s[i++]));
  }
  while (i < s.size() && IsSpace(s[i])) ++i;
  if (i < s.size() && s[i] == '=') {
    ++i;
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
      const char quote = s[i++];
      size_t end = s.find(quote, i);
      if (end == std::string_view::npos) end = s.size();
      value->assign(s.substr(i, end - i));
      i = end + 1;
    } else {
      while (i < s.size() && s[i] != '>' && !IsSpace(s[i])) value->push_back(s[i++]);
    }
  }
  *at = std::min(i, s.size());
  return true;
}

// The encoding a <meta> in the first 1024 bytes declares, or "".
std::string MetaEncoding(std::string_view bytes) {
  const std::string_view s = bytes.substr(0, kPrescanBytes);
  size_t at = 0;
  while (at < s.size()) {
    if (HasAt(s, at, "<!--")) {
      at = s.find("-->", at + 4);
      if (at == std::string_view::npos) break;
      at += 3;
      continue;
    }
    if (HasAt(s, at, "<meta") && at + 5 < s.size() && (IsSpace(s[at + 5]) || s[at + 5] == '/')) {
      at += 5;
      std::string name, value, charset, content_charset;
      bool has_charset = false, pragma = false;
      while (NextAttribute(s, &at, &name, &value)) {
        if (name == "charset" && !has_charset) {
          has_charset = true;
          charset = value;
        } else if (name == "http-equiv") {
          pragma = pragma || LowerCopy(value) == "content-type";
        } else if (name == "content" && content_charset.empty()) {
          content_charset = std::string(CharsetOfContentType(value));
        }
      }
      std::string label = has_charset ? charset : pragma ? content_charset : std::string();
      std::string encoding = EncodingForLabel(label);
      // A page whose meta tag could be read is not UTF-16.
      if (encoding.rfind("UTF-16", 0) == 0) encoding = "UTF-8";
      if (Known(encoding)) return encoding;
      continue;
    }
    if (s[at] == '<' && at + 1 < s.size() &&
        (IsLetter(s[at + 1]) || s[at + 1] == '/' || s[at + 1] == '!' || s[at + 1] == '?')) {
      // Another tag: passed over with its attributes (a '>' inside quotes
      // included, as the prescan does).
      at += 2;
      std::string name, value;
      while (NextAttribute(s, &at, &name, &value)) {
      }
      continue;
    }
    ++at;
  }
  return "";
}

// The encoding of an XML declaration (<?xml version="1.0"
// encoding="ISO-8859-1"?>) at the start, or "".
std::string XmlDeclarationEncoding(std::string_view bytes) {
  if (!HasAt(bytes, 0, "<?xml")) return "";
  const std::string_view s = bytes.substr(0, std::min(bytes.find("?>"), kPrescanBytes));
  size_t at = 5;
  std::string name, value;
  while (NextAttribute(s, &at, &name, &value)) {
    if (name == "encoding") {
      std::string encoding = EncodingForLabel(value);
      return Known(encoding) ? encoding : "";
    }
  }
  return "";
}

}  // namespace

std::string EncodingForLabel(std::string_view label) {
  while (!label.empty() && IsSpace(label.front())) label.remove_prefix(1);
  while (!label.empty() && IsSpace(label.back())) label.remove_suffix(1);
  if (label.empty() || label.size() > 40) return "";
  const std::string lower = LowerCopy(label);
  for (const LabelEncoding& known : kLabels) {
    if (known.label == lower) return std::string(known.encoding);
  }
  // Other labels name their encoding (iso-8859-2, windows-1251, koi8-u,
  // euc-jp, iso-2022-jp, ...). Only a plain name goes to iconv: no "//"
  // suffixes, no paths.
  std::string name;
  for (char c : lower) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                       c == '.' || c == ':';
    if (!plain) return "";
    name.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  }
  return name;
}

std::string_view CharsetOfContentType(std::string_view content_type) {
  size_t at = 0;
  while (true) {
    size_t found = std::string_view::npos;
    for (size_t i = at; i + 7 <= content_type.size(); ++i) {
      if (HasAt(content_type, i, "charset")) {
        found = i;
        break;
      }
    }
    if (found == std::string_view::npos) return "";
    size_t i = found + 7;
    while (i < content_type.size() && IsSpace(content_type[i])) ++i;
    if (i >= content_type.size() || content_type[i] != '=') {
      at = found + 7;
      continue;
    }
    ++i;
    while (i < content_type.size() && IsSpace(content_type[i])) ++i;
    if (i < content_type.size() && (content_type[i] == '"' || content_type[i] == '\'')) {
      const size_t end = content_type.find(content_type[i], i + 1);
      if (end == std::string_view::npos) return "";
      return content_type.substr(i + 1, end - i - 1);
    }
    size_t end = i;
    while (end < content_type.size() && content_type[end] != ';' && !IsSpace(content_type[end])) {
      ++end;
    }
    return content_type.substr(i, end - i);
  }
}

HtmlEncoding DetectHtmlEncoding(std::string_view bytes, std::string_view transport_charset) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") return {"UTF-8", 3};
  if (bytes.substr(0, 2) == "\xFF\xFE") return {"UTF-16LE", 2};
  if (bytes.substr(0, 2) == "\xFE\xFF") return {"UTF-16BE", 2};
  if (std::string transport = EncodingForLabel(transport_charset); Known(transport)) {
    return {std::move(transport), 0};
  }
  if (std::string meta = MetaEncoding(bytes); !meta.empty()) return {std::move(meta), 0};
  if (std::string xml = XmlDeclarationEncoding(bytes); !xml.empty()) return {std::move(xml), 0};
  return {"UTF-8", 0};
}

std::string ConvertToUtf8(std::string_view bytes, const std::string& name, bool* converted) {
  *converted = false;
  if (name.empty() || name == "UTF-8") return std::string(bytes);
  iconv_t cd = iconv_open("UTF-8", name.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return std::string(bytes);
  // An invalid sequence is passed over one code unit at a time.
  const size_t unit = name.rfind("UTF-16", 0) == 0 ? 2 : 1;
  std::string out(bytes.size() + bytes.size() / 2 + 16, '\0');
  size_t used = 0;
  size_t pos = 0;
  auto append = [&](std::string_view piece) {
    if (out.size() - used < piece.size()) out.resize(2 * out.size() + piece.size());
    std::memcpy(out.data() + used, piece.data(), piece.size());
    used += piece.size();
  };
  while (pos < bytes.size()) {
    char* in = const_cast<char*>(bytes.data()) + pos;  // iconv's signature; not written
    size_t in_left = bytes.size() - pos;
    char* put = out.data() + used;
    size_t put_left = out.size() - used;
    const size_t result = iconv(cd, &in, &in_left, &put, &put_left);
    const int error = errno;
    used = static_cast<size_t>(put - out.data());
    pos = bytes.size() - in_left;
    if (result != static_cast<size_t>(-1)) continue;
    if (error == E2BIG) {
      out.resize(2 * out.size());
    } else if (error == EILSEQ) {
      append(kReplacement);
      pos = std::min(bytes.size(), pos + unit);
    } else {  // EINVAL: cut short at the end
      append(kReplacement);
      pos = bytes.size();
    }
  }
  // What a stateful encoding (ISO-2022-JP) still holds.
  while (true) {
    char* put = out.data() + used;
    size_t put_left = out.size() - used;
    const size_t result = iconv(cd, nullptr, nullptr, &put, &put_left);
    const int error = errno;
    used = static_cast<size_t>(put - out.data());
    if (result != static_cast<size_t>(-1) || error != E2BIG) break;
    out.resize(2 * out.size());
  }
  iconv_close(cd);
  out.resize(used);
  *converted = true;
  return out;
}

}  // namespace neardup::internal
