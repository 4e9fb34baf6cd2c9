// Test hooks kept out of every shipped binary (docs/ARCHITECTURE.md
// "Build", test hooks): a shared object that a test preloads into the
// `neardup` it runs (LD_PRELOAD) to change an input right after the library
// maps it, before anything reads it (docs/PIPELINE.md "Inputs that shrink",
// "Inputs that change"). The library has no such code: a stray environment
// variable can never touch a user's file.
//
// The n-th file mapping at a fixed address that the process makes (from 1;
// MappedInput::Map maps each input over an address it reserved, and nothing
// else in the CLI maps a file so) is the one changed, once it is made:
// - NEARDUP_TEST_SHRINK_MAPPED_INPUT="<bytes>[@<n>]": truncated (or grown)
//   to <bytes>;
// - NEARDUP_TEST_REWRITE_MAPPED_INPUT="<n>": written in place at its size
//   (its first byte written back) and its modification time set a second
//   later, a change that any clock's granularity shows.
// - NEARDUP_TEST_RENAME_AFTER_MAPPING="<n>:<from>:<to>": once the n-th is
//   made, the file <from> is renamed over <to> (another input, which the
//   process has not opened yet: e.g. a gzip put in place of a JSONL file
//   that `pairs` predicted it could locate).
// Anything but digits[@digits] (digits for the rewrite) leaves a hook off.
// Built only with NEARDUP_TEST_HOOKS (on when the tests are built), never
// installed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Request {
  long long bytes = -1;  // -1: off
  long long nth = 1;
};

const char* Digits(const char* at, long long* out) {
  if (*at < '0' || *at > '9') return nullptr;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoll(at, &end, 10);
  return errno == 0 ? end : nullptr;
}

Request Parse(const char* value) {
  Request parsed;
  const Request off;
  if (value == nullptr) return off;
  const char* rest = Digits(value, &parsed.bytes);
  if (rest == nullptr) return off;
  if (*rest == '@') {
    rest = Digits(rest + 1, &parsed.nth);
    if (rest == nullptr || parsed.nth < 1) return off;
  }
  return *rest == '\0' ? parsed : off;
}

const Request& TheShrink() {
  static const Request request = Parse(std::getenv("NEARDUP_TEST_SHRINK_MAPPED_INPUT"));
  return request;
}

long long TheRewrite() {  // the n-th mapping to rewrite; 0: off
  static const long long nth = [] {
    long long parsed = 0;
    const char* value = std::getenv("NEARDUP_TEST_REWRITE_MAPPED_INPUT");
    if (value == nullptr) return 0LL;
    const char* rest = Digits(value, &parsed);
    return rest != nullptr && *rest == '\0' && parsed >= 1 ? parsed : 0LL;
  }();
  return nth;
}

void RewriteInPlace(const char* path) {
  const int fd = ::open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  char first = 0;
  struct stat st;
  if (::pread(fd, &first, 1, 0) == 1 && ::pwrite(fd, &first, 1, 0) == 1 && ::fstat(fd, &st) == 0) {
    const struct timespec times[2] = {st.st_atim, {st.st_mtim.tv_sec + 1, st.st_mtim.tv_nsec}};
    (void)::futimens(fd, times);
  }
  ::close(fd);
}

struct Rename {
  long long nth = 0;  // 0: off
  const char* from = nullptr;
  const char* to = nullptr;
};

const Rename& TheRename() {
  static const Rename rename = [] {
    Rename parsed;
    static char buffer[4096];
    const char* value = std::getenv("NEARDUP_TEST_RENAME_AFTER_MAPPING");
    if (value == nullptr || std::strlen(value) >= sizeof(buffer)) return parsed;
    std::strcpy(buffer, value);
    long long nth = 0;
    const char* rest = Digits(buffer, &nth);
    if (rest == nullptr || *rest != ':' || nth < 1) return parsed;
    char* from = buffer + (rest - buffer) + 1;
    char* colon = std::strchr(from, ':');
    if (colon == nullptr || colon == from || colon[1] == '\0') return parsed;
    *colon = '\0';
    parsed.nth = nth;
    parsed.from = from;
    parsed.to = colon + 1;
    return parsed;
  }();
  return rename;
}

// Changes the file of `fd` when this mapping is the one asked for.
void AfterMapping(void* result, int flags, int fd) {
  static std::atomic<long long> fixed_file_mappings{0};
  if (result == MAP_FAILED || fd < 0 || (flags & MAP_FIXED) == 0 || (flags & MAP_ANONYMOUS) != 0) {
    return;
  }
  const Request& shrink = TheShrink();
  const long long rewrite = TheRewrite();
  const Rename& rename = TheRename();
  if (shrink.bytes < 0 && rewrite == 0 && rename.nth == 0) return;
  const long long nth = fixed_file_mappings.fetch_add(1) + 1;
  // The magic link names the very inode mapped (no readlink: a renamed file
  // or a path longer than a buffer cannot send the change elsewhere).
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  if (shrink.bytes >= 0 && nth == shrink.nth) (void)::truncate(link, shrink.bytes);
  if (nth == rewrite) RewriteInPlace(link);
  if (nth == rename.nth) (void)std::rename(rename.from, rename.to);
}

// The mapping itself, by the system call: no dlsym on each call (before
// glibc 2.34 dlsym allocates, and an allocator that maps through `mmap`
// would recurse into this hook).
void* MapThenChange(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  static_assert(sizeof(off_t) == 8, "mmap and mmap64 share one definition on LP64 only");
  void* result =
      reinterpret_cast<void*>(::syscall(SYS_mmap, address, length, protection, flags, fd, offset));
  AfterMapping(result, flags, fd);
  return result;
}

}  // namespace

extern "C" {

void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) noexcept {
  return MapThenChange(address, length, protection, flags, fd, offset);
}

void* mmap64(void* address, size_t length, int protection, int flags, int fd,
             off64_t offset) noexcept {
  return MapThenChange(address, length, protection, flags, fd, offset);
}

}  // extern "C"
