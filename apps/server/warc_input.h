// WARC request bodies (issue 21): a crawl posted to a stream as it is, with
// Content-Type application/warc (the WARC 1.1 media type), plain or
// gzip-compressed (.warc.gz, one member per record). Each response,
// resource or conversion record with a text or HTML payload is one
// document, extracted as `neardup` extracts WARC files
// (neardup/document_extractor.h): its id is the record's WARC-Target-URI
// and its time the record's WARC-Date, so the stream's time window follows
// the crawl's dates rather than the arrival time.
// Cost: the body decompressed in memory (at most `max_warc_bytes`), plus
// the extracted texts. Thread safety: pure functions.
#ifndef NEARDUP_APPS_SERVER_WARC_INPUT_H_
#define NEARDUP_APPS_SERVER_WARC_INPUT_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "json_input.h"
#include "neardup/status.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace neardup::server {

// Whether the body is a WARC file (Content-Type application/warc).
bool IsWarc(const httplib::Request& req);

// The documents of a WARC body, in record order; every record is read
// before any document is used, so a bad body stores nothing. Errors:
// InvalidArgument for a damaged WARC or gzip stream, a record the extractor
// skips (e.g. a gzip Content-Encoding payload) and a WARC-Date that is not
// RFC 3339, each naming the record; ResourceExhausted for a body that
// decompresses to more than `max_warc_bytes` or a document whose text
// exceeds `max_text_bytes` (naming its id). A record without a WARC-Date
// has no time (the arrival time is used).
Result<std::vector<DocumentInput>> ParseWarcDocuments(std::string_view body, size_t max_warc_bytes,
                                                      size_t max_text_bytes);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_WARC_INPUT_H_
