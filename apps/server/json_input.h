// Parsing the service's request bodies (simdjson On Demand): a document
// {"id", "text", "time"}, a stream config, and RFC 3339 times. Every error is
// InvalidArgument naming the field.
// Thread safety: pure functions (a parser per call).
#ifndef NEARDUP_APPS_SERVER_JSON_INPUT_H_
#define NEARDUP_APPS_SERVER_JSON_INPUT_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"
#include "neardup/stream.h"

namespace neardup::server {

struct DocumentInput {
  std::string id;
  std::string text;
  std::optional<int64_t> time;  // absent: the arrival time
};

// {"id": string, "text": string, "time": RFC 3339 string | integer seconds}.
// `id_optional` for /check, whose id only labels the answer.
Result<DocumentInput> ParseDocument(std::string_view json, bool id_optional = false);

// A request body of documents: one JSON object, or (`json_lines`) one per
// non-blank line. Every document is parsed before any is used, so a bad one
// stores nothing; the error names the line and the field. Documents whose
// text exceeds `max_text_bytes` are ResourceExhausted naming the line and the
// id (413 for that document).
Result<std::vector<DocumentInput>> ParseDocuments(std::string_view body, bool json_lines,
                                                  bool id_optional, size_t max_text_bytes);

// A document whose id and text view a request body (or ParsedDocuments::
// copies): what the stream routes hand to AddBatch without copying texts.
struct DocumentView {
  std::string_view id;
  std::string_view text;
  std::optional<int64_t> time;  // absent: the arrival time
};

struct ParsedDocuments {
  std::vector<DocumentView> documents;
  // The strings that could not be viewed in the body (those with escapes,
  // or all of a body without spare capacity), unescaped; a deque, so that
  // they stay where the views point while more are added and when the
  // ParsedDocuments is moved.
  std::deque<std::string> copies;
};

// ParseDocuments without copies of the texts (session 14): the same
// documents, answers and errors, as views. A string without escapes is its
// bytes in `body` (when body has at least 64 bytes of capacity past its size,
// which HttpServer reserves: kRequestBodyPadding, each line is parsed in
// place), so the views are valid while `body` is alive and unchanged.
Result<ParsedDocuments> ParseDocumentViews(const std::string& body, bool json_lines,
                                           bool id_optional, size_t max_text_bytes);

// {"method", "threshold", "max_distance", "preset", "window_seconds",
// "max_documents", "keep_texts"}, every key optional (StreamConfig's defaults), no others.
Result<StreamConfig> ParseStreamConfig(std::string_view json);

// "2026-11-26T10:00:00Z", with optional fractional seconds (dropped) and a
// "Z" or "+HH:MM" / "-HH:MM" offset; seconds since the epoch.
Result<int64_t> ParseRfc3339(std::string_view text);

// A stream name: [A-Za-z0-9_-]{1,64}. Checked before any file-system use.
bool IsValidStreamName(std::string_view name);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_JSON_INPUT_H_
