// One rank's part of the output written at its offset of a file through a
// buffer (parallel_output.h): no MPI, so it is tested on its own.
#ifndef NEARDUP_APPS_MPI_PART_WRITER_H_
#define NEARDUP_APPS_MPI_PART_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::mpi {

// Writes `bytes` at `offset` of `fd`, whole (pwrite may write less). `path`
// names the file in errors.
Status WriteAt(int fd, std::string_view bytes, uint64_t offset, const std::string& path);

// InternalError: a part of `handed` bytes (or more, unless `final`) where
// `planned` were planned.
Status PartSizeError(uint64_t handed, uint64_t planned, bool final);

// A part of exactly `bytes` bytes written from `offset` of `fd`, handed over
// in pieces: they go through one buffer of `buffer_bytes`, written out
// whenever it fills; a piece of `buffer_bytes` or more is written straight
// from where it is once the buffer is out. Nothing is ever written past
// offset + bytes (a longer part would overwrite the next rank's): a piece
// that would is refused, and Finish fails where fewer bytes came.
class PartWriter {
 public:
  PartWriter(int fd, uint64_t offset, uint64_t bytes, std::string path, size_t buffer_bytes);

  // The next piece; after an error, call nothing more.
  Status Add(std::string_view piece);
  // Writes what is buffered; InternalError unless exactly `bytes` came.
  Status Finish();

 private:
  Status Flush();
  Status WriteOut(std::string_view bytes);

  int fd_;
  uint64_t offset_;
  uint64_t bytes_;
  std::string path_;
  size_t buffer_bytes_;
  std::string buffer_;
  uint64_t written_ = 0;  // written to fd_
  uint64_t handed_ = 0;   // handed to Add
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_PART_WRITER_H_
