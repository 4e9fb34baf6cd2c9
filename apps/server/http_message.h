// The HTTP/1.1 messages of the service's own request loop (HttpServer): a
// request head parsed from bytes into cpp-httplib's Request type (which the
// route handlers take), and a response head written from its Response type.
// cpp-httplib 0.11's own request processing cost ~10 us of CPU per request
// (a std::regex match per route tried, a printf per header line, a
// stringstream, two sends and two address syscalls per answer:
// docs/SERVER.md "Transport"); these functions do it in one pass with no
// regex and no stream.
// Cost: O(head bytes), a few small allocations per header.
// Thread safety: pure functions.
#ifndef NEARDUP_APPS_SERVER_HTTP_MESSAGE_H_
#define NEARDUP_APPS_SERVER_HTTP_MESSAGE_H_

#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::server {

// A request as the route handlers see it: httplib's Request (method,
// decoded path, query params, headers, body) plus the path parameters of
// the matched route, which cpp-httplib kept in `matches` (std::regex).
struct HttpRequest : httplib::Request {
  std::string name;   // {name} of the route, or empty
  std::string id;     // {id} of the route, or empty
  std::string route;  // the matched route's template (metrics), or "other"
};

// The largest request head (request line + headers) read; a longer one is
// answered 431 and the connection closed.
inline constexpr size_t kMaxRequestHeadBytes = 16384;

// Request bodies are read into a string with this many bytes reserved past
// the body's end, so that a JSON parser reading up to 64 bytes past its
// input (simdjson's SIMDJSON_PADDING) parses the body in place, uncopied.
inline constexpr size_t kRequestBodyPadding = 64;

// Parses `head` (the request line and header lines, CRLF or LF ended, the
// blank line excluded) into req->method, target, path (percent-decoded),
// params (the query), version and headers. Returns 0, or the HTTP status of
// the error (400 malformed, 505 a version other than HTTP/1.0 or 1.1).
int ParseRequestHead(std::string_view head, HttpRequest* req);

// Whether the client asked the connection to close after this request
// (HTTP/1.0 without keep-alive, or "Connection: close").
bool WantsClose(const httplib::Request& req);

// The body's length from Content-Length: true with *length set (0 when
// absent), false when the header is malformed.
bool ContentLength(const httplib::Request& req, uint64_t* length);

// Whether the body is sent in chunks (Transfer-Encoding: chunked).
bool IsChunked(const httplib::Request& req);

// The standard reason phrase of a status ("OK", "Not Found"), or "Unknown".
std::string_view StatusReason(int status);

// Appends the status line and headers of `res` (its own headers, then
// Content-Length: body_length, then "Connection: close" when `close`) and
// the blank line.
void AppendResponseHead(const httplib::Response& res, size_t body_length, bool close,
                        std::string* out);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_HTTP_MESSAGE_H_
