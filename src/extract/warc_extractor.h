// Documents of a WARC file (ISO 28500, versions 1.0 and 1.1; WET files are
// WARC files of conversion records): one per response, resource or
// conversion record whose payload is text or HTML. The id is the record's
// WARC-Target-URI (else its WARC-Record-ID), the date its WARC-Date; HTML
// payloads give their visible text and title (html_extractor.h), text
// payloads their bytes. A response record is an HTTP message: its status line
// and headers are not text, a chunked body is de-chunked, and a payload
// with a Content-Encoding (gzip) is reported, not decoded.
//
// The records are framed by their Content-Length (the format's own
// framing); a .warc.gz is one gzip member per record, which the caller has
// already decompressed (multi-member gzip) into these bytes.
// Thread safety: may run concurrently.
#ifndef NEARDUP_EXTRACT_WARC_EXTRACTOR_H_
#define NEARDUP_EXTRACT_WARC_EXTRACTOR_H_

#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup::internal {

// DataLoss when the first record is malformed (not a WARC file). Damage after
// one or more good records keeps those records and is reported in
// `problems` (the rest of the file cannot be framed).
Result<ExtractionResult> ExtractWarc(std::string_view bytes, std::string_view name,
                                     const ExtractOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_WARC_EXTRACTOR_H_
