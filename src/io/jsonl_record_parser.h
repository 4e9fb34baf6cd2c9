// JsonlRecordParser turns one JSONL line into a Document with simdjson's
// On-Demand API (Langdale and Lemire, "Parsing Gigabytes of JSON per Second",
// VLDB Journal 2019; Keiser and Lemire, "On-Demand JSON: A Better Way to
// Parse Documents?", SPE 2024), walking every value once so the whole line
// is validated (RFC 8259), not only the fields that are read.
//
// Cost: the parser keeps about 6 bytes of index per byte of the longest line
// seen, released after a line over 64 MiB. No allocation per line otherwise
// (beyond growing the Document's strings).
// Thread safety: one thread at a time.
#ifndef NEARDUP_IO_JSONL_RECORD_PARSER_H_
#define NEARDUP_IO_JSONL_RECORD_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "neardup/document.h"
#include "neardup/status.h"

namespace neardup::internal {

class JsonlRecordParser {
 public:
  JsonlRecordParser(std::string text_field, std::string id_field);
  ~JsonlRecordParser();
  JsonlRecordParser(const JsonlRecordParser&) = delete;
  JsonlRecordParser& operator=(const JsonlRecordParser&) = delete;

  // Parses `line`, a whole JSON text. OK: doc->text is the text field's
  // string, doc->id the id field (a string's value, a number's JSON text),
  // and *has_id is false (doc->id empty) when the id field is absent or null.
  // Otherwise InvalidArgument whose message is why the record is skipped;
  // doc->id then holds the id if it was read. Invalid UTF-8 is not a reason:
  // each maximal ill-formed subpart is replaced by U+FFFD (text/utf8.h) and
  // the line parsed again, and *replaced_utf8 (when given) says so.
  // REQUIRES: kLinePaddingBytes (line_reader.h) readable bytes follow `line`.
  Status Parse(std::string_view line, Document* doc, bool* has_id, bool* replaced_utf8 = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// True when `token` is a number in RFC 8259's grammar (section 6), whatever
// its magnitude.
bool IsJsonNumber(std::string_view token);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_JSONL_RECORD_PARSER_H_
