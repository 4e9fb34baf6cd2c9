// A stream's answers beyond one document's: the near-duplicate list route and
// the JSON of an entry (stream_answers.h).
#include "stream_answers.h"

#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "http_responses.h"
#include "json_input.h"
#include "neardup/json_writer.h"
#include "service.h"

namespace neardup::server {
namespace {

// Whether the list parameter `key` has a value: an empty one is the default
// (the empty fields of the /ui/ page's search form).
bool Given(const httplib::Request& req, const char* key) {
  return req.has_param(key) && !req.get_param_value(key).empty();
}

// `key` as integer seconds or an RFC 3339 time; false with a 400 sent.
bool TimeParam(const httplib::Request& req, httplib::Response& res, const char* key,
               std::optional<int64_t>* out) {
  if (!Given(req, key)) return true;
  const std::string text = req.get_param_value(key);
  char* end = nullptr;
  errno = 0;
  const long long seconds = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno == 0) {
    *out = seconds;
    return true;
  }
  Result<int64_t> time = ParseRfc3339(text);
  if (!time.ok()) {
    SendError(res, 400, "invalid_argument",
              std::string("parameter \"") + key + "\" (" + text +
                  ") must be integer seconds or an RFC 3339 time");
    return false;
  }
  *out = *time;
  return true;
}

void AppendOptionalString(std::string* out, const std::optional<std::string>& text) {
  if (text) {
    AppendJsonString(out, *text);
  } else {
    *out += "null";
  }
}

}  // namespace

bool NumberParam(const httplib::Request& req, httplib::Response& res, const char* key,
                 double fallback, double min, double max, bool integer, double* out) {
  *out = fallback;
  if (!req.has_param(key)) return true;
  const std::string text = req.get_param_value(key);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= min && value <= max) ||
      (integer && value != static_cast<double>(static_cast<uint64_t>(value)))) {
    char range[64];
    std::snprintf(range, sizeof(range), "%s in [%g, %g]", integer ? "an integer" : "a number", min,
                  max);
    SendError(res, 400, "invalid_argument",
              std::string("parameter \"") + key + "\" (" + text + ") must be " + range);
    return false;
  }
  *out = value;
  return true;
}

bool ParseStreamListParams(const httplib::Request& req, httplib::Response& res,
                           StreamListOptions* options) {
  double limit = 100;
  if ((Given(req, "limit") &&
       !NumberParam(req, res, "limit", 100, 1, static_cast<double>(kMaxStreamListLimit), true,
                    &limit)) ||
      !TimeParam(req, res, "from", &options->from_time) ||
      !TimeParam(req, res, "to", &options->to_time)) {
    return false;
  }
  options->limit = static_cast<size_t>(limit);
  if (Given(req, "order")) {
    const std::string order = req.get_param_value("order");
    if (order != "newest" && order != "oldest") {
      SendError(res, 400, "invalid_argument",
                "parameter \"order\" (" + order + ") must be newest or oldest");
      return false;
    }
    options->oldest_first = order == "oldest";
  }
  if (Given(req, "cursor")) options->cursor = req.get_param_value("cursor");
  if (Given(req, "q")) options->search = req.get_param_value("q");
  return true;
}

bool TextFlagParam(const httplib::Request& req, httplib::Response& res, const char* key,
                   const NearDuplicateStream& stream, bool* out) {
  *out = false;
  if (!req.has_param(key)) return true;
  const std::string value = req.get_param_value(key);
  if (value != "true" && value != "false") {
    SendError(res, 400, "invalid_argument",
              std::string("parameter \"") + key + "\" (" + value + ") must be true or false");
    return false;
  }
  *out = value == "true";
  if (*out && !stream.config().keep_texts) {
    SendError(res, 409, "failed_precondition",
              std::string(key) + "=true needs a stream created with \"keep_texts\": true");
    return false;
  }
  return true;
}

void AppendStreamEntry(std::string* out, const StreamEntry& entry, const StreamDetail& detail) {
  AppendAnswer(out, entry.answer);
  out->pop_back();  // the answer's closing brace
  const bool near_duplicate = entry.answer.status == StreamStatus::kNearDuplicate;
  if (near_duplicate) {
    *out += ",\"of_time\":";
    *out += entry.of_time ? std::to_string(*entry.of_time) : "null";
  }
  if (detail.texts || detail.passages) {
    *out += ",\"text\":";
    AppendOptionalString(out, entry.text);
    if (near_duplicate) {
      *out += ",\"of_text\":";
      AppendOptionalString(out, entry.of_text);
    }
  }
  if (detail.passages && near_duplicate) {
    *out += ",\"passages\":";
    if (!entry.of_text) {
      *out += "null";
    } else {
      *out += '[';
      for (size_t i = 0; i < entry.passages.size(); ++i) {
        const Passage& p = entry.passages[i];
        if (i > 0) *out += ',';
        *out += "{\"query\":[" + std::to_string(p.query_begin) + "," + std::to_string(p.query_end) +
                "],\"match\":[" + std::to_string(p.match_begin) + "," +
                std::to_string(p.match_end) + "]}";
      }
      *out += ']';
    }
  }
  *out += '}';
}

void Service::SendDocumentEntry(const Request& req, httplib::Response& res,
                                const NearDuplicateStream& stream) {
  const StreamDetail detail{.texts = true, .passages = true};
  Result<StreamEntry> entry = stream.Entry(req.id, detail);
  if (!entry.ok()) return SendStatus(res, entry.status());
  std::string body;
  AppendStreamEntry(&body, *entry, detail);
  res.set_content(body + "\n", "application/json");
}

void Service::ListStreamAnswers(const Request& req, httplib::Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  StreamListOptions options;
  if (!ParseStreamListParams(req, res, &options) ||
      !TextFlagParam(req, res, "texts", *stream, &options.detail.texts) ||
      !TextFlagParam(req, res, "passages", *stream, &options.detail.passages)) {
    return;
  }
  Result<StreamPage> page = stream->List(options);
  if (!page.ok()) return SendStatus(res, page.status());
  std::string body = "{\"answers\":[";
  for (size_t i = 0; i < page->entries.size(); ++i) {
    if (i > 0) body += ',';
    AppendStreamEntry(&body, page->entries[i], options.detail);
  }
  body += "],\"next_cursor\":";
  AppendOptionalString(&body, page->next_cursor.empty()
                                  ? std::nullopt
                                  : std::optional<std::string>(page->next_cursor));
  body += ",\"scanned\":" + std::to_string(page->scanned) + "}\n";
  res.set_content(body, "application/json");
}

}  // namespace neardup::server
