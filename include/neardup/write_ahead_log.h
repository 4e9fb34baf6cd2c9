// WriteAheadLog: an append-only file of checksummed, length-prefixed records
// with group commit, the durability layer of a NearDuplicateStream
// (neardup/stream.h) and of anything else that must not lose what it
// acknowledged.
//
// Record framing (little-endian, frozen): [u32 payload length][u64 XXH3-64
// (seed 0) of the payload][payload]. A reader stops at the first record
// whose header or payload runs past the end of the file (a torn write) or
// whose checksum does not match (a corrupt or half-written record); what
// follows that point is never returned.
//
// Group commit: Append() writes a record to the file (the page cache) and
// returns its log sequence number (the file offset just past it);
// SyncTo(lsn) returns once everything up to lsn is on disk. Concurrent
// SyncTo callers share one fdatasync: the first waiter becomes the leader,
// syncs everything written so far, and wakes every caller it covered.
// Cost: Append (one record), AppendBatch (many) and AppendFramed (many the
// caller framed, no copy into the log's buffer) are one write() each (a
// copy into the page cache); SyncTo is at most one fdatasync per group of
// waiters. On disk a record costs kLogRecordHeaderBytes (12) besides its
// payload.
// Thread safety: Append must be serialised by the caller (one writer);
// SyncTo, size() and the counters may be called from any thread, also while
// an Append runs. After a failed write or sync the log is broken: every later
// call fails, so a caller never builds on a record whose fate is unknown.
#ifndef NEARDUP_WRITE_AHEAD_LOG_H_
#define NEARDUP_WRITE_AHEAD_LOG_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

// Bytes of a record's header (length and checksum).
inline constexpr size_t kLogRecordHeaderBytes = 12;
// The largest payload a record may hold (a reader treats a longer length as
// corruption rather than trying to allocate it).
inline constexpr uint32_t kMaxLogRecordBytes = 256u << 20;

// Frames `payload` as one record (header + payload), appended to *out.
void AppendLogRecord(std::string_view payload, std::string* out);
// Fills the header of a record built in place: `record` points at
// kLogRecordHeaderBytes of room followed by the payload's `payload_bytes`
// (a caller that encodes straight into its output buffer).
void FrameLogRecordInPlace(char* record, size_t payload_bytes);

// What ReadLogFile found.
struct LogContents {
  std::vector<std::string> records;  // the payloads of the valid prefix
  uint64_t valid_bytes = 0;          // length of the valid prefix
  uint64_t file_bytes = 0;           // length of the file
  // Empty when valid_bytes == file_bytes; otherwise why the rest was
  // rejected ("record at offset 120: checksum mismatch", ...).
  std::string tail_error;
};

// Reads every valid record of the file at `path`. IoError when it cannot be
// read; a bad tail is not an error here (the caller decides: see
// LogContents::tail_error).
Result<LogContents> ReadLogFile(const std::string& path);

struct WriteAheadLogOptions {
  // fdatasync in SyncTo (default true). false only for tests and benchmarks
  // that measure everything but the disk: nothing is then durable.
  bool sync = true;
};

class WriteAheadLog {
 public:
  // Opens (creating if absent) the log at `path` for appending after its
  // first `valid_bytes` bytes; a longer file is truncated to valid_bytes
  // first (a torn tail found by ReadLogFile) and the truncation synced.
  // The valid bytes found are synced here (with options.sync; one
  // fdatasync, counted in syncs()): after a process crash they may be in
  // the page cache only, and synced_size() counts them as durable.
  static Result<std::unique_ptr<WriteAheadLog>> Open(const std::string& path, uint64_t valid_bytes,
                                                     const WriteAheadLogOptions& options = {});
  ~WriteAheadLog();
  WriteAheadLog(const WriteAheadLog&) = delete;
  WriteAheadLog& operator=(const WriteAheadLog&) = delete;

  // Appends one record; returns the offset just past it (its LSN). On a
  // failed or short write the file is cut back to where it was (and the
  // append fails: ResourceExhausted when the disk, quota or file size limit
  // is full, IoError otherwise); if the cut fails too the log is broken
  // (that error for every later call).
  // REQUIRES: one caller at a time.
  Result<uint64_t> Append(std::string_view payload);

  // Appends `payloads` as consecutive records with one write() (a batch's
  // records then share one fsync and one system call); returns the LSN past
  // the last. Every payload is checked against kMaxLogRecordBytes before
  // anything is written (InvalidArgument naming its index). On a failed or
  // short write the file is cut back to the end of the last record written
  // whole, so it ends on a record boundary: *appended (when not null) is then
  // the number of leading records that are in the file (readable, not yet
  // synced), and the error is Append's. On success *appended is
  // payloads.size().
  // REQUIRES: one caller at a time.
  Result<uint64_t> AppendBatch(std::span<const std::string> payloads, size_t* appended = nullptr);

  // AppendBatch of records the caller framed already (AppendLogRecord or
  // FrameLogRecordInPlace), concatenated in `framed`, record i ending at
  // ends[i] (the last at framed.size()): written from `framed` with one
  // write(), no copy. InvalidArgument, nothing written, when `ends` does not
  // cut `framed` into records (each record's length field must equal
  // ends[i] - ends[i-1] - kLogRecordHeaderBytes, so an end skipped or inside
  // a payload is refused) or a payload exceeds kMaxLogRecordBytes. Limit:
  // the checksums are not recomputed (that is the caller's to frame right).
  // Otherwise as AppendBatch. REQUIRES: one caller at a time.
  Result<uint64_t> AppendFramed(std::string_view framed, std::span<const size_t> ends,
                                size_t* appended = nullptr);

  // Returns once every record up to `lsn` is durable (group commit).
  Status SyncTo(uint64_t lsn);

  // Bytes written (durable or not).
  uint64_t size() const;
  // Bytes durable: found at Open (synced there) or SyncTo has returned for
  // them (<= size(); without WriteAheadLogOptions::sync, what SyncTo was
  // asked for).
  uint64_t synced_size() const;
  uint64_t appends() const;           // Append/AppendBatch/AppendFramed calls that wrote
  uint64_t syncs() const;             // fdatasync calls made (Open's included)
  uint64_t sync_nanoseconds() const;  // their total duration
  const std::string& path() const { return path_; }
  // Whether a failed write could not be cut back or a sync failed: every
  // later call then fails with that error.
  bool broken() const;

 private:
  WriteAheadLog(std::string path, int fd, uint64_t size, uint64_t syncs,
                WriteAheadLogOptions options);

  const std::string path_;
  const int fd_;
  const WriteAheadLogOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable synced_changed_;
  uint64_t written_ = 0;  // guarded by mutex_
  uint64_t synced_ = 0;   // guarded by mutex_
  bool syncing_ = false;  // guarded by mutex_: a leader is in fdatasync
  Status broken_;         // guarded by mutex_: set once, never cleared
  uint64_t appends_ = 0;  // guarded by mutex_
  uint64_t syncs_ = 0;
  uint64_t sync_nanoseconds_ = 0;
  std::string buffer_;  // Append's framing buffer (one writer)

  // Writes `data` at `start`, whose records end at `ends` (offsets in
  // `data`); see AppendBatch.
  Result<uint64_t> WriteBuffer(uint64_t start, std::string_view data, std::span<const size_t> ends,
                               size_t* appended);
};

// fsyncs the directory at `path`, so that a file created or renamed in it
// survives a crash.
Status SyncDirectory(const std::string& path);

}  // namespace neardup

#endif  // NEARDUP_WRITE_AHEAD_LOG_H_
