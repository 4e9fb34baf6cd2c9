#include "report/report_text.h"

#include <algorithm>
#include <numeric>

#include "text/utf8.h"

namespace neardup::internal {
namespace {

void AppendHex4(std::string* out, unsigned value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(value >> shift) & 0xF]);
}

// Walks `text`: ascii(c) for each ASCII byte, other(p, decoded) for each
// longer or ill-formed sequence (one maximal subpart) starting at p.
template <typename Ascii, typename Other>
void ForEachCharacter(std::string_view text, Ascii ascii, Other other) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c < 0x80) {
      ascii(c);
      ++p;
      continue;
    }
    const DecodedCodePoint decoded = DecodeUtf8(p, end);
    other(p, decoded);
    p += decoded.length;
  }
}

}  // namespace

void AppendHtmlEscaped(std::string* out, std::string_view text) {
  ForEachCharacter(
      text,
      [out](unsigned char c) {
        switch (c) {
          case '&':
            out->append("&amp;");
            break;
          case '<':
            out->append("&lt;");
            break;
          case '>':
            out->append("&gt;");
            break;
          case '"':
            out->append("&quot;");
            break;
          case '\'':
            out->append("&#39;");
            break;
          default:
            out->push_back(static_cast<char>(c));
        }
      },
      [out](const char* p, const DecodedCodePoint& decoded) {
        if (decoded.valid) {
          out->append(p, decoded.length);
        } else {
          out->append(kReplacementUtf8);
        }
      });
}

bool IsLocalPath(std::string_view href) {
  if (href.size() < 1 || href[0] != '/' || href.substr(0, 2) == "//") return false;
  for (char c : href) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

void AppendScriptJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  ForEachCharacter(
      text,
      [out](unsigned char c) {
        switch (c) {
          case '"':
            out->append("\\\"");
            break;
          case '\\':
            out->append("\\\\");
            break;
          case '\n':
            out->append("\\n");
            break;
          case '\t':
            out->append("\\t");
            break;
          case '\r':
            out->append("\\r");
            break;
          case '<':
          case '>':
          case '&':
            AppendHex4(out, c);
            break;
          default:
            if (c < 0x20 || c == 0x7F) {
              AppendHex4(out, c);
            } else {
              out->push_back(static_cast<char>(c));
            }
        }
      },
      [out](const char* p, const DecodedCodePoint& decoded) {
        if (!decoded.valid) {
          out->append("\\ufffd");
        } else if (decoded.code_point == 0x2028 || decoded.code_point == 0x2029) {
          AppendHex4(out, decoded.code_point);
        } else {
          out->append(p, decoded.length);
        }
      });
  out->push_back('"');
}

size_t CutAtCharacterBoundary(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* p = begin;
  while (p < end) {
    const uint32_t length = DecodeUtf8(p, end).length;
    if (static_cast<size_t>(p - begin) + length > max_bytes) break;
    p += length;
  }
  return static_cast<size_t>(p - begin);
}

std::vector<uint32_t> Utf16Offsets(std::string_view text, const std::vector<uint32_t>& offsets) {
  std::vector<uint32_t> order(offsets.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t x, uint32_t y) { return offsets[x] < offsets[y]; });
  std::vector<uint32_t> result(offsets.size());
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* p = begin;
  uint32_t units = 0;
  for (uint32_t i : order) {
    const char* target = begin + std::min<size_t>(offsets[i], text.size());
    // A character counts once its first byte is before the offset.
    while (p < target) {
      const DecodedCodePoint decoded = DecodeUtf8(p, end);
      units += decoded.valid && decoded.code_point >= 0x10000 ? 2 : 1;
      p += decoded.length;
    }
    result[i] = units;
  }
  return result;
}

}  // namespace neardup::internal
