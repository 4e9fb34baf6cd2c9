#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace neardup::cli {

Progress::Progress(bool quiet)
    : enabled_(!quiet && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t documents, uint64_t bytes) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  double seconds = std::chrono::duration<double>(now - start_).count();
  double megabytes = static_cast<double>(bytes) / 1e6;
  std::fprintf(stderr, "\r\033[K%llu documents, %.1f MB, %.1f MB/s",
               static_cast<unsigned long long>(documents), megabytes,
               seconds > 0 ? megabytes / seconds : 0.0);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace neardup::cli
