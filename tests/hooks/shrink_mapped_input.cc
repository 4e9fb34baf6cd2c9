// A test hook kept out of every shipped binary (docs/ARCHITECTURE.md
// "Build", test hooks): a shared object that a test preloads into the
// `neardup` it runs (LD_PRELOAD) to truncate an input right after the
// library maps it, before anything reads it (docs/PIPELINE.md "Inputs that
// shrink"). The library has no such code: a stray environment variable can
// never cut a user's file.
//
// NEARDUP_TEST_SHRINK_MAPPED_INPUT="<bytes>[@<n>]": the n-th file mapping
// at a fixed address that the process makes (from 1; MappedInput::Map maps
// each input over an address it reserved, and nothing else in the CLI maps
// a file so) truncates that file to <bytes> once the mapping is made.
// Anything but digits[@digits] leaves the hook off. Built only with
// NEARDUP_TEST_HOOKS (on when the tests are built), never installed.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

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

const Request& TheRequest() {
  static const Request request = Parse(std::getenv("NEARDUP_TEST_SHRINK_MAPPED_INPUT"));
  return request;
}

using MmapFunction = void* (*)(void*, size_t, int, int, int, off_t);

// Shrinks the file of `fd` when this mapping is the one asked for.
void AfterMapping(void* result, int flags, int fd) {
  static std::atomic<long long> fixed_file_mappings{0};
  if (result == MAP_FAILED || fd < 0 || (flags & MAP_FIXED) == 0 || (flags & MAP_ANONYMOUS) != 0) {
    return;
  }
  const Request& request = TheRequest();
  if (request.bytes < 0 || fixed_file_mappings.fetch_add(1) + 1 != request.nth) return;
  char link[64];
  char path[PATH_MAX];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t size = ::readlink(link, path, sizeof(path) - 1);
  if (size > 0) {
    path[size] = '\0';
    (void)::truncate(path, request.bytes);
  }
}

// The real function named `name` (the next library's), called, then the
// hook.
void* MapThenShrink(const char* name, void* address, size_t length, int protection, int flags,
                    int fd, off_t offset) {
  const auto next = reinterpret_cast<MmapFunction>(::dlsym(RTLD_NEXT, name));
  void* result = next(address, length, protection, flags, fd, offset);
  AfterMapping(result, flags, fd);
  return result;
}

}  // namespace

extern "C" {

void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) noexcept {
  return MapThenShrink("mmap", address, length, protection, flags, fd, offset);
}

void* mmap64(void* address, size_t length, int protection, int flags, int fd,
             off64_t offset) noexcept {
  return MapThenShrink("mmap64", address, length, protection, flags, fd, offset);
}

}  // extern "C"
