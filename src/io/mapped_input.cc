#include "io/mapped_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "io/mapping_fault_guard.h"

namespace neardup::internal {
namespace {

std::function<void(const std::string&)>& AfterMapHook() {
  static std::function<void(const std::string&)> hook;
  return hook;
}

}  // namespace

int64_t TimeNanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(static_cast<uint64_t>(t.tv_sec) * 1000000000u +
                              static_cast<uint64_t>(t.tv_nsec));
}

size_t MappedInput::PageSize() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

void MappedInput::SetAfterMapHookForTest(std::function<void(const std::string& path)> hook) {
  AfterMapHook() = std::move(hook);
}

std::shared_ptr<const MappedInput> MappedInput::Map(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return nullptr;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return nullptr;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t page = PageSize();
  const size_t file_pages = (size + page - 1) / page * page;
  // Reserve the file's pages plus one of anonymous zeros, then map the file
  // over the front: the bytes after the end of the file are then zeros
  // whether or not the size is a multiple of the page size (mmap zero-fills
  // the rest of the file's last page; the extra page covers the exact case).
  const size_t mapped = file_pages + page;
  void* reserved = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) {
    ::close(fd);
    return nullptr;
  }
  void* file = ::mmap(reserved, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (file == MAP_FAILED) {
    ::munmap(reserved, mapped);
    return nullptr;
  }
  // Registered before anything reads it, so that no fault of it can end
  // the process.
  GuardedMapping* guard = RegisterMapping(static_cast<const char*>(reserved), mapped);
  if (guard == nullptr) {
    ::munmap(reserved, mapped);
    return nullptr;
  }
  // Read front to back once, by several threads a chunk apart.
  (void)::madvise(file, size, MADV_SEQUENTIAL);
  std::shared_ptr<MappedInput> input(
      new MappedInput(static_cast<const char*>(file), size, mapped, TimeNanoseconds(st.st_mtim)));
  input->changed_ns_ = TimeNanoseconds(st.st_ctim);
  input->path_ = path;
  input->device_ = st.st_dev;
  input->inode_ = st.st_ino;
  input->guard_ = guard;
  if (AfterMapHook()) AfterMapHook()(path);
  return input;
}

bool MappedInput::damaged() const { return FirstVanishedPage(guard_) != nullptr; }

Status MappedInput::CheckRead(size_t end) const {
  const size_t page = PageSize();
  // The page after the range's last one: if the file now ends before it,
  // the range's last page may have read zeros past the new end.
  const size_t probe = (end - 1) / page * page + page;
  if (probe < size_) {
    // A read the compiler keeps: it faults, and the guard records the
    // page, when the file now ends before it.
    (void)*static_cast<const volatile char*>(data_ + probe);
  }
  const char* vanished = FirstVanishedPage(guard_);
  // A page the range read was replaced by zeros.
  if (vanished != nullptr && vanished < data_ + end) return ShrankError();
  // The file still reaches past the range's last page.
  if (probe < size_ && (vanished == nullptr || vanished > data_ + probe)) return Status::Ok();
  // The range ends in the file's last page, or the file now ends just
  // after the range: only the file's size tells whether the range's last
  // page was cut inside. Another file at the path says nothing about this
  // one's size (whose vanished pages then decide), but ends its last range
  // with a change: the path no longer names what was read.
  struct stat st;
  const bool stated = ::stat(path_.c_str(), &st) == 0;
  const int error = errno;
  if (stated && st.st_dev == device_ && st.st_ino == inode_) {
    if (static_cast<uint64_t>(st.st_size) < end) return ShrankError();
  } else if (vanished != nullptr) {
    return ShrankError();
  }
  // The last range read: the file must be the one mapped, unchanged.
  if (end == size_) return CompareWith(stated ? &st : nullptr, error);
  return Status::Ok();
}

Status MappedInput::CheckUnchanged() const {
  struct stat st;
  const bool stated = ::stat(path_.c_str(), &st) == 0;
  return CompareWith(stated ? &st : nullptr, errno);
}

Status MappedInput::CompareWith(const struct stat* now, int error) const {
  // The message is built on the error paths only: this runs once per file
  // (and per second-pass range that ends at the file's end).
  const auto changed = [&](const std::string& detail) {
    return DataLossError("input " + path_ + " changed while it was read (" + detail + ")");
  };
  if (now == nullptr) return changed(std::string("now: ") + std::strerror(error));
  if (now->st_dev != device_ || now->st_ino != inode_) {
    return changed("the path names another file now");
  }
  const uint64_t size = static_cast<uint64_t>(now->st_size);
  if (size < size_) return ShrankError();
  if (size > size_) {
    return changed("it grew from " + std::to_string(size_) + " to " + std::to_string(size) +
                   " bytes: appended to or rewritten");
  }
  if (TimeNanoseconds(now->st_mtim) != modified_ns_ ||
      TimeNanoseconds(now->st_ctim) != changed_ns_) {
    return changed("written or its status changed at the same size, " + std::to_string(size_) +
                   " bytes");
  }
  return Status::Ok();
}

Status MappedInput::ShrankError() const {
  const std::string was = std::to_string(size_);
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    return DataLossError("input " + path_ + " shrank while it was read (" + was +
                         " bytes when mapped; now: " + std::strerror(errno) + ")");
  }
  if (st.st_dev == device_ && st.st_ino == inode_ && static_cast<uint64_t>(st.st_size) < size_) {
    return DataLossError("input " + path_ + " shrank while it was read (" + was + " -> " +
                         std::to_string(st.st_size) + " bytes)");
  }
  // Shrunk and grown again, or replaced: the bytes read are not all the
  // file's either way.
  return DataLossError("input " + path_ + " changed while it was read (part of its " + was +
                       " bytes vanished; the path now holds " + std::to_string(st.st_size) +
                       " bytes)");
}

void MappedInput::Release(const char* begin, size_t size) const {
  const uintptr_t page = PageSize();
  // The page holding the range's end may hold the next chunk's first lines.
  const uintptr_t first = reinterpret_cast<uintptr_t>(begin) / page * page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + size) / page * page;
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void PageReleaseQueue::Add(std::shared_ptr<const MappedInput> mapping, const char* begin,
                           size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  ranges_.push_back(Range{std::move(mapping), begin, size});
}

void PageReleaseQueue::ReleaseAll() {
  std::vector<Range> ranges;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ranges_.empty()) return;
    ranges.swap(ranges_);
  }
  // Ranges of one mapping are disjoint but for a boundary page, which the
  // later range releases; both chunks were delivered before either was added.
  for (const Range& range : ranges) range.mapping->Release(range.begin, range.size);
}

MappedInput::~MappedInput() {
  // Guarded up to the unmapping: the range may be reused by the next mmap.
  UnregisterMapping(guard_);
  ::munmap(const_cast<char*>(data_), mapped_);
}

}  // namespace neardup::internal
