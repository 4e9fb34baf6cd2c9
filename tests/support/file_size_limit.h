// A full disk without privileges or a special file system, for the tests of
// what a failed write leaves (the write-ahead log, streams, the server):
// RLIMIT_FSIZE at a given size while in scope, with SIGXFSZ ignored, so that
// a write past the limit writes up to it and then fails with EFBIG (which
// the library counts as a full disk: ResourceExhausted). The limit is the
// process's: every thread's writes meet it. Standard library, POSIX and
// GoogleTest only.
#ifndef NEARDUP_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
#define NEARDUP_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>

#include "gtest/gtest.h"

namespace neardup::test_support {

class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(uint64_t bytes) {
    EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &old_), 0);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~ScopedFileSizeLimit() {
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &old_), 0);
    signal(SIGXFSZ, old_handler_);
  }
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;

 private:
  rlimit old_;
  void (*old_handler_)(int);
};

}  // namespace neardup::test_support

#endif  // NEARDUP_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
