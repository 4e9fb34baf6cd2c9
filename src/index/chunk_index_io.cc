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

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path,
                                                                   Env* env) {
  if (env == nullptr) env = Env::Default();
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env->NewWritableFile(path + ".tmp"));
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(env, std::move(file), path));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_) return;
  file_.reset();
  env_->RemoveFile(path_ + ".tmp").IgnoreError();
}

Status AtomicFileWriter::Flush() {
  Status status = file_->Append({reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size()});
  buffer_.clear();
  return status;
}

Status AtomicFileWriter::Append(std::span<const uint8_t> bytes) {
  size_ += bytes.size();
  if (buffer_.size() + bytes.size() > kWriteBuffer) {
    NEARDUP_RETURN_IF_ERROR(Flush());
    if (bytes.size() >= kWriteBuffer) return file_->Append(bytes);
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
  return file_->WriteAt(offset, bytes);
}

Status AtomicFileWriter::Commit() {
  const std::string tmp = path_ + ".tmp";
  NEARDUP_RETURN_IF_ERROR(Flush());
  NEARDUP_RETURN_IF_ERROR(file_->Sync());
  NEARDUP_RETURN_IF_ERROR(file_->Close());
  NEARDUP_RETURN_IF_ERROR(env_->RenameFile(tmp, path_));
  committed_ = true;
  std::string dir = std::filesystem::path(path_).parent_path().string();
  return FsyncDirectory(dir.empty() ? "." : dir, env_);
}

Status FsyncDirectory(const std::string& dir, Env* env) {
  return (env == nullptr ? Env::Default() : env)->SyncDirectory(dir);
}

}  // namespace neardup::internal
