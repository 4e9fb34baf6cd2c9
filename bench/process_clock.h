// Process CPU time and a monotonic wall clock for the stand-alone input and
// output benchmarks (bench/input_read_modes.cc, bench/output_write_modes.cc).
#ifndef NEARDUP_BENCH_PROCESS_CLOCK_H_
#define NEARDUP_BENCH_PROCESS_CLOCK_H_

#include <sys/resource.h>

#include <chrono>

namespace neardup::bench {

// User plus system CPU seconds of the whole process (every thread).
inline double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

inline double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace neardup::bench

#endif  // NEARDUP_BENCH_PROCESS_CLOCK_H_
