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

uint64_t ThreadCpuNanoseconds() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// Open timing scopes on this thread: a step's wait may run another
// pipeline's timed step on the same thread, whose time the outer scope
// already counts.
thread_local int open_serial_scopes = 0;

}  // namespace

SerialCpuTime::Scope::Scope(SerialCpuTime* sum) : sum_(sum) {
  if (sum_ == nullptr) return;
  nested_ = open_serial_scopes++ > 0;
  if (!nested_) start_ns_ = ThreadCpuNanoseconds();
}

SerialCpuTime::Scope::~Scope() {
  if (sum_ == nullptr) return;
  --open_serial_scopes;
  if (nested_) return;
  const uint64_t now = ThreadCpuNanoseconds();
  if (now > start_ns_) {
    sum_->nanoseconds_.fetch_add(now - start_ns_, std::memory_order_relaxed);
  }
}

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
