// LineReader splits a ByteStream into lines of any length, without copying a
// line that fits in its buffer and without a fixed cap: the buffer grows to
// hold the longest line up to `max_line_bytes`; longer lines are counted and
// passed over without being held.
//
// Every line handed out is followed in memory by at least kLinePaddingBytes
// readable bytes, so a SIMD parser (simdjson) may read past its end.
// Cost: one buffer of max(1 MiB, longest line + 1 MiB) plus padding (less for
// a stream known to be shorter).
// Thread safety: one thread at a time.
#ifndef NEARDUP_IO_LINE_READER_H_
#define NEARDUP_IO_LINE_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::internal {

inline constexpr size_t kLinePaddingBytes = 64;

struct Line {
  // The line without its "\n" or "\r\n". Valid until the next call to Next.
  // Empty when too_long.
  std::string_view text;
  // 1-based line number.
  uint64_t number = 0;
  // True when the line is longer than max_line_bytes and was not kept.
  bool too_long = false;
  // The line's length in bytes (without its terminator), also when too_long.
  uint64_t length = 0;
};

class LineReader {
 public:
  // The stream must outlive the reader. `name` names the stream in errors.
  // Lines are numbered from first_line_number (a stream that starts inside
  // a file).
  LineReader(ByteStream* stream, uint64_t max_line_bytes, std::string name = "input",
             uint64_t first_line_number = 1);

  // true: *line holds the next line. false: end of stream. A stream error is
  // returned once every complete line before it has been handed out; a
  // partial line in front of the error is dropped. A line over
  // max_line_bytes in a stream without a known end (ByteStream::HasEnd) is
  // ResourceExhausted: passing over it could mean reading forever.
  Result<bool> Next(Line* line);

  // Smallest read request; lines are read in blocks at least this large.
  static constexpr size_t kBlockBytes = 1 << 20;

 private:
  // Makes room for at least kBlockBytes / 2 more bytes after end_ (less when
  // the stream says fewer are left).
  void MakeRoom();
  // Reads into the free space; sets at_eof_ at the end of the stream.
  Status Fill();

  ByteStream* stream_;
  uint64_t max_line_bytes_;
  std::string name_;
  std::unique_ptr<char[]> buffer_;
  // Invariant: begin_ <= scan_ <= end_ and end_ + kLinePaddingBytes <= capacity_.
  // [begin_, end_) holds unconsumed bytes; [begin_, scan_) has no '\n'.
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t scan_ = 0;
  size_t end_ = 0;
  bool at_eof_ = false;
  // Bytes of an over-long line passed over so far (discarding_ is set).
  bool discarding_ = false;
  uint64_t discarded_ = 0;
  uint64_t line_number_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_LINE_READER_H_
