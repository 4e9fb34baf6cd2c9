#include "neardup/write_ahead_log.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "util/status_fallback.h"

namespace neardup {
namespace {

void PutU32(uint32_t value, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
void PutU64(uint64_t value, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}
uint64_t GetU64(const char* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

Status ErrnoError(const std::string& what, const std::string& path) {
  return IoError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

// The one place the frozen record header is written.
void FrameLogRecordInPlace(char* record, size_t payload_bytes) {
  const char* payload = record + kLogRecordHeaderBytes;
  PutU32(static_cast<uint32_t>(payload_bytes), record);
  PutU64(XXH3_64bits(payload, payload_bytes), record + 4);
}

void AppendLogRecord(std::string_view payload, std::string* out) {
  const size_t at = out->size();
  out->resize(at + kLogRecordHeaderBytes + payload.size());
  char* record = out->data() + at;
  if (!payload.empty()) std::memcpy(record + kLogRecordHeaderBytes, payload.data(), payload.size());
  FrameLogRecordInPlace(record, payload.size());
}

Result<LogContents> ReadLogFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return IoError("cannot open log " + path + ": " + std::strerror(errno));
  // One read of the whole file (a character iterator ran at a few tens of
  // MB/s: most of a recovery's time).
  const std::streamoff size = in.tellg();
  if (size < 0) return IoError("cannot read log " + path);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return IoError("cannot read log " + path);
  LogContents contents;
  contents.file_bytes = bytes.size();
  size_t offset = 0;
  while (offset < bytes.size()) {
    const std::string at = "record at offset " + std::to_string(offset) + ": ";
    if (bytes.size() - offset < kLogRecordHeaderBytes) {
      contents.tail_error = at + "header cut short (" + std::to_string(bytes.size() - offset) +
                            " of " + std::to_string(kLogRecordHeaderBytes) + " bytes)";
      break;
    }
    const uint32_t length = GetU32(bytes.data() + offset);
    const uint64_t checksum = GetU64(bytes.data() + offset + 4);
    if (length > kMaxLogRecordBytes) {
      contents.tail_error = at + "length " + std::to_string(length) + " exceeds the maximum " +
                            std::to_string(kMaxLogRecordBytes);
      break;
    }
    if (bytes.size() - offset - kLogRecordHeaderBytes < length) {
      contents.tail_error = at + "payload cut short (" +
                            std::to_string(bytes.size() - offset - kLogRecordHeaderBytes) + " of " +
                            std::to_string(length) + " bytes)";
      break;
    }
    const char* payload = bytes.data() + offset + kLogRecordHeaderBytes;
    if (XXH3_64bits(payload, length) != checksum) {
      contents.tail_error = at + "checksum mismatch";
      break;
    }
    contents.records.emplace_back(payload, length);
    offset += kLogRecordHeaderBytes + length;
  }
  contents.valid_bytes = offset;
  return contents;
}

Result<std::unique_ptr<WriteAheadLog>> WriteAheadLog::Open(const std::string& path,
                                                           uint64_t valid_bytes,
                                                           const WriteAheadLogOptions& options) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot open log", path);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0 || static_cast<uint64_t>(end) < valid_bytes) {
    ::close(fd);
    return DataLossError("log " + path + " is shorter (" + std::to_string(end) +
                         " bytes) than its valid records (" + std::to_string(valid_bytes) + ")");
  }
  uint64_t syncs = 0;
  if (static_cast<uint64_t>(end) > valid_bytes) {
    if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0 || ::fdatasync(fd) != 0) {
      Status status = ErrnoError("cannot truncate the bad tail of log", path);
      ::close(fd);
      return status;
    }
    ++syncs;
  } else if (options.sync && valid_bytes > 0) {
    // The records found may be only in the page cache (a process killed
    // before its sync): they count as durable (synced_size) only once
    // synced here, else a roll-over or a retry of a stored id could build
    // on bytes a power loss would tear.
    if (::fdatasync(fd) != 0) {
      Status status = ErrnoError("cannot sync the records of log", path);
      ::close(fd);
      return status;
    }
    ++syncs;
  }
  if (::lseek(fd, static_cast<off_t>(valid_bytes), SEEK_SET) < 0) {
    Status status = ErrnoError("cannot seek in log", path);
    ::close(fd);
    return status;
  }
  return std::unique_ptr<WriteAheadLog>(new WriteAheadLog(path, fd, valid_bytes, syncs, options));
}

WriteAheadLog::WriteAheadLog(std::string path, int fd, uint64_t size, uint64_t syncs,
                             WriteAheadLogOptions options)
    : path_(std::move(path)),
      fd_(fd),
      options_(options),
      written_(size),
      synced_(size),
      syncs_(syncs) {}

WriteAheadLog::~WriteAheadLog() { ::close(fd_); }

namespace {

Status CheckRecordSize(size_t bytes) {
  if (bytes <= kMaxLogRecordBytes) return Status::Ok();
  return InvalidArgumentError("log record of " + std::to_string(bytes) +
                              " bytes exceeds the maximum " + std::to_string(kMaxLogRecordBytes));
}

}  // namespace

Result<uint64_t> WriteAheadLog::Append(std::string_view payload) {
  NEARDUP_RETURN_IF_ERROR(CheckRecordSize(payload.size()));
  uint64_t start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    start = written_;
  }
  buffer_.clear();
  AppendLogRecord(payload, &buffer_);
  const size_t end = buffer_.size();
  return WriteBuffer(start, buffer_, std::span<const size_t>(&end, 1), nullptr);
}

Result<uint64_t> WriteAheadLog::AppendBatch(std::span<const std::string> payloads,
                                            size_t* appended) {
  if (appended != nullptr) *appended = 0;
  size_t bytes = 0;
  for (size_t i = 0; i < payloads.size(); ++i) {
    NEARDUP_RETURN_IF_ERROR(
        CheckRecordSize(payloads[i].size()).WithContext("record " + std::to_string(i)));
    bytes += kLogRecordHeaderBytes + payloads[i].size();
  }
  uint64_t start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    start = written_;
  }
  if (payloads.empty()) return start;
  buffer_.clear();
  buffer_.reserve(bytes);
  std::vector<size_t> ends;
  ends.reserve(payloads.size());
  for (const std::string& payload : payloads) {
    AppendLogRecord(payload, &buffer_);
    ends.push_back(buffer_.size());
  }
  return WriteBuffer(start, buffer_, ends, appended);
}

Result<uint64_t> WriteAheadLog::AppendFramed(std::string_view framed, std::span<const size_t> ends,
                                             size_t* appended) {
  if (appended != nullptr) *appended = 0;
  size_t begin = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] < begin || ends[i] - begin < kLogRecordHeaderBytes || ends[i] > framed.size()) {
      return InvalidArgumentError("framed record " + std::to_string(i) + " ends at " +
                                  std::to_string(ends[i]) + ", not past its header at " +
                                  std::to_string(begin) + " within " +
                                  std::to_string(framed.size()) + " bytes");
    }
    const size_t payload_bytes = ends[i] - begin - kLogRecordHeaderBytes;
    NEARDUP_RETURN_IF_ERROR(
        CheckRecordSize(payload_bytes).WithContext("record " + std::to_string(i)));
    // The record's length field must say where it ends: an end skipped or
    // inside a payload would let a failed write cut the file mid-record.
    const uint32_t length = GetU32(framed.data() + begin);
    if (length != payload_bytes) {
      return InvalidArgumentError("framed record " + std::to_string(i) + " at " +
                                  std::to_string(begin) + " has length " + std::to_string(length) +
                                  " but ends at " + std::to_string(ends[i]) + " (" +
                                  std::to_string(payload_bytes) + " payload bytes)");
    }
    begin = ends[i];
  }
  if (begin != framed.size()) {
    return InvalidArgumentError(std::to_string(framed.size() - begin) +
                                " framed bytes past the last record");
  }
  uint64_t start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    start = written_;
  }
  if (ends.empty()) return start;
  return WriteBuffer(start, framed, ends, appended);
}

Result<uint64_t> WriteAheadLog::WriteBuffer(uint64_t start, std::string_view data,
                                            std::span<const size_t> ends, size_t* appended) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // ENOSPC or EIO: cut the partial record off so the file ends on a
      // record boundary (the records written whole stay: the caller knows
      // how many); if even that fails, nothing more may be appended.
      // A full disk (or quota, or file size limit) is the caller's to fix:
      // ResourceExhausted, which the service answers with 507.
      const int saved_errno = n == 0 ? ENOSPC : errno;
      const bool full = saved_errno == ENOSPC || saved_errno == EDQUOT || saved_errno == EFBIG;
      const size_t whole =
          static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), done) - ends.begin());
      const uint64_t kept = start + (whole == 0 ? 0 : ends[whole - 1]);
      const bool cut = ::ftruncate(fd_, static_cast<off_t>(kept)) == 0 &&
                       ::lseek(fd_, static_cast<off_t>(kept), SEEK_SET) >= 0;
      // Built after the cut (session 18): out of memory building the message
      // must not leave the torn record in the file, nor the offset past it.
      Status status = internal::StatusOrShort(
          full ? StatusCode::kResourceExhausted : StatusCode::kIoError, "log write error", [&] {
            return full ? ResourceExhaustedError("no space to append to log " + path_ + ": " +
                                                 std::strerror(saved_errno))
                        : IoError("cannot append to log " + path_ + ": " +
                                  std::strerror(saved_errno));
          });
      std::lock_guard<std::mutex> lock(mutex_);
      written_ = kept;
      if (appended != nullptr) *appended = whole;
      if (!cut) {
        broken_ = std::move(status);
        return broken_;
      }
      return status;
    }
    done += static_cast<size_t>(n);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++appends_;
  written_ = start + data.size();
  if (appended != nullptr) *appended = ends.size();
  return written_;
}

Status WriteAheadLog::SyncTo(uint64_t lsn) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (synced_ < lsn) {
    if (!broken_.ok()) return broken_;
    if (syncing_) {
      synced_changed_.wait(lock);
      continue;
    }
    // This caller leads: it syncs everything written so far, covering every
    // waiter whose record is already in the file.
    syncing_ = true;
    const uint64_t target = written_;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    const int rc = options_.sync ? ::fdatasync(fd_) : 0;
    const int saved_errno = errno;
    const auto elapsed = std::chrono::steady_clock::now() - start;
    lock.lock();
    syncing_ = false;
    ++syncs_;
    sync_nanoseconds_ += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    if (rc != 0) {
      // After a failed fdatasync the kernel may have dropped the dirty pages:
      // what is in the file is unknown, so the log stops here.
      broken_ = IoError("cannot sync log " + path_ + ": " + std::strerror(saved_errno));
    } else if (target > synced_) {
      synced_ = target;
    }
    synced_changed_.notify_all();
  }
  return Status::Ok();
}

uint64_t WriteAheadLog::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

bool WriteAheadLog::broken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !broken_.ok();
}

uint64_t WriteAheadLog::synced_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return synced_;
}
uint64_t WriteAheadLog::appends() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return appends_;
}
uint64_t WriteAheadLog::syncs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return syncs_;
}
uint64_t WriteAheadLog::sync_nanoseconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sync_nanoseconds_;
}

Status SyncDirectory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open directory", path);
  const int rc = ::fsync(fd);
  Status status = rc == 0 ? Status::Ok() : ErrnoError("cannot sync directory", path);
  ::close(fd);
  return status;
}

}  // namespace neardup
