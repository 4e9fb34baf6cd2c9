#include "http_message.h"

#include <charconv>
#include <string>

namespace neardup::server {
namespace {

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpaceOrTab(s.front())) s.remove_prefix(1);
  while (!s.empty() && (IsSpaceOrTab(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A header name is a token (RFC 9110 5.6.2).
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 32 || u >= 127 || std::string_view("()<>@,;:\\\"/[]?={}").find(c) != s.npos) {
      return false;
    }
  }
  return true;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Takes the next line of `*rest` (without its CR LF or LF).
std::string_view NextLine(std::string_view* rest) {
  const size_t end = rest->find('\n');
  std::string_view line = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

int ParseRequestHead(std::string_view head, HttpRequest* req) {
  std::string_view rest = head;
  const std::string_view line = NextLine(&rest);
  const size_t method_end = line.find(' ');
  if (method_end == std::string_view::npos) return 400;
  const size_t target_end = line.find(' ', method_end + 1);
  if (target_end == std::string_view::npos) return 400;
  const std::string_view method = line.substr(0, method_end);
  const std::string_view target = line.substr(method_end + 1, target_end - method_end - 1);
  const std::string_view version = line.substr(target_end + 1);
  if (!IsToken(method) || target.empty() || target.front() != '/') return 400;
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return version.rfind("HTTP/", 0) == 0 ? 505 : 400;
  }
  req->method.assign(method);
  req->version.assign(version);
  req->target.assign(target);
  const size_t query = target.find('?');
  const std::string_view path = target.substr(0, query);
  // Most paths have nothing to decode: no copy through decode_url.
  if (path.find('%') == std::string_view::npos && path.find('+') == std::string_view::npos) {
    req->path.assign(path);
  } else {
    req->path = httplib::detail::decode_url(std::string(path), /*convert_plus_to_space=*/false);
  }
  if (query != std::string_view::npos && query + 1 < target.size()) {
    httplib::detail::parse_query_text(std::string(target.substr(query + 1)), req->params);
  }
  while (!rest.empty()) {
    const std::string_view header = NextLine(&rest);
    if (header.empty()) continue;
    // Obsolete line folding (a continuation line) is refused (RFC 9112 5.2).
    if (IsSpaceOrTab(header.front())) return 400;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos || !IsToken(header.substr(0, colon))) return 400;
    req->headers.emplace(std::string(header.substr(0, colon)),
                         std::string(Trim(header.substr(colon + 1))));
  }
  return 0;
}

bool WantsClose(const httplib::Request& req) {
  const auto connection = req.headers.find("Connection");
  const std::string_view value =
      connection == req.headers.end() ? std::string_view() : std::string_view(connection->second);
  if (EqualsIgnoringCase(value, "close")) return true;
  return req.version == "HTTP/1.0" && !EqualsIgnoringCase(value, "keep-alive");
}

bool ContentLength(const httplib::Request& req, uint64_t* length) {
  *length = 0;
  const auto header = req.headers.find("Content-Length");
  if (header == req.headers.end()) return true;
  const std::string& text = header->second;
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *length);
  return error == std::errc() && end == text.data() + text.size();
}

bool IsChunked(const httplib::Request& req) {
  const auto header = req.headers.find("Transfer-Encoding");
  return header != req.headers.end() && EqualsIgnoringCase(header->second, "chunked");
}

std::string_view StatusReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    case 507:
      return "Insufficient Storage";
    default:
      return "Unknown";
  }
}

void AppendResponseHead(const httplib::Response& res, size_t body_length, bool close,
                        std::string* out) {
  char number[24];
  out->append("HTTP/1.1 ");
  out->append(number, std::to_chars(number, number + sizeof(number), res.status).ptr);
  out->push_back(' ');
  out->append(StatusReason(res.status));
  out->append("\r\n");
  for (const auto& [name, value] : res.headers) {
    out->append(name).append(": ").append(value).append("\r\n");
  }
  // 1xx and 204 answers carry no body and no length (RFC 9110 8.6).
  if (res.status >= 200 && res.status != 204) {
    out->append("Content-Length: ");
    out->append(number, std::to_chars(number, number + sizeof(number), body_length).ptr);
    out->append("\r\n");
  }
  if (close) out->append("Connection: close\r\n");
  out->append("\r\n");
}

}  // namespace neardup::server
