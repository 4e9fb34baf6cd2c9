// Document: one unit of text to fingerprint, with the id it is reported under.
//
// Documents come from a DocumentReader (neardup/document_reader.h): a text
// file is one document, a JSONL line is one document. `text` is bytes as
// read (JSON escapes decoded); it need not be valid UTF-8, normalization
// deals with that later.
// Cost: two strings; a reader refills the same Document to reuse capacity.
// Thread safety: a plain value type.
#ifndef NEARDUP_DOCUMENT_H_
#define NEARDUP_DOCUMENT_H_

#include <string>

namespace neardup {

struct Document {
  // External id: a path, a JSONL id field, or "<source>:<line>" (see
  // InputOptions in neardup/document_reader.h).
  std::string id;
  std::string text;
  // The JSONL line the document came from, verbatim (without its line ending
  // or a leading byte-order mark), when InputOptions::keep_raw_records is set;
  // empty for text documents and otherwise. `neardup dedup` writes kept
  // records with it.
  std::string raw_record = {};
  // Set for documents extracted from a rich format (neardup/document_extractor.h):
  // the format's name ("pdf", "docx", "odt", "html", "warc"; empty for text
  // and JSONL), the HTML title, and a WARC record's WARC-Date (ISO 8601).
  // `text` is then the extracted text.
  std::string format = {};
  std::string title = {};
  std::string date = {};
  // The file an extracted document came from, named as the reader names
  // files (a whole file's id): a WARC's records have their URIs as ids and
  // the WARC file here. Empty for text and JSONL. `neardup index add` keeps
  // it in the catalog as the document's name.
  std::string source = {};
};

}  // namespace neardup

#endif  // NEARDUP_DOCUMENT_H_
