#include "stream/stream_files.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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

Status WriteStreamSnapshot(const std::string& dir, uint64_t generation, const StreamState& state,
                           bool sync, uint64_t* bytes_written) {
  const std::string path = StreamFilePath(dir, "snapshot", generation);
  const std::string temporary = path + ".tmp";
  FILE* out = std::fopen(temporary.c_str(), "wb");
  if (out == nullptr) return IoError("cannot create " + temporary + ": " + std::strerror(errno));
  // Written in pieces of about kSnapshotBufferBytes: the snapshot of a
  // large window is never held in memory whole (it was one string as large
  // as the window's state, grown by reallocation, under the writer lock).
  constexpr size_t kSnapshotBufferBytes = size_t{1} << 20;
  std::string bytes;
  uint64_t total = 0;
  bool written = true;
  auto flush = [&] {
    written = written && std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
    total += bytes.size();
    bytes.clear();
  };
  AppendLogRecord(EncodeHeader(state.Header()), &bytes);
  state.ForEachDoc([&](const StreamDoc& doc) {
    AppendLogRecord(EncodeAdd(doc), &bytes);
    if (bytes.size() >= kSnapshotBufferBytes) flush();
  });
  flush();
  written = written && std::fflush(out) == 0 && (!sync || ::fsync(fileno(out)) == 0);
  const int saved_errno = errno;
  std::fclose(out);
  if (!written) {
    std::remove(temporary.c_str());
    const std::string message =
        "cannot write snapshot " + temporary + ": " + std::strerror(saved_errno);
    return IsDiskFull(saved_errno) ? ResourceExhaustedError(message) : IoError(message);
  }
  *bytes_written = total;
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return IoError("cannot rename " + temporary + ": " + std::strerror(errno));
  }
  return sync ? SyncDirectory(dir) : Status::Ok();
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
                       uint64_t* generation, uint64_t* valid_bytes) {
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
  for (size_t i = 1; i < snapshot.records.size(); ++i) {
    NEARDUP_ASSIGN_OR_RETURN(StreamDoc doc, DecodeAdd(snapshot.records[i]));
    NEARDUP_RETURN_IF_ERROR(state->LoadDoc(std::move(doc)));
    ++recovery->snapshot_documents;
  }
  // Logs from the snapshot's generation on; older ones are left-overs of an
  // interrupted clean-up and hold nothing the snapshot lacks.
  std::vector<uint64_t> logs;
  for (uint64_t g : StreamFileGenerations(dir, "log")) {
    if (g >= *generation) logs.push_back(g);
  }
  *valid_bytes = 0;
  for (size_t i = 0; i < logs.size(); ++i) {
    const std::string path = StreamFilePath(dir, "log", logs[i]);
    NEARDUP_ASSIGN_OR_RETURN(LogContents contents, ReadLogFile(path));
    const bool last = i + 1 == logs.size();
    if (!contents.tail_error.empty()) {
      if (!last) return DataLossError("log " + path + " is corrupt: " + contents.tail_error);
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
    }
  }
  return Status::Ok();
}

}  // namespace neardup::internal
