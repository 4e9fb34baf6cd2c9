// The files of a durable NearDuplicateStream (neardup/stream.h) in its
// directory: snapshot-<generation> (a header record and one add record per
// document in the window, framed as log records) and log-<generation> (the
// write-ahead log of the adds and removes after that snapshot), generations
// as 20 digits. Recovery reads the newest snapshot and the logs from its
// generation on.
// Thread safety: none; the stream serialises access.
#ifndef NEARDUP_STREAM_STREAM_FILES_H_
#define NEARDUP_STREAM_STREAM_FILES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"
#include "neardup/stream.h"
#include "stream/stream_state.h"

namespace neardup::internal {

// dir/PREFIX-<generation as 20 digits>.
std::string StreamFilePath(const std::string& dir, const char* prefix, uint64_t generation);

// The generations of the files named PREFIX-<20 digits> in `dir`, ascending.
std::vector<uint64_t> StreamFileGenerations(const std::string& dir, const std::string& prefix);

// A snapshot being written: snapshot-<generation>.tmp, appended to in
// pieces (a large window's snapshot is never held in memory whole, nor
// written in one go under the writer lock: stream.cc), then made durable and
// renamed to snapshot-<generation> by Finish. Destroying an unfinished one
// removes the temporary file. Errors: ResourceExhausted when the disk
// (quota, file size limit) is full, else IoError; after one, Finish fails.
class SnapshotFile {
 public:
  // Creates the temporary file and writes `header` (a header record's
  // payload) as its first record.
  static Result<std::unique_ptr<SnapshotFile>> Create(const std::string& dir, uint64_t generation,
                                                      std::string_view header);
  ~SnapshotFile();
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;

  // Appends framed records (AppendLogRecord's output).
  Status Append(std::string_view records);
  // fsync (when `sync`), close, rename, directory fsync (when `sync`). On
  // error the temporary file is removed.
  Status Finish(bool sync);

  uint64_t generation() const { return generation_; }
  uint64_t bytes() const { return bytes_; }

 private:
  SnapshotFile(std::string dir, uint64_t generation, int fd);
  Status Fail(const char* what);

  std::string dir_;
  uint64_t generation_;
  std::string temporary_;
  int fd_;  // -1 once closed
  uint64_t bytes_ = 0;
  Status failed_;
};

// Removes snapshot-*.tmp files left by a process that stopped while writing
// one (a stream's directory has one writer: call only when opening it).
void RemoveSnapshotLeftovers(const std::string& dir);

// Applies one log record (add or remove) to `state`. DataLoss for a record
// that does not follow the state.
Status ApplyStreamRecord(std::string_view record, StreamState* state);

// The newest log that holds anything, when empty logs follow it (logs
// created ahead of their use: a stream's spare log, stream_rotation.cc):
// its records may be in the page cache only and its tail may be torn, so
// before anything is written to a newer log the caller opens it at
// valid_bytes (WriteAheadLog::Open cuts the tail and syncs what is left).
struct StreamLogBeforeEmpty {
  bool found = false;
  uint64_t generation = 0;
  uint64_t valid_bytes = 0;
};

// Loads the newest snapshot of `dir` and replays the logs after it, up to
// generation `last_log`, into `state` (a fresh one, of the stream's
// config); sets the generation of the last log and the length of its valid
// records, and counts in *recovery. *earlier_bytes (when not null): the
// bytes read before the last log (the snapshot file and the logs between it
// and the last one, a cut log's valid bytes); *snapshot_bytes (when not
// null): the snapshot file's; *before_empty (when not null): see
// StreamLogBeforeEmpty.
// Only the newest log that holds records may end in a torn or corrupt
// tail: the last log, or one that only empty logs follow (session 18: a
// log created ahead of time). That tail is reported in *recovery and cut by
// the caller (when it opens the last log, or *before_empty). A crash tears
// a log only after its last acknowledged record (nothing is written to a
// log before the one before it is durable whole); a corrupt record there
// (a flipped byte) cuts acknowledged records, as in the last log before.
// A bad record in any other log is DataLoss. Reads only.
Status LoadStreamFiles(const std::string& dir, StreamState* state, StreamRecovery* recovery,
                       uint64_t* generation, uint64_t* valid_bytes,
                       uint64_t* earlier_bytes = nullptr, uint64_t* snapshot_bytes = nullptr,
                       StreamLogBeforeEmpty* before_empty = nullptr,
                       uint64_t last_log = UINT64_MAX);

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_FILES_H_
