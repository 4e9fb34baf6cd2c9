#include "io/jsonl_record_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "io/json_unescape.h"
#include "io/jsonl_flat_record.h"
#include "io/line_reader.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

static_assert(kLinePaddingBytes >= simdjson::SIMDJSON_PADDING,
              "lines must carry the padding simdjson reads past their end");

// Nesting bound, as simdjson's DOM parser: keeps the recursive walk's stack
// small whatever the input.
constexpr int kMaxDepth = 1024;
// After a line this long, the parser's index is freed rather than kept.
constexpr size_t kReleaseAfterBytes = size_t{64} << 20;

std::string_view TrimJsonSpace(std::string_view token) {
  while (!token.empty()) {
    char c = token.back();
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    token.remove_suffix(1);
  }
  return token;
}

const char* TypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "an unknown value";
}

// Validates a scalar by its raw token: simdjson's number parser refuses
// integers beyond 64 bits and doubles beyond ~1.8e308, which JSON allows.
error_code CheckScalarToken(od::value& value, od::json_type type) {
  std::string_view token = TrimJsonSpace(value.raw_json_token());
  switch (type) {
    case od::json_type::number:
      return IsJsonNumber(token) ? simdjson::SUCCESS : simdjson::NUMBER_ERROR;
    case od::json_type::boolean:
      return token == "true" || token == "false" ? simdjson::SUCCESS : simdjson::T_ATOM_ERROR;
    case od::json_type::null:
      return token == "null" ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    default:
      return simdjson::INCORRECT_TYPE;
  }
}

// Walks `value` and everything inside it, so that any syntax error is found.
error_code Validate(od::value value, int depth) {
  if (depth > kMaxDepth) return simdjson::DEPTH_ERROR;
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (error_code e = value.get_object().get(object)) return e;
      for (auto field : object) {
        std::string_view key;
        if (error_code e = field.unescaped_key().get(key)) return e;
        od::value child;
        if (error_code e = field.value().get(child)) return e;
        if (error_code e = Validate(child, depth + 1)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array array;
      if (error_code e = value.get_array().get(array)) return e;
      for (auto element : array) {
        od::value child;
        if (error_code e = element.get(child)) return e;
        if (error_code e = Validate(child, depth + 1)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view unescaped;
      return value.get_string().get(unescaped);
    }
    default:
      return CheckScalarToken(value, type);
  }
}

std::string Quoted(const std::string& field) { return "\"" + field + "\""; }

std::string_view TrimLeadingJsonSpace(std::string_view token) {
  while (!token.empty() && (token[0] == ' ' || token[0] == '\t' || token[0] == '\r')) {
    token.remove_prefix(1);
  }
  return token;
}

// simdjson decides a root's type from its first byte: "this is text" is "a
// boolean" to it. True when the whole line is really the scalar it starts as.
bool IsWholeScalar(std::string_view line, od::json_type type) {
  std::string_view token = TrimJsonSpace(TrimLeadingJsonSpace(line));
  switch (type) {
    case od::json_type::boolean:
      return token == "true" || token == "false";
    case od::json_type::null:
      return token == "null";
    case od::json_type::number:
      return IsJsonNumber(token);
    default:
      return true;
  }
}

}  // namespace

struct JsonlRecordParser::State {
  std::string text_field;
  std::string id_field;
  od::parser parser;
  std::string repaired;  // a line with invalid UTF-8 replaced, plus padding
  TextArena arena;       // Parse's unescaped strings
  bool flat_shortcut = true;
};

JsonlRecordParser::JsonlRecordParser(std::string text_field, std::string id_field)
    : state_(std::make_unique<State>()) {
  state_->text_field = std::move(text_field);
  state_->id_field = std::move(id_field);
}

JsonlRecordParser::~JsonlRecordParser() = default;

void JsonlRecordParser::SetFlatShortcutForTest(bool on) { state_->flat_shortcut = on; }

Status JsonlRecordParser::Parse(std::string_view line, Document* doc, bool* has_id,
                                bool* replaced_utf8) {
  TextArena& arena = state_->arena;
  arena.Clear();
  JsonlRecord record;
  Status status = ParseRecord(line, &arena, &record);
  *has_id = record.has_id;
  if (replaced_utf8 != nullptr) *replaced_utf8 = record.replaced_utf8;
  if (record.has_id) {
    doc->id.assign(FieldView(line, arena, record.id));
  } else {
    doc->id.clear();
  }
  if (status.ok()) doc->text.assign(FieldView(line, arena, record.text));
  return status;
}

Status JsonlRecordParser::ParseRecord(std::string_view line, TextArena* arena,
                                      JsonlRecord* record) {
  od::parser& parser = state_->parser;
  *record = JsonlRecord();
  if (line.size() > parser.max_capacity()) {
    return InvalidArgumentError("line of " + std::to_string(line.size()) +
                                " bytes exceeds the JSON parser's limit of " +
                                std::to_string(parser.max_capacity()) + " bytes");
  }
  // The common flat object of strings and numbers, without simdjson
  // (jsonl_flat_record.h: the same record, or false for simdjson to decide).
  if (state_->flat_shortcut &&
      TryParseFlatRecord(line, state_->text_field, state_->id_field, arena, record)) {
    return Status();
  }
  if (line.size() > parser.capacity()) {
    // Grow geometrically: lines that creep upwards would otherwise reallocate
    // the index each time.
    size_t capacity = std::min(parser.max_capacity(), std::max(line.size(), 2 * parser.capacity()));
    if (parser.allocate(capacity) != simdjson::SUCCESS) {
      return InvalidArgumentError("cannot allocate a JSON index for a line of " +
                                  std::to_string(line.size()) + " bytes");
    }
  }

  JsonlField text;
  bool text_found = false;
  od::json_type text_type = od::json_type::string;
  JsonlField id;
  od::json_type id_type = od::json_type::null;
  bool id_found = false;
  std::optional<od::json_type> non_object_root;
  const size_t arena_start = arena->size();

  auto walk = [&](std::string_view json) -> error_code {
    text_found = false;
    id_found = false;
    non_object_root.reset();
    arena->Truncate(arena_start);
    // A string's value: the bytes between its quotes when it has no escape
    // (no copy: simdjson's first stage already checked its UTF-8 and control
    // characters), else the bytes before the first backslash copied and the
    // rest unescaped by UnescapeJsonString (json_unescape.h: simdjson's
    // decoding and refusals, faster on dense escapes) into the arena.
    auto read_string = [&](od::value& value, JsonlField* field) -> error_code {
      const std::string_view token = TrimJsonSpace(value.raw_json_token());
      od::raw_json_string raw;
      if (error_code e = value.get_raw_json_string().get(raw)) return e;
      const char* start = raw.raw();
      const char* end = token.data() + token.size() - 1;  // the closing quote
      if (token.size() < 2 || *end != '"' || end < start) {
        // Not a token shape the first stage makes; simdjson decides.
        const size_t offset = arena->size();
        char* room = arena->Reserve(token.size() + simdjson::SIMDJSON_PADDING);
        uint8_t* dst = reinterpret_cast<uint8_t*>(room);
        std::string_view unescaped;
        if (error_code e = parser.unescape(raw, dst).get(unescaped)) return e;
        arena->Commit(unescaped.size());
        *field = {offset, unescaped.size(), true};
        return simdjson::SUCCESS;
      }
      const size_t body_size = static_cast<size_t>(end - start);
      const void* backslash = std::memchr(start, '\\', body_size);
      if (backslash == nullptr) {
        *field = {static_cast<size_t>(start - json.data()), body_size, false};
        return simdjson::SUCCESS;
      }
      const size_t prefix = static_cast<size_t>(static_cast<const char*>(backslash) - start);
      const size_t offset = arena->size();
      char* room = arena->Reserve(body_size + kUnescapeSlackBytes);
      std::memcpy(room, start, prefix);
      const std::optional<size_t> rest =
          UnescapeJsonString(std::string_view(start + prefix, body_size - prefix), room + prefix);
      if (!rest.has_value()) return simdjson::STRING_ERROR;
      arena->Commit(prefix + *rest);
      *field = {offset, prefix + *rest, true};
      return simdjson::SUCCESS;
    };
    od::document document;
    if (error_code e = parser
                           .iterate(simdjson::padded_string_view(json.data(), json.size(),
                                                                 json.size() + kLinePaddingBytes))
                           .get(document)) {
      return e;
    }
    od::json_type root_type;
    if (error_code e = document.type().get(root_type)) return e;
    if (root_type != od::json_type::object) {
      non_object_root = root_type;
      return simdjson::INCORRECT_TYPE;
    }
    od::object object;
    if (error_code e = document.get_object().get(object)) return e;
    for (auto field : object) {
      std::string_view key;
      if (error_code e = field.unescaped_key().get(key)) return e;
      od::value value;
      if (error_code e = field.value().get(value)) return e;
      // The last occurrence of a key counts, as in Python's json module.
      if (key == state_->text_field || key == state_->id_field) {
        od::json_type type;
        if (error_code e = value.type().get(type)) return e;
        JsonlField string;
        if (type == od::json_type::string) {
          if (error_code e = read_string(value, &string)) return e;
        } else {
          if (type == od::json_type::number) {
            const std::string_view token = TrimJsonSpace(value.raw_json_token());
            string = {static_cast<size_t>(token.data() - json.data()), token.size(), false};
          }
          if (error_code e = Validate(value, 1)) return e;
        }
        // Both names may be the same field.
        if (key == state_->text_field) {
          text_found = true;
          text_type = type;
          text = string;
        }
        if (key == state_->id_field) {
          id_found = true;
          id_type = type;
          id = string;
        }
      } else if (error_code e = Validate(value, 1)) {
        return e;
      }
    }
    // Past the object there must be nothing (simdjson 3.0 has no at_end()).
    if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) {
      return simdjson::TRAILING_CONTENT;
    }
    return simdjson::SUCCESS;
  };

  error_code error = walk(line);
  if (error == simdjson::UTF8_ERROR) {
    // Bytes >= 0x80 are valid JSON only inside strings, so replacing the
    // ill-formed ones keeps the line's structure.
    std::string& repaired = state_->repaired;
    SanitizeUtf8(line, &repaired);
    const size_t size = repaired.size();
    repaired.resize(size + kLinePaddingBytes, '\0');
    record->replaced_utf8 = true;
    const std::string_view json(repaired.data(), size);
    error = walk(json);
    // The repaired line is reused by the next one: keep its fields.
    for (JsonlField* field : {&text, &id}) {
      if (field->in_arena) continue;
      char* room = arena->Reserve(field->size);
      if (field->size > 0) std::memcpy(room, json.data() + field->offset, field->size);
      *field = {arena->size(), field->size, true};
      arena->Commit(field->size);
    }
  }
  Status status;
  if (non_object_root.has_value() && !IsWholeScalar(line, *non_object_root)) {
    status = InvalidArgumentError(
        "invalid JSON: the line is not a JSON value (each line must be one JSON object)");
  } else if (non_object_root.has_value()) {
    status = InvalidArgumentError(std::string("not a JSON object: the line is ") +
                                  TypeName(*non_object_root));
  } else if (error != simdjson::SUCCESS) {
    status = InvalidArgumentError(std::string("invalid JSON: ") + simdjson::error_message(error));
  } else {
    if (id_found && (id_type == od::json_type::string || id_type == od::json_type::number)) {
      record->id = id;
      record->has_id = true;
    }
    if (id_found && id_type != od::json_type::string && id_type != od::json_type::number &&
        id_type != od::json_type::null) {
      status = InvalidArgumentError("id field " + Quoted(state_->id_field) + " is " +
                                    TypeName(id_type) + ", not a string or a number");
    } else if (!text_found) {
      status = InvalidArgumentError("text field " + Quoted(state_->text_field) + " is missing");
    } else if (text_type != od::json_type::string) {
      status = InvalidArgumentError("text field " + Quoted(state_->text_field) + " is " +
                                    TypeName(text_type) + ", not a string");
    } else {
      record->text = text;
    }
  }
  if (line.size() > kReleaseAfterBytes) state_->parser = od::parser();
  return status;
}

bool IsJsonNumber(std::string_view token) {
  size_t i = 0;
  const size_t n = token.size();
  auto is_digit = [&](size_t at) { return at < n && token[at] >= '0' && token[at] <= '9'; };
  if (i < n && token[i] == '-') ++i;
  if (i < n && token[i] == '0') {
    ++i;
  } else if (is_digit(i)) {
    while (is_digit(i)) ++i;
  } else {
    return false;
  }
  if (i < n && token[i] == '.') {
    ++i;
    if (!is_digit(i)) return false;
    while (is_digit(i)) ++i;
  }
  if (i < n && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < n && (token[i] == '+' || token[i] == '-')) ++i;
    if (!is_digit(i)) return false;
    while (is_digit(i)) ++i;
  }
  return i == n;
}

}  // namespace neardup::internal
