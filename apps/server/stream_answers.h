// A stream's stored answers beyond one document's (docs/SERVER.md): the query
// parameters of the near-duplicate list (GET /v1/streams/NAME/near_duplicates
// and the /ui/ stream page) and the JSON of a StreamEntry (an answer with
// its texts and passages), shared by those routes and GET
// .../documents/{id}?passages=true.
// Thread safety: pure functions of the request.
#ifndef NEARDUP_APPS_SERVER_STREAM_ANSWERS_H_
#define NEARDUP_APPS_SERVER_STREAM_ANSWERS_H_

#include <string>

#include "neardup/stream.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace neardup::server {

// {"id","status","of","similarity","time"} (service.cc).
void AppendAnswer(std::string* out, const StreamAnswer& answer);

// The query parameter `key` as a number in [min, max] (`fallback` when
// absent; `integer`: no fraction), or false with a 400 naming it sent.
bool NumberParam(const httplib::Request& req, httplib::Response& res, const char* key,
                 double fallback, double min, double max, bool integer, double* out);

// `limit` (1..10000, default 100), `cursor`, `order` (newest | oldest),
// `from` / `to` (integer seconds or RFC 3339), `q` (the search) into
// `options` (an empty value is the default: a search form's empty fields);
// false with a 400 naming the parameter sent.
bool ParseStreamListParams(const httplib::Request& req, httplib::Response& res,
                           StreamListOptions* options);

// `key` as "true" / "false" (default false); false with a 400 sent for any
// other value, or a 409 when true and the stream keeps no texts.
bool TextFlagParam(const httplib::Request& req, httplib::Response& res, const char* key,
                   const NearDuplicateStream& stream, bool* out);

// The answer's object, then for a near-duplicate "of_time" (null once its
// kept document left the window); with detail.texts / passages, "text", and
// for a near-duplicate "of_text" (null when gone); with passages,
// "passages": [{"query":[begin,end],"match":[begin,end]}, ...] (byte
// offsets: query = this document, match = the kept one; null when of_text
// is).
void AppendStreamEntry(std::string* out, const StreamEntry& entry, const StreamDetail& detail);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_STREAM_ANSWERS_H_
