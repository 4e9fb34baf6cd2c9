#include "output.h"

#include <cerrno>
#include <cstring>

namespace neardup::cli {
namespace {
constexpr size_t kFlushBytes = size_t{1} << 20;
}

OutputFile::OutputFile(std::FILE* file, std::string name, bool owned)
    : file_(file), name_(std::move(name)), owned_(owned) {}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : file_(other.file_),
      name_(std::move(other.name_)),
      owned_(other.owned_),
      buffer_(std::move(other.buffer_)) {
  other.file_ = nullptr;
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) Close().IgnoreError();
}

Result<OutputFile> OutputFile::Open(const std::string& path) {
  if (path == "-") return OutputFile(stdout, "standard output", false);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return IoError("cannot create " + path + ": " + std::strerror(errno));
  }
  return OutputFile(file, path, true);
}

Status OutputFile::Write(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= kFlushBytes) return Flush();
  return Status::Ok();
}

Status OutputFile::Flush() {
  if (buffer_.empty() || file_ == nullptr) return Status::Ok();
  const size_t size = buffer_.size();
  const size_t written = std::fwrite(buffer_.data(), 1, size, file_);
  buffer_.clear();
  if (written != size) {
    return IoError("cannot write to " + name_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status OutputFile::Close() {
  if (file_ == nullptr) return Status::Ok();
  Status status = Flush();
  int flushed = std::fflush(file_);
  if (status.ok() && flushed != 0) {
    status = IoError("cannot write to " + name_ + ": " + std::strerror(errno));
  }
  if (owned_ && std::fclose(file_) != 0 && status.ok()) {
    status = IoError("cannot close " + name_ + ": " + std::strerror(errno));
  }
  file_ = nullptr;
  return status;
}

}  // namespace neardup::cli
