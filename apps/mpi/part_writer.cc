#include "part_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace neardup::mpi {

Status WriteAt(int fd, std::string_view bytes, uint64_t offset, const std::string& path) {
  // At most 1 GiB a call: Linux writes at most about 2 GiB per call anyway.
  constexpr size_t kMaxCall = size_t{1} << 30;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::pwrite(fd, bytes.data() + done, std::min(kMaxCall, bytes.size() - done),
                                   static_cast<off_t>(offset + done));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      return IoError(
          "cannot write this rank's part of the output to " + path + ": " +
          (wrote < 0 ? std::string(std::strerror(errno)) : std::string("nothing written")));
    }
    done += static_cast<size_t>(wrote);
  }
  return Status::Ok();
}

Status PartSizeError(uint64_t handed, uint64_t planned, bool final) {
  return InternalError("this rank's part of the output is " + std::to_string(handed) +
                       (final ? " bytes" : " bytes or more") + ", not the " +
                       std::to_string(planned) + " planned");
}

PartWriter::PartWriter(int fd, uint64_t offset, uint64_t bytes, std::string path,
                       size_t buffer_bytes)
    : fd_(fd),
      offset_(offset),
      bytes_(bytes),
      path_(std::move(path)),
      buffer_bytes_(std::max<size_t>(1, buffer_bytes)) {
  buffer_.reserve(static_cast<size_t>(std::min<uint64_t>(bytes, buffer_bytes_)));
}

Status PartWriter::WriteOut(std::string_view bytes) {
  // Never past the planned end: a longer part would overwrite the next
  // rank's.
  if (written_ + bytes.size() > bytes_) return PartSizeError(handed_, bytes_, false);
  NEARDUP_RETURN_IF_ERROR(WriteAt(fd_, bytes, offset_ + written_, path_));
  written_ += bytes.size();
  return Status::Ok();
}

Status PartWriter::Flush() {
  Status status = WriteOut(buffer_);
  buffer_.clear();
  return status;
}

Status PartWriter::Add(std::string_view piece) {
  handed_ += piece.size();
  if (buffer_.size() + piece.size() > buffer_bytes_ && !buffer_.empty()) {
    NEARDUP_RETURN_IF_ERROR(Flush());
  }
  // The buffer is empty here; copying the piece in would only grow it.
  if (piece.size() >= buffer_bytes_) return WriteOut(piece);
  buffer_.append(piece);
  if (buffer_.size() >= buffer_bytes_) return Flush();
  return Status::Ok();
}

Status PartWriter::Finish() {
  NEARDUP_RETURN_IF_ERROR(Flush());
  if (handed_ != bytes_) return PartSizeError(handed_, bytes_, true);
  return Status::Ok();
}

}  // namespace neardup::mpi
