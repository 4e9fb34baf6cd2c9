#include "index/chunk_index_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace neardup::internal {
namespace {

constexpr size_t kWriteBuffer = size_t{1} << 20;

std::string SystemError(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

Status WriteAll(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(SystemError("write", path));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

uint64_t StoredChecksum(std::span<const uint8_t> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

StreamingChecksum::StreamingChecksum() : state_(XXH3_createState()) {
  NEARDUP_CHECK(state_ != nullptr) << "out of memory";
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

StreamingChecksum::~StreamingChecksum() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void StreamingChecksum::Update(std::span<const uint8_t> bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

void StreamingChecksum::UpdateZeros(size_t count) {
  static constexpr uint8_t kZeros[256] = {};
  while (count > 0) {
    size_t n = std::min(count, sizeof(kZeros));
    Update({kZeros, n});
    count -= n;
  }
}

uint64_t StreamingChecksum::Digest() const {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(SystemError("open", path));
    return IoError(SystemError("open", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status status = IoError(SystemError("stat", path));
    ::close(fd);
    return status;
  }
  size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
      Status status = IoError(SystemError("mmap", path));
      ::close(fd);
      return status;
    }
    data = static_cast<const uint8_t*>(mapped);
  }
  ::close(fd);
  return std::unique_ptr<MappedFile>(new MappedFile(data, size, path));
}

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(SystemError("create", tmp));
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(fd, path));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink((path_ + ".tmp").c_str());
}

Status AtomicFileWriter::Flush() {
  Status status = WriteAll(fd_, reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size(),
                           path_ + ".tmp");
  buffer_.clear();
  return status;
}

Status AtomicFileWriter::Append(std::span<const uint8_t> bytes) {
  size_ += bytes.size();
  if (buffer_.size() + bytes.size() > kWriteBuffer) {
    NEARDUP_RETURN_IF_ERROR(Flush());
    if (bytes.size() >= kWriteBuffer) {
      return WriteAll(fd_, bytes.data(), bytes.size(), path_ + ".tmp");
    }
  }
  buffer_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return Status::Ok();
}

Status AtomicFileWriter::PadTo(size_t alignment) {
  static constexpr uint8_t kZeros[256] = {};
  NEARDUP_CHECK(alignment <= sizeof(kZeros));
  size_t pad = static_cast<size_t>((alignment - size_ % alignment) % alignment);
  return Append({kZeros, pad});
}

Status AtomicFileWriter::WriteAt(uint64_t offset, std::span<const uint8_t> bytes) {
  NEARDUP_RETURN_IF_ERROR(Flush());
  const uint8_t* data = bytes.data();
  size_t size = bytes.size();
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(SystemError("write", path_ + ".tmp"));
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  std::string tmp = path_ + ".tmp";
  NEARDUP_RETURN_IF_ERROR(Flush());
  if (::fsync(fd_) != 0) return IoError(SystemError("fsync", tmp));
  if (::close(fd_) != 0) {
    fd_ = -1;
    return IoError(SystemError("close", tmp));
  }
  fd_ = -1;
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return IoError(SystemError("rename", tmp));
  committed_ = true;
  std::string dir = std::filesystem::path(path_).parent_path().string();
  return FsyncDirectory(dir.empty() ? "." : dir);
}

Status FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(SystemError("open directory", dir));
  int rc = ::fsync(fd);
  Status status = rc == 0 ? Status::Ok() : IoError(SystemError("fsync directory", dir));
  ::close(fd);
  return status;
}

}  // namespace neardup::internal
