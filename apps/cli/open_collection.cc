#include "open_collection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "common_options.h"
#include "exit_codes.h"

namespace neardup::cli {
namespace {

// Whether another process holds the writer lock of `dir` (LOCK, flock(2),
// as Collection::Open takes it). The probe takes and drops a shared lock
// without waiting; it is made only after an open failed, so it cannot
// delay a writer that is starting.
bool LockIsHeld(const std::string& dir) {
  const std::string lock = (std::filesystem::path(dir) / "LOCK").string();
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's lock, if it got one
  return held;
}

}  // namespace

void WaitFlags::Register(CLI::App* app) {
  app->add_option("--wait", wait_seconds,
                  "Seconds to wait for another process writing the collection to finish "
                  "(default 0: exit at once with code 6)")
      ->check(RealIn(0.0, 1e7));
}

int OpenForWriting(const std::string& dir, const WaitFlags& wait,
                   std::unique_ptr<Collection>* collection) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait.wait_seconds));
  Collection::OpenOptions options;
  options.mode = Collection::Mode::kReadWrite;
  while (true) {
    Result<std::unique_ptr<Collection>> opened = Collection::Open(dir, options);
    if (opened.ok()) {
      *collection = std::move(opened).value();
      return kExitOk;
    }
    const bool busy = opened.status().code() == StatusCode::kFailedPrecondition && LockIsHeld(dir);
    if (!busy) return ReportError(opened.status());
    if (Clock::now() >= deadline) {
      std::fprintf(stderr, "neardup: %s%s\n", opened.status().message().c_str(),
                   wait.wait_seconds > 0 ? " (gave up waiting)" : " (use --wait SECONDS)");
      return kExitBusy;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace neardup::cli
