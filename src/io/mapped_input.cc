#include "io/mapped_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

namespace neardup::internal {

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
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
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
  // Read front to back once, by several threads a chunk apart.
  (void)::madvise(file, size, MADV_SEQUENTIAL);
  return std::shared_ptr<const MappedInput>(
      new MappedInput(static_cast<const char*>(file), size, mapped,
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec));
}

void MappedInput::Release(const char* begin, size_t size) const {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
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

MappedInput::~MappedInput() { ::munmap(const_cast<char*>(data_), mapped_); }

}  // namespace neardup::internal
