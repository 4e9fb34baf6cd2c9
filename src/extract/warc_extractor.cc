#include "extract/warc_extractor.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "extract/html_charset.h"
#include "extract/html_extractor.h"

namespace neardup::internal {
namespace {

// A header block bigger than this is not a WARC or HTTP header but damage.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

char WarcLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return WarcLower(x) == WarcLower(y);
         });
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Named fields of a header block ("Name: value" lines; continuation lines and
// repeated names are rare in WARC and HTTP payload headers: the first counts).
class Headers {
 public:
  explicit Headers(std::string_view block) : block_(block) {}
  std::optional<std::string_view> Get(std::string_view name) const {
    std::string_view rest = block_;
    while (!rest.empty()) {
      size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
      size_t colon = line.find(':');
      if (colon != std::string_view::npos && EqualsIgnoreCase(Trim(line.substr(0, colon)), name)) {
        return Trim(line.substr(colon + 1));
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view block_;
};

// Splits `message` at the blank line after its header block ("\r\n\r\n", or
// "\n\n" as some crawlers write HTTP headers). nullopt when there is none
// within kMaxHeaderBytes.
std::optional<std::pair<std::string_view, std::string_view>> SplitHeader(std::string_view message) {
  std::string_view window = message.substr(0, std::min(message.size(), kMaxHeaderBytes));
  size_t crlf = window.find("\r\n\r\n");
  size_t lf = window.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return std::nullopt;
  if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf < lf)) {
    return std::make_pair(message.substr(0, crlf), message.substr(crlf + 4));
  }
  return std::make_pair(message.substr(0, lf), message.substr(lf + 2));
}

// RFC 9112 chunked transfer coding; nullopt when malformed.
std::optional<std::string> Dechunk(std::string_view body) {
  std::string out;
  while (true) {
    size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view size_text = body.substr(0, eol);
    size_text = size_text.substr(0, size_text.find(';'));
    size_text = Trim(size_text);
    uint64_t size = 0;
    auto [ptr, error] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (error != std::errc() || ptr != size_text.data() + size_text.size() || size_text.empty()) {
      return std::nullopt;
    }
    body.remove_prefix(eol + 2);
    if (size == 0) return out;
    if (size > body.size()) return std::nullopt;
    out.append(body.substr(0, size));
    body.remove_prefix(size);
    if (body.substr(0, 2) == "\r\n") body.remove_prefix(2);
  }
}

enum class PayloadKind { kHtml, kText, kOther };

PayloadKind KindOf(std::string_view content_type) {
  if (StartsWithIgnoreCase(content_type, "text/html") ||
      StartsWithIgnoreCase(content_type, "application/xhtml")) {
    return PayloadKind::kHtml;
  }
  if (StartsWithIgnoreCase(content_type, "text/")) return PayloadKind::kText;
  return PayloadKind::kOther;
}

struct RecordOutcome {
  std::optional<ExtractedDocument> document;
  std::optional<std::string> problem;  // else passed over when no document
};

RecordOutcome ReadPayload(const Headers& warc, std::string_view block, std::string_view name,
                          const ExtractOptions& options) {
  RecordOutcome outcome;
  std::string_view type = warc.Get("WARC-Type").value_or("");
  std::string_view content_type = warc.Get("Content-Type").value_or("");
  std::string_view payload = block;
  std::string dechunked;
  PayloadKind kind;
  // The payload's declared charset (html_charset.h): the HTTP header's for
  // a response, else the record's own Content-Type's.
  std::string_view charset = CharsetOfContentType(content_type);
  if (EqualsIgnoreCase(type, "response") &&
      StartsWithIgnoreCase(content_type, "application/http")) {
    auto split = SplitHeader(block);
    if (!split.has_value()) {
      outcome.problem = "the HTTP response has no end of headers";
      return outcome;
    }
    Headers http(split->first);
    payload = split->second;
    kind = KindOf(http.Get("Content-Type").value_or("text/html"));
    charset = CharsetOfContentType(http.Get("Content-Type").value_or(""));
    if (kind == PayloadKind::kOther) return outcome;
    std::string_view encoding = http.Get("Content-Encoding").value_or("identity");
    if (!EqualsIgnoreCase(encoding, "identity") && !encoding.empty()) {
      outcome.problem =
          "HTTP payload with Content-Encoding " + std::string(encoding) + " is not decoded";
      return outcome;
    }
    if (StartsWithIgnoreCase(http.Get("Transfer-Encoding").value_or(""), "chunked")) {
      std::optional<std::string> plain = Dechunk(payload);
      if (!plain.has_value()) {
        outcome.problem = "malformed chunked HTTP body";
        return outcome;
      }
      dechunked = std::move(*plain);
      payload = dechunked;
    }
  } else if (EqualsIgnoreCase(type, "response") || EqualsIgnoreCase(type, "resource") ||
             EqualsIgnoreCase(type, "conversion")) {
    kind = KindOf(content_type.empty() ? std::string_view("text/plain") : content_type);
    if (kind == PayloadKind::kOther) return outcome;
  } else {
    return outcome;  // request, metadata, warcinfo, revisit, continuation
  }
  ExtractedDocument doc;
  if (kind == PayloadKind::kHtml) {
    Result<ExtractedDocument> html = ExtractHtml(payload, name, options, charset);
    if (!html.ok()) {
      outcome.problem = html.status().message();
      return outcome;
    }
    doc = std::move(html).value();
  } else {
    bool converted = false;
    doc.text = ConvertToUtf8(payload, EncodingForLabel(charset), &converted);
  }
  outcome.document = std::move(doc);
  return outcome;
}

}  // namespace

Result<ExtractionResult> ExtractWarc(std::string_view bytes, std::string_view name,
                                     const ExtractOptions& options) {
  ExtractionResult result;
  result.format = DocumentFormat::kWarc;
  size_t pos = 0;
  uint64_t records = 0;
  auto damage = [&](std::string reason) -> Status {
    std::string message = std::string(name) + ": WARC record at byte " + std::to_string(pos) +
                          ": " + std::move(reason);
    if (records == 0) return DataLossError(message);
    result.problems.push_back({"", message + " (the rest of the file is not read)"});
    return Status::Ok();
  };
  while (true) {
    // Records end with two CRLFs; tolerate any run of line ends between them.
    while (pos < bytes.size() && (bytes[pos] == '\r' || bytes[pos] == '\n')) ++pos;
    if (pos == bytes.size()) break;
    std::string_view rest = bytes.substr(pos);
    if (rest.substr(0, 7) != "WARC/1.") {
      NEARDUP_RETURN_IF_ERROR(damage("does not start with a WARC/1.x version line"));
      break;
    }
    auto split = SplitHeader(rest);
    if (!split.has_value()) {
      NEARDUP_RETURN_IF_ERROR(damage("header block has no end"));
      break;
    }
    Headers warc(split->first);
    std::string_view length_text = warc.Get("Content-Length").value_or("");
    uint64_t length = 0;
    auto [ptr, error] =
        std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
    if (length_text.empty() || error != std::errc() ||
        ptr != length_text.data() + length_text.size()) {
      NEARDUP_RETURN_IF_ERROR(damage("Content-Length is missing or not a number (\"" +
                                     std::string(length_text) + "\")"));
      break;
    }
    if (length > split->second.size()) {
      NEARDUP_RETURN_IF_ERROR(
          damage("Content-Length " + std::to_string(length) + " runs past the end of the file (" +
                 std::to_string(split->second.size()) + " bytes left): truncated"));
      break;
    }
    std::string_view block = split->second.substr(0, length);
    ++records;
    RecordOutcome outcome = ReadPayload(warc, block, name, options);
    std::string id(warc.Get("WARC-Target-URI").value_or(""));
    if (id.empty()) id.assign(warc.Get("WARC-Record-ID").value_or(""));
    if (outcome.document.has_value()) {
      outcome.document->id = std::move(id);
      outcome.document->date.assign(warc.Get("WARC-Date").value_or(""));
      result.documents.push_back(std::move(*outcome.document));
    } else if (outcome.problem.has_value()) {
      result.problems.push_back({std::move(id), std::string(name) + ": WARC record at byte " +
                                                    std::to_string(pos) + ": " + *outcome.problem});
    } else {
      ++result.records_passed_over;
    }
    pos = static_cast<size_t>(block.data() + block.size() - bytes.data());
  }
  return result;
}

}  // namespace neardup::internal
