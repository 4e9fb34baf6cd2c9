// Env: the file system as the collection store and the chunk index files
// write it -- create and write a file, sync it, rename, remove, sync a
// directory, lock -- behind one small interface (after LevelDB's Env), so
// that tests can hand in a fault-injecting one: one that drops every write
// not yet synced at a simulated crash, or fails a write with ENOSPC or EIO.
// Env::Default() is POSIX. Reads are memory mappings of immutable files and
// do not go through the Env (a crash cannot change what was synced).
// Thread safety: Default() may be used from any thread; a WritableFile by
// one thread at a time.
#ifndef NEARDUP_ENV_H_
#define NEARDUP_ENV_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "neardup/status.h"

namespace neardup {

// A file being written. Errors name the file; a full disk is
// ResourceExhausted, other failures IoError.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::span<const uint8_t> bytes) = 0;
  // Overwrites bytes already written, at `offset`.
  virtual Status WriteAt(uint64_t offset, std::span<const uint8_t> bytes) = 0;
  // Makes what was written durable (fsync).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// Held while alive; released on destruction.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;
  // The POSIX file system. Never null; lives for the process.
  static Env* Default();

  // Creates `path` (truncating an existing file).
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // Atomically replaces `to` with `from` (durable once the directory is synced).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Removes `path`; NotFound when it does not exist.
  virtual Status RemoveFile(const std::string& path) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status SyncDirectory(const std::string& dir) = 0;
  // An exclusive lock on `path` (created if missing) without waiting:
  // FailedPrecondition when another process holds it.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;
};

}  // namespace neardup

#endif  // NEARDUP_ENV_H_
