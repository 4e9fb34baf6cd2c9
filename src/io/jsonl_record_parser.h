// JsonlRecordParser turns one JSONL line into a Document with simdjson's
// On-Demand API (Langdale and Lemire, "Parsing Gigabytes of JSON per Second",
// VLDB Journal 2019; Keiser and Lemire, "On-Demand JSON: A Better Way to
// Parse Documents?", SPE 2024), walking every value once so the whole line
// is validated (RFC 8259), not only the fields that are read.
//
// Cost: the parser keeps about 6 bytes of index per byte of the longest line
// seen, released after a line over 64 MiB. No allocation per line otherwise:
// ParseRecord hands back a string without escapes as a view into the line
// (no copy at all) and unescapes one with escapes straight into the caller's
// arena (one pass, no allocation of its own); Parse then copies into the
// Document's strings.
// Thread safety: one thread at a time.
#ifndef NEARDUP_IO_JSONL_RECORD_PARSER_H_
#define NEARDUP_IO_JSONL_RECORD_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "io/text_arena.h"
#include "neardup/document.h"
#include "neardup/status.h"

namespace neardup::internal {

// Where a field's value is: `size` bytes at `offset` in the line parsed, or
// in the arena when `in_arena` (it had escapes, or the line was repaired).
struct JsonlField {
  size_t offset = 0;
  size_t size = 0;
  bool in_arena = false;
};

// What ParseRecord read from one line.
struct JsonlRecord {
  JsonlField id;    // when has_id: a string's value, or a number's JSON text
  JsonlField text;  // on success: the text field's string value
  bool has_id = false;
  bool replaced_utf8 = false;  // invalid UTF-8 was replaced by U+FFFD
};

// The bytes of `field` of a record parsed from `line` into `arena`.
inline std::string_view FieldView(std::string_view line, const TextArena& arena,
                                  const JsonlField& field) {
  return {(field.in_arena ? arena.data() : line.data()) + field.offset, field.size};
}

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

  // The same without copies: the id and text are described by *record
  // (FieldView), in `line` or appended to *arena; errors, ids and texts are
  // those of Parse. On failure, record->has_id says whether the id was read.
  // REQUIRES: as Parse.
  Status ParseRecord(std::string_view line, TextArena* arena, JsonlRecord* record);

  // Whether ParseRecord first tries io/jsonl_flat_record.h's shortcut (on by
  // default; off only to compare the two routes in tests).
  void SetFlatShortcutForTest(bool on);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// True when `token` is a number in RFC 8259's grammar (section 6), whatever
// its magnitude.
bool IsJsonNumber(std::string_view token);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_JSONL_RECORD_PARSER_H_
