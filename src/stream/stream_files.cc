#include "stream/stream_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "neardup/write_ahead_log.h"
#include "stream/stream_record.h"

namespace neardup::internal {
namespace {

namespace fs = std::filesystem;

// The errors of a full disk, quota or file size limit.
bool IsDiskFull(int error) { return error == ENOSPC || error == EDQUOT || error == EFBIG; }

}  // namespace

std::string StreamFilePath(const std::string& dir, const char* prefix, uint64_t generation) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%020llu", prefix,
                static_cast<unsigned long long>(generation));
  return (fs::path(dir) / name).string();
}

std::vector<uint64_t> StreamFileGenerations(const std::string& dir, const std::string& prefix) {
  std::vector<uint64_t> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != prefix.size() + 21 || name.compare(0, prefix.size(), prefix) != 0 ||
        name[prefix.size()] != '-') {
      continue;
    }
    const std::string digits = name.substr(prefix.size() + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    found.push_back(std::stoull(digits));
  }
  std::sort(found.begin(), found.end());
  return found;
}

SnapshotFile::SnapshotFile(std::string dir, uint64_t generation, int fd)
    : dir_(std::move(dir)),
      generation_(generation),
      temporary_(StreamFilePath(dir_, "snapshot", generation) + ".tmp"),
      fd_(fd) {}

Result<std::unique_ptr<SnapshotFile>> SnapshotFile::Create(const std::string& dir,
                                                           uint64_t generation,
                                                           std::string_view header) {
  const std::string temporary = StreamFilePath(dir, "snapshot", generation) + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const std::string message = "cannot create " + temporary + ": " + std::strerror(errno);
    return IsDiskFull(errno) ? ResourceExhaustedError(message) : IoError(message);
  }
  std::unique_ptr<SnapshotFile> file(new SnapshotFile(dir, generation, fd));
  std::string record;
  AppendLogRecord(header, &record);
  NEARDUP_RETURN_IF_ERROR(file->Append(record));
  return file;
}

SnapshotFile::~SnapshotFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  std::remove(temporary_.c_str());
}

Status SnapshotFile::Fail(const char* what) {
  const int error = errno;
  const std::string message =
      std::string("cannot ") + what + " snapshot " + temporary_ + ": " + std::strerror(error);
  failed_ = IsDiskFull(error) ? ResourceExhaustedError(message) : IoError(message);
  return failed_;
}

Status SnapshotFile::Append(std::string_view records) {
  NEARDUP_RETURN_IF_ERROR(failed_);
  while (!records.empty()) {
    const ssize_t n = ::write(fd_, records.data(), records.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return Fail("write");
    }
    records.remove_prefix(static_cast<size_t>(n));
    bytes_ += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status SnapshotFile::Finish(bool sync) {
  NEARDUP_RETURN_IF_ERROR(failed_);
  if (sync && ::fsync(fd_) != 0) return Fail("sync");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const Status status = Fail("close");
    std::remove(temporary_.c_str());
    return status;
  }
  const std::string path = StreamFilePath(dir_, "snapshot", generation_);
  if (std::rename(temporary_.c_str(), path.c_str()) != 0) {
    const Status status = Fail("rename");
    std::remove(temporary_.c_str());
    return status;
  }
  return sync ? SyncDirectory(dir_) : Status::Ok();
}

void RemoveSnapshotLeftovers(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("snapshot-", 0) == 0 && name.size() > 4 &&
        name.compare(name.size() - 4, 4, ".tmp") == 0) {
      std::remove(entry.path().c_str());
    }
  }
}

Status ApplyStreamRecord(std::string_view record, StreamState* state) {
  NEARDUP_ASSIGN_OR_RETURN(StreamRecordType type, RecordType(record));
  if (type == StreamRecordType::kAdd) {
    NEARDUP_ASSIGN_OR_RETURN(StreamDoc doc, DecodeAdd(record));
    return state->ApplyAdd(std::move(doc));
  }
  if (type == StreamRecordType::kRemove) {
    NEARDUP_ASSIGN_OR_RETURN(std::string id, DecodeRemove(record));
    Status status = state->ApplyRemove(id);
    // A logged remove always found its document.
    return status.ok() ? status : DataLossError("log removes an absent id \"" + id + "\"");
  }
  return DataLossError("a header record inside a log");
}

Status LoadStreamFiles(const std::string& dir, StreamState* state, StreamRecovery* recovery,
                       uint64_t* generation, uint64_t* valid_bytes, uint64_t* earlier_bytes,
                       uint64_t* snapshot_bytes, StreamLogBeforeEmpty* before_empty,
                       uint64_t last_log) {
  std::vector<uint64_t> snapshots = StreamFileGenerations(dir, "snapshot");
  if (snapshots.empty()) return NotFoundError("no stream in " + dir);
  *generation = snapshots.back();
  const std::string snapshot_path = StreamFilePath(dir, "snapshot", *generation);
  NEARDUP_ASSIGN_OR_RETURN(LogContents snapshot, ReadLogFile(snapshot_path));
  if (!snapshot.tail_error.empty() || snapshot.records.empty()) {
    return DataLossError("snapshot " + snapshot_path + " is corrupt: " +
                         (snapshot.tail_error.empty() ? "no header" : snapshot.tail_error));
  }
  NEARDUP_ASSIGN_OR_RETURN(StreamHeader header, DecodeHeader(snapshot.records[0]));
  state->RestoreHeader(header);
  uint64_t earlier = snapshot.file_bytes;
  if (snapshot_bytes != nullptr) *snapshot_bytes = snapshot.file_bytes;
  for (size_t i = 1; i < snapshot.records.size(); ++i) {
    NEARDUP_ASSIGN_OR_RETURN(StreamDoc doc, DecodeAdd(snapshot.records[i]));
    NEARDUP_RETURN_IF_ERROR(state->LoadDoc(std::move(doc)));
    ++recovery->snapshot_documents;
  }
  // Logs from the snapshot's generation on; older ones are left-overs of an
  // interrupted clean-up and hold nothing the snapshot lacks.
  std::vector<uint64_t> logs;
  for (uint64_t g : StreamFileGenerations(dir, "log")) {
    if (g >= *generation && g <= last_log) logs.push_back(g);
  }
  // The logs from `tail_allowed` on hold nothing but the first of them: it
  // is the only one whose tail may be torn (the newest log, or the newest
  // that holds anything when empty ones follow it).
  size_t tail_allowed = logs.empty() ? 0 : logs.size() - 1;
  while (tail_allowed > 0) {
    std::error_code ec;
    const uintmax_t bytes = fs::file_size(StreamFilePath(dir, "log", logs[tail_allowed]), ec);
    if (ec || bytes != 0) break;  // (a size that cannot be read: as not empty)
    --tail_allowed;
  }
  if (before_empty != nullptr) *before_empty = StreamLogBeforeEmpty{};
  *valid_bytes = 0;
  for (size_t i = 0; i < logs.size(); ++i) {
    const std::string path = StreamFilePath(dir, "log", logs[i]);
    NEARDUP_ASSIGN_OR_RETURN(LogContents contents, ReadLogFile(path));
    const bool last = i + 1 == logs.size();
    if (!contents.tail_error.empty()) {
      if (i != tail_allowed) {
        return DataLossError("log " + path + " is corrupt: " + contents.tail_error);
      }
      recovery->truncated_bytes = contents.file_bytes - contents.valid_bytes;
      recovery->truncation = path + ": " + contents.tail_error + "; " +
                             std::to_string(recovery->truncated_bytes) + " bytes cut";
    }
    for (const std::string& record : contents.records) {
      NEARDUP_RETURN_IF_ERROR(ApplyStreamRecord(record, state).WithContext(path));
      ++recovery->replayed_records;
    }
    if (last) {
      *generation = logs[i];
      *valid_bytes = contents.valid_bytes;
    } else if (i == tail_allowed) {
      earlier += contents.valid_bytes;
      if (before_empty != nullptr) *before_empty = {true, logs[i], contents.valid_bytes};
    } else {
      earlier += contents.file_bytes;
    }
  }
  if (earlier_bytes != nullptr) *earlier_bytes = earlier;
  return Status::Ok();
}

}  // namespace neardup::internal
