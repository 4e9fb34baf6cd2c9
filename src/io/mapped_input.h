// MappedInput: a regular file mapped read-only into memory, followed by at
// least one page of readable zero bytes, so that the JSONL chunker can hand
// out chunks that point into the page cache (no read(2) copy) and simdjson
// may read its padding past any line, the last one included.
//
// Cost: address space for the file plus one page; pages are faulted in by
// whichever thread first touches them (the parallel parse filter), not by
// the serial reader. The mapping is private and read-only: nothing is ever
// written back.
// A file that another process truncates while it is mapped loses pages
// under the mapping; touching one would raise SIGBUS and end the process.
// The mapping is therefore registered with the SIGBUS guard
// (io/mapping_fault_guard.h), which maps zeros over a vanished page and
// marks the mapping damaged, and readers call CheckRead after reading a
// range, so that a truncation comes out as a DataLoss error after the
// documents read before it (docs/PIPELINE.md, "Inputs that shrink").
// Thread safety: immutable once made; shared by the chunks that point into
// it (std::shared_ptr), and unmapped when the last one lets go.
#ifndef NEARDUP_IO_MAPPED_INPUT_H_
#define NEARDUP_IO_MAPPED_INPUT_H_

#include <time.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "neardup/status.h"

struct stat;

namespace neardup::internal {

// A file time in nanoseconds, as MappedInput and RecordFile keep them
// (modified_ns, changed_ns). Wraps around (modular) instead of overflowing
// for times past 2262 or before 1677, which a user's file may carry: the
// values are only compared for equality.
int64_t TimeNanoseconds(const struct timespec& t);

struct GuardedMapping;

class MappedInput {
 public:
  // Maps `path`. Returns nullptr (not an error) when the file is not a
  // regular file, is empty, or the system refuses the mapping: the caller
  // then reads it as a stream, whose errors are the ones to report.
  static std::shared_ptr<const MappedInput> Map(const std::string& path);

  // The system's page size (read once): mappings, releases and page
  // populates round to it.
  static size_t PageSize();

  // Testing hook: called by Map with the path after the file is mapped and
  // before anything reads it (a test truncates or grows the file there).
  // Not thread-safe: set it while no file is being mapped; an empty function
  // turns it off. The CLI's tests do the same to a `neardup` process from
  // outside, with a preloaded shim (tests/hooks/mapped_input_hooks.cc: it
  // truncates, grows or rewrites in place the n-th file mapped): no
  // environment variable reaches this hook.
  static void SetAfterMapHookForTest(std::function<void(const std::string& path)> hook);

  ~MappedInput();
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;

  // [data(), data() + size()) is the file; padding_bytes() zero bytes follow.
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  size_t padding_bytes() const { return mapped_ - size_; }
  // The file's modification time when it was mapped, in ns since the epoch
  // (dedup's second pass compares it with the first's).
  int64_t modified_ns() const { return modified_ns_; }
  // The file's status change time (ctime) when it was mapped, in ns, and
  // its device and inode: with size() and modified_ns(), what CheckUnchanged
  // compares.
  int64_t changed_ns() const { return changed_ns_; }
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }
  const std::string& path() const { return path_; }

  // OK when the bytes of [data(), data() + end) that were read through the
  // mapping were the file's: no page of the range has vanished, and the
  // file did not shrink below `end` (the bytes of its last page past a new
  // end read as zeros without a fault). Else DataLoss "input PATH shrank
  // while it was read (N -> M bytes)". Call it after the range was read (all
  // of it, by any thread, ordered before this call).
  // Cost: one read of the byte at the page after the range's last page (it
  // faults, and the guard records the page, if the file now ends before
  // it) and one atomic load; a stat(2) of the path only for a range that
  // ends in the file's last page, or when the file now ends right after
  // the range. A range that reaches the file's end (end == size()) is the
  // last one a reader reads: CheckUnchanged too.
  // REQUIRES: 0 < end <= size().
  Status CheckRead(size_t end) const;
  // OK when the path still names the file mapped, unchanged since it was
  // mapped: same device, inode, size, modification and status change
  // times (stat(2) of the path). Else DataLoss "input PATH changed while it
  // was read (...)" (or the shrink's message when it is smaller): bytes of
  // the mapping read before and after a write in place may be of two
  // versions of the file. An append is a change (the size differs); a
  // change within the timestamps' granularity at the same size is not seen
  // (docs/PIPELINE.md, "Inputs that change"). Call it once every read of
  // the mapping is done.
  Status CheckUnchanged() const;
  // True once a vanished page was replaced by zeros (one atomic load).
  bool damaged() const;

  // Drops the pages of [begin, begin + size) that no later byte shares from
  // this process's page tables (the page cache keeps them; touching them
  // again faults them back in), so that resident memory stays about the
  // chunks in flight rather than the whole file. REQUIRES: the range lies in
  // the file and starts where the previous release ended or later.
  void Release(const char* begin, size_t size) const;

 private:
  MappedInput(const char* data, size_t size, size_t mapped, int64_t modified_ns)
      : data_(data), size_(size), mapped_(mapped), modified_ns_(modified_ns) {}
  // The error CheckRead returns, from the file's size now.
  Status ShrankError() const;
  // CheckUnchanged on a stat of the path (`now`; nullptr when the stat
  // failed with errno `error`).
  Status CompareWith(const struct stat* now, int error) const;

  const char* data_;
  size_t size_;
  size_t mapped_;  // bytes of address space, the zero tail included
  int64_t modified_ns_;
  int64_t changed_ns_ = 0;
  std::string path_;
  // The file mapped: a path that names another file now says nothing about it.
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  GuardedMapping* guard_ = nullptr;
};

// Ranges whose pages may be given back (MappedInput::Release), collected by
// one thread (the pipeline's serial, in-order delivery) and released by
// whichever thread calls ReleaseAll next (its parallel parse). Dropping a
// range's page-table entries costs about 0.1 ms per MiB, plus a TLB
// shootdown of the other threads' CPUs: done in the serial filter, that was
// the largest serial part of `fingerprint` on two threads.
// Thread safety: Add and ReleaseAll may be called from any threads. The
// ranges of one mapping must be added in file order, each after its chunk's
// last use (so a page shared with the next chunk is released with that one).
class PageReleaseQueue {
 public:
  void Add(std::shared_ptr<const MappedInput> mapping, const char* begin, size_t size);
  // Releases every range added so far.
  void ReleaseAll();

 private:
  struct Range {
    std::shared_ptr<const MappedInput> mapping;
    const char* begin;
    size_t size;
  };
  std::mutex mutex_;
  std::vector<Range> ranges_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_MAPPED_INPUT_H_
