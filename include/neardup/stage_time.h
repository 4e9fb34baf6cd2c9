// How long a stage of a batch job took, on the wall clock and in CPU time,
// for the stage profiles of `neardup pairs/clusters/dedup --profile` and
// NearDuplicateReport.
//
// CPU time is the whole process' (every thread), over the same interval as
// the wall time, and the timing thread's own: when stages run one after
// another, the ratio cpu / wall is the stage's mean parallelism, and on a
// machine shared with other work the CPU times are the steadier figures.
// Cost: two clock reads per Start and per Elapsed (a few hundred ns).
// Thread safety: a StageTimer is a value; use one per thread.
#ifndef NEARDUP_STAGE_TIME_H_
#define NEARDUP_STAGE_TIME_H_

#include <atomic>
#include <cstdint>

namespace neardup {

struct StageTime {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // of the whole process, all threads
  // Of the thread that ran the stage (and the timer): the part of the stage
  // that did not run on other threads. On an idle machine with n threads the
  // stage cannot take less than max(main_cpu_seconds, cpu_seconds / n), which
  // is what makes the figure useful on a loaded one.
  double main_cpu_seconds = 0;
  // CPU time of the stage's serial steps (the in-order filters of its
  // pipelines), on whichever threads ran them; 0 where not measured. The
  // stage cannot take less than this either, whatever the thread count:
  // the main thread's figure misses serial steps that ran on a worker.
  double serial_cpu_seconds = 0;

  StageTime& operator+=(const StageTime& other) {
    wall_seconds += other.wall_seconds;
    cpu_seconds += other.cpu_seconds;
    main_cpu_seconds += other.main_cpu_seconds;
    serial_cpu_seconds += other.serial_cpu_seconds;
    return *this;
  }
};

// Sums the CPU time of serial steps, each timed on the thread that runs it
// (`SerialCpuTime::Scope` around the step's body). Two steps of one pipeline
// (its first and last filters) may run at once on different threads: the
// sum is atomic. Cost: two reads of the thread's CPU clock per step (a
// system call each, ~0.3 us: nothing against a step of 1 MiB of input).
// A step that waits for a task (the read of compressed input waits for its
// frame's decoding) lets oneTBB run other tasks on its thread meanwhile;
// their time is counted too, so the sum is an upper bound there. Scopes
// nested on one thread count once (the outermost).
class SerialCpuTime {
 public:
  // Times its own lifetime into `sum`; does nothing when `sum` is null.
  class Scope {
   public:
    explicit Scope(SerialCpuTime* sum);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    SerialCpuTime* sum_;
    uint64_t start_ns_ = 0;
    bool nested_ = false;  // inside another Scope on this thread: adds nothing
  };

  double seconds() const {
    return static_cast<double>(nanoseconds_.load(std::memory_order_relaxed)) * 1e-9;
  }

 private:
  std::atomic<uint64_t> nanoseconds_{0};
};

// Measures from its construction (or the last Restart) to Elapsed().
// REQUIRES: Elapsed and Lap on the thread that constructed or restarted it.
class StageTimer {
 public:
  StageTimer() { Restart(); }
  void Restart();
  StageTime Elapsed() const;
  // Elapsed(), then Restart(): the time of one stage of a sequence.
  StageTime Lap();

 private:
  double wall_start_ = 0;
  double cpu_start_ = 0;
  double thread_cpu_start_ = 0;
};

// The process' peak resident set size so far, in bytes (0 where the system
// does not say).
uint64_t PeakResidentBytes();

}  // namespace neardup

#endif  // NEARDUP_STAGE_TIME_H_
