#include "neardup/stage_time.h"

#include <sys/resource.h>
#include <time.h>

namespace neardup {
namespace {

double Seconds(clockid_t clock) {
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

void StageTimer::Restart() {
  wall_start_ = Seconds(CLOCK_MONOTONIC);
  cpu_start_ = Seconds(CLOCK_PROCESS_CPUTIME_ID);
  thread_cpu_start_ = Seconds(CLOCK_THREAD_CPUTIME_ID);
}

StageTime StageTimer::Elapsed() const {
  return StageTime{Seconds(CLOCK_MONOTONIC) - wall_start_,
                   Seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start_,
                   Seconds(CLOCK_THREAD_CPUTIME_ID) - thread_cpu_start_};
}

StageTime StageTimer::Lap() {
  const StageTime elapsed = Elapsed();
  Restart();
  return elapsed;
}

uint64_t PeakResidentBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

}  // namespace neardup
