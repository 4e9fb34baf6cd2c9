#include "http_responses.h"

#include <httplib.h>

#include <string>
#include <utility>

#include "json_input.h"
#include "neardup/json_writer.h"

namespace neardup::server {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 507;
    case StatusCode::kUnimplemented:
      return 501;
    default:
      return 500;
  }
}

void SetBody(httplib::Response& res, std::string body, std::string_view content_type) {
  res.body = std::move(body);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", std::string(content_type));
}

void SendError(httplib::Response& res, int http_status, std::string_view code,
               std::string_view message) {
  std::string body = "{\"error\":";
  AppendJsonString(&body, message);
  body += ",\"code\":";
  AppendJsonString(&body, code);
  body += "}\n";
  res.status = http_status;
  SetBody(res, std::move(body), "application/json");
}

void SendStatus(httplib::Response& res, const Status& status) {
  SendError(res, HttpStatusFor(status.code()), StatusCodeName(status.code()), status.message());
}

void SendDocumentsError(httplib::Response& res, const Status& status) {
  if (status.code() == StatusCode::kResourceExhausted) {
    return SendError(res, 413, "document_too_large", status.message());
  }
  SendStatus(res, status);
}

bool IsJsonLines(const httplib::Request& req) {
  return req.get_header_value("Content-Type").rfind("application/x-ndjson", 0) == 0;
}

bool NameOf(const HttpRequest& req, httplib::Response& res, std::string_view kind,
            std::string* name) {
  *name = req.name;
  if (!IsValidStreamName(*name)) {
    SendError(res, 400, "invalid_argument",
              std::string(kind) + " name must match [A-Za-z0-9_-]{1,64}");
    return false;
  }
  return true;
}

}  // namespace neardup::server
