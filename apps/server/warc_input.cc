#include "warc_input.h"

#include <httplib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "neardup/document_reader.h"

namespace neardup::server {
namespace {

// The name the body stands under in ids of records without a URI and in
// error messages.
constexpr const char* kBodyName = "request body";

// The request body, read front to back by the document reader (which
// detects gzip and zstd as for files).
class BodyStream : public ByteStream {
 public:
  explicit BodyStream(std::string_view body) : body_(body) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    const size_t n = std::min(size, body_.size());
    std::memcpy(buffer, body_.data(), n);
    body_.remove_prefix(n);
    return n;
  }
  std::optional<uint64_t> RemainingSizeHint() const override { return body_.size(); }

 private:
  std::string_view body_;
};

}  // namespace

bool IsWarc(const httplib::Request& req) {
  return req.get_header_value("Content-Type").rfind("application/warc", 0) == 0;
}

Result<std::vector<DocumentInput>> ParseWarcDocuments(std::string_view body, size_t max_warc_bytes,
                                                      size_t max_text_bytes) {
  InputOptions options;
  options.max_document_bytes = max_warc_bytes;
  std::optional<SkippedRecord> skipped;  // the first
  options.on_skip = [&skipped](const SkippedRecord& record) {
    if (!skipped.has_value()) skipped = record;
  };
  std::unique_ptr<DocumentReader> reader = DocumentReader::FromStream(
      std::make_unique<BodyStream>(body), kBodyName, InputFormat::kWarc, std::move(options));
  std::vector<DocumentInput> documents;
  Document doc;
  while (true) {
    Result<bool> next = reader->Next(&doc);
    if (!next.ok()) return InvalidArgumentError("WARC body: " + next.status().message());
    if (!*next) break;
    if (doc.text.size() > max_text_bytes) {
      return ResourceExhaustedError("WARC record " + doc.id + ": its text (" +
                                    std::to_string(doc.text.size()) +
                                    " bytes) exceeds --max-document-mb");
    }
    DocumentInput input{std::move(doc.id), std::move(doc.text), std::nullopt};
    if (!doc.date.empty()) {
      Result<int64_t> time = ParseRfc3339(doc.date);
      if (!time.ok()) {
        return InvalidArgumentError("WARC record " + input.id + ": WARC-Date \"" +
                                    doc.date.substr(0, 64) + "\" is not RFC 3339");
      }
      input.time = *time;
    }
    documents.push_back(std::move(input));
  }
  if (skipped.has_value()) {
    const std::string what = skipped->id.empty() || skipped->id == kBodyName
                                 ? std::string("WARC body")
                                 : "WARC record " + skipped->id;
    if (skipped->reason.find("exceeds max_document_bytes") != std::string::npos) {
      return ResourceExhaustedError(what + " decompresses to more than --max-body-mb (" +
                                    std::to_string(max_warc_bytes) + " bytes)");
    }
    return InvalidArgumentError(what + ": " + skipped->reason);
  }
  return documents;
}

}  // namespace neardup::server
