#include "io/line_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "neardup/check.h"

namespace neardup::internal {

LineReader::LineReader(ByteStream* stream, uint64_t max_line_bytes, std::string name,
                       uint64_t first_line_number)
    : stream_(stream),
      max_line_bytes_(max_line_bytes),
      name_(std::move(name)),
      line_number_(first_line_number == 0 ? 0 : first_line_number - 1) {}

void LineReader::MakeRoom() {
  size_t room = kBlockBytes;
  // A short stream that says how long it is (a small file, a string) gets a
  // buffer of its size, not a whole block.
  if (std::optional<uint64_t> left = stream_->RemainingSizeHint(); left.has_value()) {
    room = static_cast<size_t>(std::clamp<uint64_t>(*left + 1, 4096, kBlockBytes));
  }
  if (capacity_ >= end_ + room + kLinePaddingBytes) return;
  size_t used = end_ - begin_;
  if (begin_ > 0 && capacity_ >= used + room / 2 + kLinePaddingBytes) {
    // Slide the partial line to the front; cheaper than growing, and a read
    // of at least half a block is still a large read.
    std::memmove(buffer_.get(), buffer_.get() + begin_, used);
  } else {
    // Grow geometrically so a line of n bytes costs O(n) copying in total.
    size_t new_capacity = std::max(2 * capacity_, used + room + kLinePaddingBytes);
    std::unique_ptr<char[]> bigger(new char[new_capacity]);
    if (used > 0) std::memcpy(bigger.get(), buffer_.get() + begin_, used);
    buffer_ = std::move(bigger);
    capacity_ = new_capacity;
  }
  scan_ -= begin_;
  end_ = used;
  begin_ = 0;
}

Status LineReader::Fill() {
  MakeRoom();
  size_t room = capacity_ - kLinePaddingBytes - end_;
  NEARDUP_ASSIGN_OR_RETURN(size_t n, stream_->Read(buffer_.get() + end_, room));
  if (n == 0) at_eof_ = true;
  end_ += n;
  // The padding's content does not matter to simdjson; zeroing it keeps runs
  // deterministic and memory checkers quiet.
  std::memset(buffer_.get() + end_, 0, kLinePaddingBytes);
  return Status::Ok();
}

Result<bool> LineReader::Next(Line* line) {
  while (true) {
    const char* base = buffer_.get();
    if (discarding_) {
      const void* newline =
          end_ > begin_ ? std::memchr(base + begin_, '\n', end_ - begin_) : nullptr;
      size_t stop = newline != nullptr ? static_cast<const char*>(newline) - base : end_;
      discarded_ += stop - begin_;
      if (newline != nullptr && stop > begin_ && base[stop - 1] == '\r') --discarded_;
      if (newline != nullptr || at_eof_) {
        begin_ = scan_ = newline != nullptr ? stop + 1 : end_;
        discarding_ = false;
        // A "\r" that ended the previous block is still counted: harmless,
        // the length only goes into the skip report.
        *line = Line{{}, ++line_number_, true, discarded_};
        return true;
      }
      begin_ = scan_ = end_ = 0;
      NEARDUP_RETURN_IF_ERROR(Fill());
      continue;
    }
    const void* newline = scan_ < end_ ? std::memchr(base + scan_, '\n', end_ - scan_) : nullptr;
    size_t stop;
    if (newline != nullptr) {
      stop = static_cast<const char*>(newline) - base;
    } else if (at_eof_) {
      if (begin_ == end_) return false;
      stop = end_;  // a last line without "\n"
    } else {
      scan_ = end_;
      // +1: a kept line may still be followed by the "\r" of its "\r\n".
      if (end_ - begin_ > max_line_bytes_ + 1) {
        if (!stream_->HasEnd()) {
          return ResourceExhaustedError(
              name_ + ": line " + std::to_string(line_number_ + 1) +
              " is longer than max_document_bytes (" + std::to_string(max_line_bytes_) +
              ") and this input (a pipe, FIFO or device) may never end, so the rest of the "
              "line cannot be passed over: stopped reading it (raise the limit or read a file)");
        }
        discarding_ = true;
        discarded_ = end_ - begin_;
        begin_ = scan_ = end_ = 0;
      }
      NEARDUP_RETURN_IF_ERROR(Fill());
      continue;
    }
    size_t length = stop - begin_;
    if (length > 0 && base[stop - 1] == '\r') --length;
    *line = Line{std::string_view(base + begin_, length), ++line_number_, false, length};
    if (length > max_line_bytes_) *line = Line{{}, line_number_, true, length};
    begin_ = scan_ = newline != nullptr ? stop + 1 : end_;
    return true;
  }
}

}  // namespace neardup::internal
