// Test hooks kept out of every shipped binary (docs/ARCHITECTURE.md
// "Build", test hooks): a shared object that a test preloads into the
// `neardup` it runs (LD_PRELOAD) to put another run's sweep of stale output
// temporaries, or a filesystem without locks, at a fixed point of an
// output's life (apps/frontend/output.h, OutputFile). The library has no
// such code.
// - NEARDUP_TEST_SWEEP_AT_RENAME=1: right before the process renames a
//   file named ".NAME.neardup-" + six characters (an output's temporary),
//   does what another run's sweep of NAME would do to it (a shared flock
//   without waiting; if it gets it, the file is unlinked), then renames.
//   Prints "neardup test hook: temporary locked at its rename",
//   "... swept at its rename" or "... not a sweep's name at its rename" on
//   stderr.
// - NEARDUP_TEST_EXCLUSIVE_FLOCK_FAILS=1: every exclusive flock fails with
//   ENOLCK (a lock manager out of locks); shared ones are taken.
// Built only with NEARDUP_TEST_HOOKS (on when the tests are built), never
// installed.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool On(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// The name a sweep matches: ".<something>.neardup-" and six letters or
// digits, ending there.
bool IsSweepName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const char* name = slash == nullptr ? path : slash + 1;
  const char* mark = std::strstr(name, ".neardup-");
  if (name[0] != '.' || mark == nullptr || mark == name) return false;
  const char* suffix = mark + std::strlen(".neardup-");
  if (std::strlen(suffix) != 6) return false;
  for (const char* c = suffix; *c != '\0'; ++c) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) {
      return false;
    }
  }
  return true;
}

void SweepBeforeRename(const char* from) {
  if (std::strstr(from, ".neardup-") == nullptr) return;
  const char* what = "not a sweep's name";
  if (IsSweepName(from)) {
    what = "locked";
    const int fd = ::open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0) {
      if (::syscall(SYS_flock, fd, LOCK_SH | LOCK_NB) == 0) {
        ::unlink(from);
        what = "swept";
      }
      ::close(fd);
    }
  }
  std::fprintf(stderr, "neardup test hook: temporary %s at its rename\n", what);
}

}  // namespace

extern "C" {

int rename(const char* from, const char* to) noexcept {
  if (On("NEARDUP_TEST_SWEEP_AT_RENAME")) SweepBeforeRename(from);
  return static_cast<int>(::syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 0));
}

int flock(int fd, int operation) noexcept {
  if ((operation & LOCK_EX) != 0 && On("NEARDUP_TEST_EXCLUSIVE_FLOCK_FAILS")) {
    errno = ENOLCK;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_flock, fd, operation));
}

}  // extern "C"
