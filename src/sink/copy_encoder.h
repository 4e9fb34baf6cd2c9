// CopyEncoder writes rows in the data format of PostgreSQL's COPY ... FROM
// STDIN, text or binary (PostgreSQL 15 documentation, "COPY", File Formats),
// into one growing buffer that the caller sends and clears in pieces.
//  - text: fields separated by a tab, rows ended by a newline, NULL as \N;
//    a backslash, tab, newline or carriage return inside a value is escaped
//    (\\, \t, \n, \r), so any text round-trips; numbers as decimal text
//    (doubles with 17 significant digits: exact).
//  - binary: the 19-byte header, per row a 16-bit field count and per field
//    a 32-bit length (-1 for NULL) and the value in network byte order; the
//    16-bit trailer -1 from Finish. No escaping at all.
// Text values must be valid UTF-8 without NUL (StorableText makes them so).
// Cost: O(bytes written). Thread safety: one encoder per thread.
#ifndef NEARDUP_SINK_COPY_ENCODER_H_
#define NEARDUP_SINK_COPY_ENCODER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "neardup/result_sink.h"
#include "neardup/status.h"

namespace neardup::internal {

// `value` as PostgreSQL text: itself when valid UTF-8, else a copy in
// *scratch with each invalid subpart replaced by U+FFFD. InvalidArgument
// when it holds a NUL byte (`what` names the value in the message).
Result<std::string_view> StorableText(std::string_view value, std::string_view what,
                                      std::string* scratch);

class CopyEncoder {
 public:
  // Starts the buffer (the binary header).
  explicit CopyEncoder(CopyFormat format);

  // The COPY options for this format: "(FORMAT binary)" or "(FORMAT text)",
  // with ", FREEZE" when `freeze`.
  std::string CopyOptions(bool freeze = false) const;

  void BeginRow(int num_fields);
  // REQUIRES: valid UTF-8 without NUL.
  void AddText(std::string_view value);
  void AddFloat8(double value);
  void AddInt4(int32_t value);
  void AddInt8(int64_t value);
  void AddNull();
  void EndRow();
  // Appends the end of the data (the binary trailer).
  void Finish();

  // The encoded bytes not yet taken; the caller sends and clears them.
  std::string& buffer() { return buffer_; }

 private:
  void Separate();
  void AppendBigEndian(uint64_t value, int bytes);

  CopyFormat format_;
  std::string buffer_;
  bool first_field_ = true;
};

}  // namespace neardup::internal

#endif  // NEARDUP_SINK_COPY_ENCODER_H_
