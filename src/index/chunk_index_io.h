// File helpers shared by the chunk index and the collection store: a
// read-only memory mapping, an atomic file writer (temporary file, fsync,
// rename, fsync of the directory), the 64-bit checksum of stored files and
// the checks every flat file's header goes through.
// Thread safety: a MappedFile is immutable; a writer is used by one thread.
#ifndef NEARDUP_INDEX_CHUNK_INDEX_IO_H_
#define NEARDUP_INDEX_CHUNK_INDEX_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "neardup/env.h"
#include "neardup/status.h"

namespace neardup::internal {

// XXH3-64 (seed 0) of `bytes`. Frozen: stored in file headers.
uint64_t StoredChecksum(std::span<const uint8_t> bytes);

// StoredChecksum of a byte stream given in pieces.
class StreamingChecksum {
 public:
  StreamingChecksum();
  ~StreamingChecksum();
  StreamingChecksum(const StreamingChecksum&) = delete;
  StreamingChecksum& operator=(const StreamingChecksum&) = delete;
  void Update(std::span<const uint8_t> bytes);
  void UpdateZeros(size_t count);
  uint64_t Digest() const;

 private:
  void* state_;  // XXH3_state_t
};

// The whole of a file, mapped read-only.
class MappedFile {
 public:
  // NotFound, IoError; an empty file maps to an empty span.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(const uint8_t* data, size_t size, std::string path)
      : data_(data), size_(size), path_(std::move(path)) {}
  const uint8_t* data_;
  size_t size_;
  std::string path_;
};

// Writes `path` so that after a crash it holds nothing or all of what was
// written: bytes go to "<path>.tmp"; Commit fsyncs it, renames it over
// `path` and fsyncs the directory. Destroying an uncommitted writer removes
// the temporary file. Every file operation goes through `env` (null: the
// default).
class AtomicFileWriter {
 public:
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path,
                                                          Env* env = nullptr);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  Status Append(std::span<const uint8_t> bytes);
  Status Append(std::string_view bytes) {
    return Append({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  }
  // Appends zero bytes up to the next multiple of `alignment`.
  Status PadTo(size_t alignment);
  // Overwrites bytes at `offset` (already written), e.g. a header finished last.
  Status WriteAt(uint64_t offset, std::span<const uint8_t> bytes);
  uint64_t size() const { return size_; }
  Status Commit();

 private:
  AtomicFileWriter(Env* env, std::unique_ptr<WritableFile> file, std::string path)
      : env_(env), file_(std::move(file)), path_(std::move(path)) {}
  Status Flush();

  Env* env_;
  std::unique_ptr<WritableFile> file_;
  std::string path_;
  std::string buffer_;
  uint64_t size_ = 0;
  bool committed_ = false;
};

// fsyncs a directory so that renames and unlinks in it are durable.
Status FsyncDirectory(const std::string& dir, Env* env = nullptr);

// Copies the header at the start of `bytes` into *header and checks what
// every flat file shares, in the order that gives the clearest message:
// size, magic, header checksum, version. `kind` names the file in messages
// ("segment", "chunk index"). Header must begin with `char magic[8]` and hold
// `uint32_t version` and `uint64_t header_checksum`; `checksum(header)`
// computes the latter. Truncation, bad magic and a bad checksum are DataLoss;
// a version above `max_version` is FailedPrecondition.
template <typename Header, typename Checksum>
Status ReadFlatFileHeader(std::string_view kind, const std::string& path,
                          std::span<const uint8_t> bytes, const char (&magic)[8],
                          uint32_t max_version, Checksum checksum, Header* header) {
  const std::string name = std::string(kind) + " " + path;
  if (bytes.size() < sizeof(Header)) {
    return DataLossError(name + " is truncated: " + std::to_string(bytes.size()) +
                         " bytes, less than the header (" + std::to_string(sizeof(Header)) + ")");
  }
  std::memcpy(header, bytes.data(), sizeof(Header));
  if (std::memcmp(header->magic, magic, sizeof(magic)) != 0) {
    return DataLossError(path + " is not a neardup " + std::string(kind) + " (bad magic)");
  }
  if (checksum(*header) != header->header_checksum) {
    return DataLossError(name + " has a corrupt header (checksum mismatch)");
  }
  if (header->version > max_version) {
    return FailedPreconditionError(name + " has format version " + std::to_string(header->version) +
                                   ", newer than this build supports (" +
                                   std::to_string(max_version) + ")");
  }
  return Status::Ok();
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_CHUNK_INDEX_IO_H_
