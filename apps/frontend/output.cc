#include "output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <utility>

#include "neardup/check.h"

namespace neardup::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kFlushBytes = size_t{1} << 20;
// An fsynced output's pages are handed to writeback in steps this large.
constexpr uint64_t kWritebackStep = uint64_t{8} << 20;
// Writes at least this large skip the buffer (fewer copies, same bytes).
constexpr size_t kDirectWriteBytes = size_t{64} << 10;

std::string ErrnoText(int error) { return std::strerror(error); }

// --no-fsync: set once, while the command line is parsed (before any thread).
bool file_outputs_fsync = true;

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// True when `path` is `dir` or below it (both absolute, links resolved).
bool IsUnder(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

Status Refuse(const std::string& output, const std::string& input, const char* how) {
  return InvalidArgumentError("--output " + output + " " + how + " " + input +
                              ": refusing to overwrite an input (write the output elsewhere)");
}

// The file the output names: itself, or the target of a symbolic link (a
// rename must replace the file, not the link).
std::string ResolvedTarget(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string target(real);
  std::free(real);
  return target;
}

// A file that Finish(true) fsyncs has its written pages handed to the
// disk as they come (sync_file_range starts writeback and does not wait),
// so that the fsync at the end waits for the last megabytes rather than
// for all of them: 257 MB on this VM's ext4, fsync 0.16 s -> 0.01-0.02 s,
// the write itself unchanged. A hint: errors are the fsync's to report.
void StartWriteback(int fd, uint64_t offset, uint64_t size) {
  (void)::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(size),
                          SYNC_FILE_RANGE_WRITE);
}

// statfs f_type of the one file system DescriptorAtOffsets::Reserve
// preallocates on (linux/magic.h's EXT4_SUPER_MAGIC).
constexpr decltype(statfs::f_type) kExt4Magic = 0xEF53;

// Writes at offsets of a descriptor: pwrite, repeated after a short write.
class DescriptorAtOffsets : public PositionedOutput {
 public:
  // private_temporary: the file that Finish(true) renames (nobody reads it
  // before); writeback: hand each range to the disk as it is written (a
  // temporary that will be fsynced).
  DescriptorAtOffsets(int fd, uint64_t base, const std::string& name, bool private_temporary,
                      bool writeback)
      : fd_(fd),
        base_(base),
        name_(name),
        private_temporary_(private_temporary),
        writeback_(writeback) {}
  Status WriteAt(uint64_t offset, std::string_view bytes) override {
    const uint64_t begin = offset;
    const uint64_t size = bytes.size();
    while (!bytes.empty()) {
      const ssize_t n =
          ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(base_ + offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return IoError("cannot write to " + name_ + ": " + ErrnoText(n < 0 ? errno : EIO));
      bytes.remove_prefix(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    if (writeback_) StartWriteback(fd_, base_ + begin, size);
    return Status::Ok();
  }
  // On ext4: the blocks allocated at once, the size left as it is
  // (FALLOC_FL_KEEP_SIZE: a file written in place still grows only as the
  // bytes arrive). Each buffered write then finds its blocks allocated
  // (unwritten) instead of reserving delayed-allocation space page by page
  // under the block-map lock that writeback takes to allocate them: the
  // copy under the inode lock, the part of the write two threads cannot
  // share, is ~10-15% shorter (255 MB stand-alone here: 0.086 -> 0.074 CPU
  // seconds). Other file systems get nothing: ext4 is the only one
  // measured (XFS has its own speculative preallocation; tmpfs would zero
  // its pages first); nor do failures (a full disk: the writes then fail as
  // before). A run that fails is cut back by the caller's ftruncate, which
  // drops the blocks past the end too; one killed first leaves them
  // allocated past EOF (`du` above `ls -l`) until the file is truncated.
  //
  // A private temporary (the file that Finish(true) renames, which nobody
  // reads before) also gets its full size here (session 15), where the
  // preallocation succeeded (ext4 only, as above: elsewhere an extending
  // ftruncate may zero-fill, vfat/exfat, or cost a round trip, NFS).
  // Ranges written out of order otherwise extend the file past a gap: each
  // such write updates the size per page under the inode lock and zeroes
  // the partial block at the old end (`ext4_da_write_end ->
  // ext4_zero_partial_blocks`), waiting for that page while the other
  // thread's range is under writeback. A file written in place (standard
  // output redirected) keeps growing only as bytes arrive, so that a killed
  // run never leaves it at full size with a gap; a failed run is cut back
  // by WriteAtOffsets either way.
  void Reserve(uint64_t bytes) override {
    if (bytes == 0) return;
    struct statfs fs;
    if (::fstatfs(fd_, &fs) != 0 || fs.f_type != kExt4Magic) return;
    if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(base_),
                    static_cast<off_t>(bytes)) == 0 &&
        private_temporary_) {
      (void)::ftruncate(fd_, static_cast<off_t>(base_ + bytes));
    }
  }

 private:
  int fd_;
  uint64_t base_;
  const std::string& name_;
  bool private_temporary_;
  bool writeback_;
};

// Whether pwrite places bytes where asked on `file`: a regular file not
// opened with O_APPEND (where Linux's pwrite appends whatever the offset).
bool CanWriteAtOffsets(std::FILE* file) {
  struct stat st;
  const int fd = ::fileno(file);
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_APPEND) == 0;
}

mode_t NewFileMode() {
  // umask can only be read by setting it; this runs before any thread.
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// The hidden temporary of an output named `filename`: "." + filename +
// ".neardup-" + six characters from mkostemp.
constexpr std::string_view kTemporaryMark = ".neardup-";
constexpr size_t kTemporarySuffix = 6;
// Appended to the temporary of a writer that could not lock it (flock
// failed: a filesystem without locks, a lock manager out of locks), so that
// no sweep (RemoveStaleTemporaries) takes it for a killed run's.
constexpr std::string_view kUnlockedSuffix = ".unlocked";
// Temporaries made in turn when a sweep removed each before its writer
// locked it (each such removal needs another run sweeping at that instant).
constexpr int kCreateAttempts = 8;

bool IsTemporaryOf(const std::string& name, const std::string& filename) {
  const size_t prefix = 1 + filename.size() + kTemporaryMark.size();
  if (name.size() != prefix + kTemporarySuffix || name[0] != '.' ||
      name.compare(1, filename.size(), filename) != 0 ||
      name.compare(1 + filename.size(), kTemporaryMark.size(), kTemporaryMark) != 0) {
    return false;
  }
  for (size_t i = prefix; i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) {
      return false;
    }
  }
  return true;
}

// Removes the temporaries of `filename` in `dir` that no writer holds: a
// writer holds its temporary's flock from its creation until after its
// rename (OutputFile::Open, Finish), the kernel drops it when the writer
// ends in any way, so a temporary nobody locks is a killed run's. A writer
// whose own lock failed names its temporary otherwise (kUnlockedSuffix),
// which this never matches. Only regular files of this user, by lstat
// before anything is opened (a device node or a FIFO that carries the name
// is never opened), each checked to be still the file it locked before it
// is unlinked; the lock is shared (a read-only descriptor can take it, also
// where flock is emulated by POSIX locks), so several runs may sweep at
// once. Best effort: whatever cannot be read or locked is left.
//
// Linux has no unlink by descriptor: between the last lstat and the unlink
// the name could pass to another file only if another sweep removed this
// one and a new writer's mkostemp drew the same six characters in that
// instant (1 in 62^6), and that writer would then see its file unlinked at
// its rename (an error, never a wrong FILE).
void RemoveStaleTemporaries(const fs::path& dir, const std::string& filename,
                            const std::string& own) {
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    const fs::path& path = it->path();
    if (!IsTemporaryOf(path.filename().string(), filename) || path.string() == own) continue;
    struct stat seen {};
    if (::lstat(path.c_str(), &seen) != 0 || !S_ISREG(seen.st_mode) || seen.st_uid != ::geteuid()) {
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat locked {};
    struct stat named {};
    if (::fstat(fd, &locked) == 0 && SameFile(locked, seen) &&
        ::flock(fd, LOCK_SH | LOCK_NB) == 0 && ::lstat(path.c_str(), &named) == 0 &&
        SameFile(named, locked)) {
      ::unlink(path.c_str());
    }
    ::close(fd);  // drops the lock, after the unlink
  }
}

// flock, again when a signal interrupted it. 0, else the errno.
int LockOrError(int fd, int operation) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace

void SetFileOutputsFsync(bool fsync) { file_outputs_fsync = fsync; }

bool FileOutputsFsync() { return file_outputs_fsync; }

Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs) {
  if (output == "-") return Status::Ok();
  struct stat out_st;
  const bool out_exists = ::stat(output.c_str(), &out_st) == 0;
  std::error_code ec;
  // Where the output is or would be created, with every link of the
  // existing part of the path resolved.
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(output, ec), ec);
  for (const std::string& input : inputs) {
    if (input == "-") continue;
    struct stat in_st;
    if (::stat(input.c_str(), &in_st) != 0) continue;  // the reader reports it
    if (out_exists && SameFile(in_st, out_st)) return Refuse(output, input, "is the input");
    if (!S_ISDIR(in_st.st_mode)) continue;
    std::error_code dir_ec;
    const fs::path in_abs = fs::canonical(input, dir_ec);
    if (!dir_ec && !ec && IsUnder(out_abs, in_abs)) {
      return Refuse(output, input, "is inside the input directory");
    }
    if (!out_exists) continue;
    // A hard or symbolic link to the output somewhere in the directory (the
    // reader follows links to files): one stat per file, as reading them
    // costs anyway.
    std::error_code walk_ec;
    for (fs::recursive_directory_iterator it(input, walk_ec), end; !walk_ec && it != end;
         it.increment(walk_ec)) {
      struct stat entry_st;
      if (::stat(it->path().c_str(), &entry_st) == 0 && SameFile(entry_st, out_st)) {
        return Refuse(output, it->path().string(), "is the same file as");
      }
    }
  }
  return Status::Ok();
}

OutputFile::OutputFile(std::FILE* file, std::string name, bool owned, std::string temp_path)
    : file_(file),
      name_(std::move(name)),
      owned_(owned),
      temp_path_(std::move(temp_path)),
      positioned_(CanWriteAtOffsets(file)) {}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : file_(other.file_),
      name_(std::move(other.name_)),
      owned_(other.owned_),
      temp_path_(std::move(other.temp_path_)),
      positioned_(other.positioned_),
      written_back_(other.written_back_),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      buffer_(std::move(other.buffer_)) {
  other.file_ = nullptr;
  other.temp_path_.clear();
}

OutputFile::~OutputFile() { Finish(false).IgnoreError(); }

Result<OutputFile> OutputFile::Open(const std::string& path,
                                    const std::vector<std::string>& inputs) {
  if (path == "-") return OutputFile(stdout, "standard output", false, "");
  NEARDUP_RETURN_IF_ERROR(CheckOutputIsNotAnInput(path, inputs));
  struct stat st;
  mode_t mode = 0;
  std::string target = path;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return IoError("cannot write to " + path + ": it is a directory");
    if (!S_ISREG(st.st_mode)) {
      // /dev/null, a FIFO, a terminal: nothing to replace, written in place.
      std::FILE* file = std::fopen(path.c_str(), "wb");
      if (file == nullptr) return IoError("cannot open " + path + ": " + ErrnoText(errno));
      return OutputFile(file, path, true, "");
    }
    mode = st.st_mode & 07777;
    target = ResolvedTarget(path);
  } else {
    mode = NewFileMode();
  }
  const fs::path target_path(target);
  fs::path dir = target_path.parent_path();
  if (dir.empty()) dir = ".";
  const std::string filename = target_path.filename().string();
  const std::string pattern =
      (dir / ("." + filename + std::string(kTemporaryMark) + "XXXXXX")).string();
  std::string temp;
  int fd = -1;
  int lock_fd = -1;
  // Held (flock) from here until Finish has renamed or removed it: a later
  // run's sweep then leaves it, while this run lives. The lock is taken
  // without waiting: a sweep that holds it (in the moment before this lock)
  // is about to remove the file, and another is made; so is one when a
  // sweep removed it before the lock (it has no link left).
  for (int attempt = 0; fd < 0; ++attempt) {
    if (attempt == kCreateAttempts) {
      return IoError("cannot create " + path + ": other runs writing it removed " +
                     std::to_string(kCreateAttempts) + " temporaries in turn");
    }
    temp = pattern;
    fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return IoError("cannot create " + path + ": " + ErrnoText(errno));
    const int lock_error = LockOrError(fd, LOCK_EX | LOCK_NB);
    struct stat st {};
    if (lock_error == EWOULDBLOCK ||
        (lock_error == 0 && ::fstat(fd, &st) == 0 && st.st_nlink == 0)) {
      ::close(fd);
      fd = -1;
      continue;
    }
    if (lock_error == 0) {
      // The lock stays with a second descriptor of the same open file,
      // closed by Finish after the rename: closing the stream (whose close
      // reports the last write errors, and must come before the rename)
      // would drop it while the finished temporary still has its name.
      lock_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      if (lock_fd < 0) {
        const int dup_error = errno;
        ::close(fd);
        ::unlink(temp.c_str());
        return IoError("cannot create " + path + ": " + ErrnoText(dup_error));
      }
      break;
    }
    // The lock failed (no locks on this filesystem, none left): the file
    // is named so that no sweep takes it, and this run sweeps nothing (a
    // sweep is only as safe as the writers' locks). A killed run's unlocked
    // temporary stays until removed by hand.
    ::close(fd);
    ::unlink(temp.c_str());
    temp = pattern + std::string(kUnlockedSuffix);
    fd = ::mkostemps(temp.data(), static_cast<int>(kUnlockedSuffix.size()), O_CLOEXEC);
    if (fd < 0) return IoError("cannot create " + path + ": " + ErrnoText(errno));
  }
  if (lock_fd >= 0) RemoveStaleTemporaries(dir, filename, temp);
  (void)::fchmod(fd, mode);
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    int error = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    if (lock_fd >= 0) ::close(lock_fd);
    return IoError("cannot create " + path + ": " + ErrnoText(error));
  }
  OutputFile output(file, target, true, std::move(temp));
  output.lock_fd_ = lock_fd;
  return output;
}

Status OutputFile::Write(std::string_view bytes) {
  if (bytes.size() >= kDirectWriteBytes) {
    // A whole formatted batch: written from where it lies, not copied into
    // the buffer first.
    NEARDUP_RETURN_IF_ERROR(Flush());
    return WriteNow(bytes);
  }
  buffer_.append(bytes);
  if (buffer_.size() >= kFlushBytes) return Flush();
  return Status::Ok();
}

Status OutputFile::WriteNow(std::string_view bytes) {
  if (bytes.empty() || file_ == nullptr) return Status::Ok();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return IoError("cannot write to " + name_ + ": " + ErrnoText(errno));
  }
  if (!temp_path_.empty() && file_outputs_fsync) {
    // What the kernel has so far (stdio may hold a little), in steps.
    const off_t at = ::lseek(::fileno(file_), 0, SEEK_CUR);
    if (at > 0 && static_cast<uint64_t>(at) >= written_back_ + kWritebackStep) {
      StartWriteback(::fileno(file_), written_back_, static_cast<uint64_t>(at) - written_back_);
      written_back_ = static_cast<uint64_t>(at);
    }
  }
  return Status::Ok();
}

Status OutputFile::WriteAtOffsets(
    const std::function<Status(PositionedOutput&, uint64_t*)>& write) {
  NEARDUP_CHECK(positioned_ && file_ != nullptr);
  NEARDUP_RETURN_IF_ERROR(Flush());
  if (std::fflush(file_) != 0) return IoError("cannot write to " + name_ + ": " + ErrnoText(errno));
  // After the flush the stream's position is the descriptor's.
  const off_t base = ::ftello(file_);
  if (base < 0) return IoError("cannot write to " + name_ + ": " + ErrnoText(errno));
  DescriptorAtOffsets out(::fileno(file_), static_cast<uint64_t>(base), name_,
                          /*private_temporary=*/!temp_path_.empty(),
                          /*writeback=*/!temp_path_.empty() && file_outputs_fsync);
  uint64_t written = 0;
  Status status = write(out, &written);
  const off_t end = base + static_cast<off_t>(written);
  if (!status.ok() && ::ftruncate(::fileno(file_), end) != 0) {
    status = IoError(status.message() + "; cannot cut " + name_ + " back: " + ErrnoText(errno));
  }
  if (::fseeko(file_, end, SEEK_SET) != 0 && status.ok()) {
    status = IoError("cannot write to " + name_ + ": " + ErrnoText(errno));
  }
  return status;
}

Status OutputFile::Flush() {
  Status status = WriteNow(buffer_);
  buffer_.clear();
  return status;
}

Status OutputFile::Finish(bool success) {
  if (file_ == nullptr) return Status::Ok();
  const bool atomic = !temp_path_.empty();
  Status status;
  if (success || !atomic) {
    status = Flush();
    if (std::fflush(file_) != 0 && status.ok()) {
      status = IoError("cannot write to " + name_ + ": " + ErrnoText(errno));
    }
  }
  buffer_.clear();
  if (success && atomic && status.ok() && file_outputs_fsync && ::fsync(::fileno(file_)) != 0) {
    status = IoError("cannot write to " + name_ + ": fsync: " + ErrnoText(errno));
  }
  if (owned_ && std::fclose(file_) != 0 && status.ok() && success) {
    status = IoError("cannot close " + name_ + ": " + ErrnoText(errno));
  }
  file_ = nullptr;
  if (!atomic) return status;
  // The temporary's lock (lock_fd_) is released only after the rename or
  // the unlink below: a sweep by another run of the same output must not
  // take a finished temporary for a killed run's in between.
  if (success && status.ok()) {
    if (std::rename(temp_path_.c_str(), name_.c_str()) == 0) {
      temp_path_.clear();
      ReleaseLock();
      if (!file_outputs_fsync) return status;  // --no-fsync
      // The rename is durable once the directory is.
      fs::path dir = fs::path(name_).parent_path();
      int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd >= 0) {
        if (::fsync(dir_fd) != 0) status = IoError("cannot sync the directory of " + name_);
        ::close(dir_fd);
      }
      return status;
    }
    status = IoError("cannot rename the finished output to " + name_ + ": " + ErrnoText(errno));
  }
  ::unlink(temp_path_.c_str());
  temp_path_.clear();
  ReleaseLock();
  return status;
}

void OutputFile::ReleaseLock() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

Status FlushStandardOutput() {
  std::cout.flush();
  bool failed = !std::cout.good();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) failed = true;
  if (!failed) return Status::Ok();
  const int error = errno;
  return IoError(std::string("cannot write to standard output") +
                 (error != 0 ? ": " + ErrnoText(error) : std::string()));
}

}  // namespace neardup::cli
