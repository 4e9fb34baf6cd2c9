#include "json_input.h"

#include <simdjson.h>

#include <cmath>
#include <ctime>
#include <deque>
#include <optional>
#include <string>

namespace neardup::server {
namespace {

namespace od = simdjson::ondemand;

Status FieldError(std::string_view field, std::string_view what) {
  return InvalidArgumentError("field \"" + std::string(field) + "\" " + std::string(what));
}

// Runs `on_field(key, value)` for each field of the object in `json`.
// Bodies up to this size are parsed by the thread's reused parser; larger
// ones by a parser of their own, so that a thread does not hold buffers of
// its largest document for ever.
constexpr size_t kReusedParserBytes = size_t{1} << 20;

// `readable`: the bytes readable from json.data() on. With at least
// SIMDJSON_PADDING of them past the JSON (a line of a request body, whose
// string keeps that much capacity past its end: kRequestBodyPadding) the JSON
// is parsed in place, and strings viewed in it stay valid as long as it does
// (simdjson may read the padding but its content does not affect the parse);
// otherwise it is parsed from a padded copy, reused by the next parse on this
// thread.
template <typename OnField>
Status ForEachField(std::string_view json, size_t readable, OnField&& on_field) {
  // simdjson sizes a parser's buffers at its first document: a parser (and a
  // padded copy) per document cost an allocation and page faults per line of
  // a batch, a tenth of a single-document POST's CPU. One per thread instead.
  thread_local od::parser reused_parser;
  thread_local std::string reused_padded;
  std::optional<od::parser> own_parser;
  std::string own_padded;
  const bool reuse = json.size() <= kReusedParserBytes;
  od::parser& parser = reuse ? reused_parser : own_parser.emplace();
  const char* data = json.data();
  size_t capacity = readable;
  if (readable < json.size() + simdjson::SIMDJSON_PADDING) {
    std::string& padded = reuse ? reused_padded : own_padded;
    padded.assign(json);
    padded.resize(json.size() + simdjson::SIMDJSON_PADDING);
    data = padded.data();
    capacity = padded.size();
  }
  od::document document;
  if (parser.iterate(data, json.size(), capacity).get(document) != simdjson::SUCCESS) {
    return InvalidArgumentError("body is not valid JSON");
  }
  od::object object;
  if (document.get_object().get(object) != simdjson::SUCCESS) {
    return InvalidArgumentError("body must be a JSON object");
  }
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return InvalidArgumentError("body is not valid JSON");
    }
    const std::string name(key);
    od::value value;
    if (field.value().get(value) != simdjson::SUCCESS) {
      return InvalidArgumentError("body is not valid JSON");
    }
    NEARDUP_RETURN_IF_ERROR(on_field(name, value));
  }
  // Past the object there must be no token left (current_location fails at
  // the end of the input).
  const char* trailing = nullptr;
  if (document.current_location().get(trailing) == simdjson::SUCCESS) {
    return InvalidArgumentError("body has data after the JSON object");
  }
  return Status::Ok();
}

// A string value as a view: its bytes in the parsed JSON when it has no
// escape (JSON strings are their bytes then: UTF-8 and control characters
// were checked with the whole document), else unescaped into *copies. With
// `in_place` false (the JSON was a padded copy) every string is copied.
Status ViewString(const std::string& name, od::value& value, bool in_place,
                  std::deque<std::string>* copies, std::string_view* out) {
  std::string_view token = value.raw_json_token();  // a peek: the value is not consumed
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  if (in_place && token.size() >= 2 && token.front() == '"' && token.back() == '"' &&
      token.find('\\') == std::string_view::npos) {
    od::raw_json_string raw;  // consumes the value (a string: checked)
    if (value.get_raw_json_string().get(raw) != simdjson::SUCCESS) {
      return FieldError(name, "must be a string");
    }
    *out = token.substr(1, token.size() - 2);
    return Status::Ok();
  }
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) return FieldError(name, "must be a string");
  *out = copies->emplace_back(s);
  return Status::Ok();
}

Status GetString(const std::string& name, od::value& value, std::string* out) {
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) return FieldError(name, "must be a string");
  *out = std::string(s);
  return Status::Ok();
}

Status GetInt(const std::string& name, od::value& value, int64_t* out) {
  if (value.get_int64().get(*out) != simdjson::SUCCESS) {
    return FieldError(name, "must be an integer");
  }
  return Status::Ok();
}

}  // namespace

bool IsValidStreamName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<int64_t> ParseRfc3339(std::string_view text) {
  auto bad = [&] {
    return FieldError("time", "(\"" + std::string(text) +
                                  "\") must be RFC 3339, e.g. \"2026-11-26T10:00:00Z\", or "
                                  "integer seconds since the epoch");
  };
  auto digits = [&](size_t at, size_t count, int* out) {
    if (at + count > text.size()) return false;
    int value = 0;
    for (size_t i = at; i < at + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      value = value * 10 + (text[i] - '0');
    }
    *out = value;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!digits(0, 4, &year) || text.size() < 20 || text[4] != '-' || !digits(5, 2, &month) ||
      text[7] != '-' || !digits(8, 2, &day) || (text[10] != 'T' && text[10] != 't') ||
      !digits(11, 2, &hour) || text[13] != ':' || !digits(14, 2, &minute) || text[16] != ':' ||
      !digits(17, 2, &second)) {
    return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == start) return bad();
  }
  int offset_seconds = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int offset_hour, offset_minute;
    if (!digits(at + 1, 2, &offset_hour) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !digits(at + 4, 2, &offset_minute) || offset_hour > 23 || offset_minute > 59) {
      return bad();
    }
    offset_seconds = (offset_hour * 60 + offset_minute) * 60 * (text[at] == '+' ? 1 : -1);
    at += 6;
  } else {
    return bad();
  }
  if (at != text.size()) return bad();
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm)) - offset_seconds;
}

namespace {

// One document into *out; its strings view `json` (parsed in place when
// `readable` allows, see ForEachField) or *copies.
Status ParseDocumentInto(std::string_view json, size_t readable, bool id_optional,
                         std::deque<std::string>* copies, DocumentView* out) {
  const bool in_place = readable >= json.size() + simdjson::SIMDJSON_PADDING;
  bool has_id = false;
  bool has_text = false;
  NEARDUP_RETURN_IF_ERROR(
      ForEachField(json, readable, [&](const std::string& name, od::value& value) {
        if (name == "id") {
          has_id = true;
          return ViewString(name, value, in_place, copies, &out->id);
        }
        if (name == "text") {
          has_text = true;
          return ViewString(name, value, in_place, copies, &out->text);
        }
        if (name == "time") {
          od::json_type type;
          if (value.type().get(type) != simdjson::SUCCESS) {
            return FieldError(name, "is not valid JSON");
          }
          if (type == od::json_type::string) {
            std::string text;
            NEARDUP_RETURN_IF_ERROR(GetString(name, value, &text));
            NEARDUP_ASSIGN_OR_RETURN(int64_t seconds, ParseRfc3339(text));
            out->time = seconds;
            return Status::Ok();
          }
          int64_t seconds;
          NEARDUP_RETURN_IF_ERROR(GetInt(name, value, &seconds));
          out->time = seconds;
          return Status::Ok();
        }
        return Status::Ok();  // other fields (title, url, ...) are the caller's own
      }));
  if (!has_text) return FieldError("text", "is missing");
  if (!has_id && !id_optional) return FieldError("id", "is missing");
  if (has_id && out->id.empty()) return FieldError("id", "must not be empty");
  return Status::Ok();
}

// Calls on_document(json, line_prefix) for the body's one document, or for
// each non-blank line of JSON lines; line_prefix() names the line in errors.
template <typename OnDocument>
Status ForEachDocument(std::string_view body, bool json_lines, OnDocument&& on_document) {
  if (!json_lines) return on_document(body, [] { return std::string(); });
  size_t start = 0;
  size_t line_number = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = body.substr(start, end - start);
    ++line_number;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    // Named in errors only (a string per line was a measurable cost of
    // large batches).
    NEARDUP_RETURN_IF_ERROR(
        on_document(line, [&] { return "line " + std::to_string(line_number) + ": "; }));
  }
  return Status::Ok();
}

Status TextTooLargeError(std::string_view id, size_t bytes, size_t max_text_bytes,
                         const std::string& where) {
  return ResourceExhaustedError(where + "document \"" + std::string(id) + "\": text (" +
                                std::to_string(bytes) + " bytes) exceeds the largest document (" +
                                std::to_string(max_text_bytes) + " bytes, --max-document-mb)");
}

}  // namespace

Result<DocumentInput> ParseDocument(std::string_view json, bool id_optional) {
  std::deque<std::string> copies;
  DocumentView view;
  NEARDUP_RETURN_IF_ERROR(ParseDocumentInto(json, json.size(), id_optional, &copies, &view));
  // Not in place (no padding past `json`), so each string is a copy in
  // `copies`: moved out, not copied again.
  auto take = [&copies](std::string_view v) {
    for (std::string& copy : copies) {
      if (copy.data() == v.data() && copy.size() == v.size()) return std::move(copy);
    }
    return std::string(v);  // absent (an id_optional document without one)
  };
  std::string id = take(view.id);
  std::string text = take(view.text);
  return DocumentInput{std::move(id), std::move(text), view.time};
}

Result<std::vector<DocumentInput>> ParseDocuments(std::string_view body, bool json_lines,
                                                  bool id_optional, size_t max_text_bytes) {
  std::vector<DocumentInput> documents;
  NEARDUP_RETURN_IF_ERROR(ForEachDocument(body, json_lines, [&](std::string_view json, auto where) {
    Result<DocumentInput> document = ParseDocument(json, id_optional);
    if (!document.ok()) return InvalidArgumentError(where() + document.status().message());
    if (document->text.size() > max_text_bytes) {
      return TextTooLargeError(document->id, document->text.size(), max_text_bytes, where());
    }
    documents.push_back(std::move(document).value());
    return Status::Ok();
  }));
  return documents;
}

Result<ParsedDocuments> ParseDocumentViews(const std::string& body, bool json_lines,
                                           bool id_optional, size_t max_text_bytes) {
  ParsedDocuments parsed;
  // Each line is followed by the rest of the body, and the body by its
  // spare capacity: a line is parsed in place when that makes the padding.
  const char* const end_of_readable = body.data() + body.capacity();
  NEARDUP_RETURN_IF_ERROR(ForEachDocument(body, json_lines, [&](std::string_view json, auto where) {
    DocumentView view;
    Status status = ParseDocumentInto(json, static_cast<size_t>(end_of_readable - json.data()),
                                      id_optional, &parsed.copies, &view);
    if (!status.ok()) return InvalidArgumentError(where() + status.message());
    if (view.text.size() > max_text_bytes) {
      return TextTooLargeError(view.id, view.text.size(), max_text_bytes, where());
    }
    parsed.documents.push_back(view);
    return Status::Ok();
  }));
  return parsed;
}

Result<StreamConfig> ParseStreamConfig(std::string_view json) {
  StreamConfig config;
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) return config;
  NEARDUP_RETURN_IF_ERROR(
      ForEachField(json, json.size(), [&](const std::string& name, od::value& value) {
        if (name == "method") {
          std::string method;
          NEARDUP_RETURN_IF_ERROR(GetString(name, value, &method));
          Result<NearDuplicateMethod> parsed = ParseNearDuplicateMethod(method);
          if (!parsed.ok()) return FieldError(name, "must be \"minhash\" or \"simhash\"");
          config.method = *parsed;
          return Status::Ok();
        }
        if (name == "threshold") {
          if (value.get_double().get(config.threshold) != simdjson::SUCCESS ||
              !std::isfinite(config.threshold)) {
            return FieldError(name, "must be a number");
          }
          return Status::Ok();
        }
        if (name == "max_distance") {
          int64_t v;
          NEARDUP_RETURN_IF_ERROR(GetInt(name, value, &v));
          if (v < 0 || v > 63) return FieldError(name, "must be in [0, 63]");
          config.max_distance = static_cast<int>(v);
          return Status::Ok();
        }
        if (name == "preset") return GetString(name, value, &config.preset);
        if (name == "window_seconds") return GetInt(name, value, &config.window_seconds);
        if (name == "max_documents") {
          int64_t v;
          NEARDUP_RETURN_IF_ERROR(GetInt(name, value, &v));
          if (v < 0) return FieldError(name, "must be >= 0");
          config.max_documents = static_cast<uint64_t>(v);
          return Status::Ok();
        }
        if (name == "keep_texts") {
          if (value.get_bool().get(config.keep_texts) != simdjson::SUCCESS) {
            return FieldError(name, "must be true or false");
          }
          return Status::Ok();
        }
        return FieldError(name, "is not a stream setting");
      }));
  return config;
}

}  // namespace neardup::server
