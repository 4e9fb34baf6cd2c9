#include "io/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "neardup/check.h"

namespace neardup::internal {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Reads a file descriptor with read(2). Owns the descriptor unless it is
// stdin.
class FdStream final : public ByteStream {
 public:
  FdStream(int fd, bool owned, std::string name, std::optional<uint64_t> size, bool has_end)
      : fd_(fd), owned_(owned), name_(std::move(name)), remaining_(size), has_end_(has_end) {}
  ~FdStream() override {
    if (owned_) ::close(fd_);
  }
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;

  Result<size_t> Read(char* buffer, size_t size) override {
    NEARDUP_DCHECK(size > 0);
    while (true) {
      ssize_t n = ::read(fd_, buffer, size);
      if (n >= 0) {
        if (remaining_.has_value()) {
          *remaining_ -= std::min<uint64_t>(*remaining_, static_cast<uint64_t>(n));
        }
        return static_cast<size_t>(n);
      }
      if (errno == EINTR) continue;
      return IoError(name_ + ": read failed: " + ErrnoText(errno));
    }
  }

  std::optional<uint64_t> RemainingSizeHint() const override { return remaining_; }
  bool HasEnd() const override { return has_end_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  std::optional<uint64_t> remaining_;
  bool has_end_;  // a regular file
};

bool IsRegularFile(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

class StringStream final : public ByteStream {
 public:
  explicit StringStream(std::string data) : data_(std::move(data)) {}

  Result<size_t> Read(char* buffer, size_t size) override {
    size_t n = std::min(size, data_.size() - pos_);
    std::memcpy(buffer, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }

  std::optional<uint64_t> RemainingSizeHint() const override { return data_.size() - pos_; }

 private:
  std::string data_;
  size_t pos_ = 0;
};

class PrefixedStream final : public ByteStream {
 public:
  PrefixedStream(std::string prefix, std::unique_ptr<ByteStream> rest)
      : prefix_(std::move(prefix)), rest_(std::move(rest)) {}

  Result<size_t> Read(char* buffer, size_t size) override {
    if (pos_ < prefix_.size()) {
      size_t n = std::min(size, prefix_.size() - pos_);
      std::memcpy(buffer, prefix_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return rest_->Read(buffer, size);
  }

  std::optional<uint64_t> RemainingSizeHint() const override {
    std::optional<uint64_t> rest = rest_->RemainingSizeHint();
    if (!rest.has_value()) return std::nullopt;
    return *rest + (prefix_.size() - pos_);
  }

  bool HasEnd() const override { return rest_->HasEnd(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteStream> rest_;
};

}  // namespace

Result<std::unique_ptr<ByteStream>> OpenFileStream(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) return NotFoundError(path + ": " + ErrnoText(error));
    return IoError(path + ": cannot open: " + ErrnoText(error));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int error = errno;
    ::close(fd);
    return IoError(path + ": cannot stat: " + ErrnoText(error));
  }
  std::optional<uint64_t> size;
  if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size);
    // Whole files are read front to back once: let the kernel read ahead.
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  return std::unique_ptr<ByteStream>(
      std::make_unique<FdStream>(fd, true, path, size, S_ISREG(st.st_mode)));
}

std::unique_ptr<ByteStream> OpenStdinStream() {
  // `< file` makes stdin a regular file; a pipe or a terminal may not end.
  return std::make_unique<FdStream>(STDIN_FILENO, false, "- (stdin)", std::nullopt,
                                    IsRegularFile(STDIN_FILENO));
}

std::unique_ptr<ByteStream> MakeStringStream(std::string data) {
  return std::make_unique<StringStream>(std::move(data));
}

std::unique_ptr<ByteStream> MakePrefixedStream(std::string prefix,
                                               std::unique_ptr<ByteStream> rest) {
  return std::make_unique<PrefixedStream>(std::move(prefix), std::move(rest));
}

Result<size_t> ReadFully(ByteStream* stream, char* buffer, size_t size) {
  size_t total = 0;
  while (total < size) {
    NEARDUP_ASSIGN_OR_RETURN(size_t n, stream->Read(buffer + total, size - total));
    if (n == 0) break;
    total += n;
  }
  return total;
}

}  // namespace neardup::internal
