// The service's error answers: {"error": "...", "code": "..."} with the HTTP
// status, and the one place a library Status becomes an HTTP status.
// Thread safety: pure functions.
#ifndef NEARDUP_APPS_SERVER_HTTP_RESPONSES_H_
#define NEARDUP_APPS_SERVER_HTTP_RESPONSES_H_

#include <string>
#include <string_view>

#include "http_message.h"
#include "neardup/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace neardup::server {

// Sets the answer's body and Content-Type without copying the body
// (httplib 0.11's set_content copies).
void SetBody(httplib::Response& res, std::string body, std::string_view content_type);

// invalid argument 400, not found 404, already exists 409, resource
// exhausted (disk full) 507, unimplemented 501, other 500.
int HttpStatusFor(StatusCode code);

void SendError(httplib::Response& res, int http_status, std::string_view code,
               std::string_view message);

// The status's HTTP status, its code name and message.
void SendStatus(httplib::Response& res, const Status& status);

// An error of ParseDocuments: ResourceExhausted there is a document over the
// size limit (413 "document_too_large"), not a full disk.
void SendDocumentsError(httplib::Response& res, const Status& status);

// Whether the body is JSON lines (Content-Type application/x-ndjson).
bool IsJsonLines(const httplib::Request& req);

// The `kind` ("stream", "collection") name of a matched route (req.name), or
// false with a 400 sent. Names never reach the file system unchecked.
bool NameOf(const HttpRequest& req, httplib::Response& res, std::string_view kind,
            std::string* name);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_HTTP_RESPONSES_H_
