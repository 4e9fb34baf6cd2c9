// ParsePairLines / ParseClusterLines: reading back `neardup pairs` and
// `neardup clusters` output (the records of neardup/format/wire_format.h).
#include <simdjson.h>

#include <cmath>
#include <string>

#include "neardup/report.h"

namespace neardup {
namespace {

using simdjson::dom::element;

Status LineError(size_t line, std::string_view what) {
  return InvalidArgumentError("line " + std::to_string(line) + ": " + std::string(what));
}

// Calls on_record(line number, object) for each non-blank line.
template <typename OnRecord>
Status ForEachRecord(std::string_view jsonl, OnRecord on_record) {
  simdjson::dom::parser parser;
  size_t line_number = 0;
  size_t at = 0;
  while (at < jsonl.size()) {
    size_t end = jsonl.find('\n', at);
    if (end == std::string_view::npos) end = jsonl.size();
    std::string_view line = jsonl.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    simdjson::padded_string padded(line);
    auto parsed = parser.parse(padded);
    if (parsed.error()) {
      return LineError(line_number,
                       std::string("invalid JSON: ") + simdjson::error_message(parsed.error()));
    }
    auto object = parsed.value_unsafe().get_object();
    if (object.error()) return LineError(line_number, "not a JSON object");
    NEARDUP_RETURN_IF_ERROR(on_record(line_number, object.value_unsafe()));
  }
  return Status::Ok();
}

Status StringField(simdjson::dom::object object, std::string_view key, size_t line,
                   std::string* out) {
  auto value = object[key].get_string();
  if (value.error()) return LineError(line, "\"" + std::string(key) + "\" must be a string");
  *out = std::string(value.value_unsafe());
  return Status::Ok();
}

}  // namespace

Result<std::vector<PairLine>> ParsePairLines(std::string_view jsonl) {
  std::vector<PairLine> pairs;
  NEARDUP_RETURN_IF_ERROR(
      ForEachRecord(jsonl, [&](size_t line, simdjson::dom::object object) -> Status {
        PairLine pair;
        NEARDUP_RETURN_IF_ERROR(StringField(object, "a", line, &pair.a));
        NEARDUP_RETURN_IF_ERROR(StringField(object, "b", line, &pair.b));
        auto similarity = object["similarity"].get_double();
        if (similarity.error() || !std::isfinite(similarity.value_unsafe())) {
          return LineError(line, "\"similarity\" must be a number");
        }
        pair.similarity = similarity.value_unsafe();
        element distance;
        if (!object["distance"].get(distance)) {
          auto value = distance.get_int64();
          if (value.error() || value.value_unsafe() < 0 || value.value_unsafe() > 4096) {
            return LineError(line, "\"distance\" must be a number of bits");
          }
          pair.distance = static_cast<int>(value.value_unsafe());
        }
        pairs.push_back(std::move(pair));
        return Status::Ok();
      }));
  return pairs;
}

Result<std::vector<std::vector<std::string>>> ParseClusterLines(std::string_view jsonl) {
  std::vector<std::vector<std::string>> clusters;
  NEARDUP_RETURN_IF_ERROR(
      ForEachRecord(jsonl, [&](size_t line, simdjson::dom::object object) -> Status {
        auto ids = object["ids"].get_array();
        if (ids.error()) return LineError(line, "\"ids\" must be an array of strings");
        std::vector<std::string> members;
        for (element id : ids.value_unsafe()) {
          auto value = id.get_string();
          if (value.error()) return LineError(line, "\"ids\" must be an array of strings");
          members.emplace_back(value.value_unsafe());
        }
        if (members.size() < 2) return LineError(line, "a cluster needs two or more ids");
        clusters.push_back(std::move(members));
        return Status::Ok();
      }));
  return clusters;
}

}  // namespace neardup
