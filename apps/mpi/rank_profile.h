// --profile of neardup-mpi's commands: each rank's time in
// each stage (the first, "start", is everything before the first stage:
// loading, MPI_Init, examining and planning the inputs) (wall and CPU), and the CPU of that inside
// MPI calls (a rank waiting for its peers in a collective spins, which shows as CPU: cpu minus that
// is the stage's own work), its verification work (the near-duplicate commands) and peak memory,
// one line per rank on rank 0's stderr. Thread safety: the main thread only (Print is collective).
#ifndef NEARDUP_APPS_MPI_RANK_PROFILE_H_
#define NEARDUP_APPS_MPI_RANK_PROFILE_H_

#include <cstdint>
#include <vector>

#include "distributed_pairs.h"
#include "mpi_comm.h"
#include "neardup/near_duplicates.h"
#include "neardup/stage_time.h"

namespace neardup::mpi {

class RankProfile {
 public:
  // Records the first stage, "start": from the process' start (its fork by
  // the launcher, /proc/self/stat; before the huge-page re-exec and
  // MPI_Init) to now, with the process' CPU and its MPI calls so far
  // (none where the start time is unknown).
  explicit RankProfile(const Comm& comm);
  // Ends the current stage.
  void Lap(const char* stage) { Record(stage, timer_.Lap(), comm_.in_mpi()); }
  // The stages FindPairsDistributed timed, in order; the next stage starts
  // now.
  void Add(const DistributedPairsStats& stats);
  // This rank's verification work (before the counts are summed: the
  // documents it fingerprinted again, its candidates after the split by
  // cost, those it handed to another rank) and the bytes of pairs it
  // placed (all saved by --checkpoint, so a resumed job prints them too),
  // and the records of the deferred sketches' handover and the last band
  // round's merge (not saved: 0 after a resume). Without it (`fingerprint`)
  // the line ends after the total and the peak memory.
  void SetWork(const DistributedPairsStats& stats, const NearDuplicateReport& report);
  // Collective: rank 0 prints every rank's line when `enabled`.
  void Print(Comm& comm, bool enabled) const;

 private:
  struct Stage {
    const char* name;
    StageTime time;
    double mpi_cpu_seconds;
  };
  void Record(const char* name, const StageTime& time, const StageTime& mpi_now);

  const Comm& comm_;
  StageTimer timer_;
  StageTime mpi_at_;
  bool has_work_ = false;  // SetWork was called
  uint64_t pair_bytes_ = 0;
  uint64_t sketched_ = 0;
  uint64_t handed_out_ = 0;
  uint64_t handed_out_back_ = 0;
  uint64_t handed_in_ = 0;
  uint64_t handed_in_back_ = 0;
  uint64_t candidates_ = 0;
  uint64_t exact_checks_ = 0;
  uint64_t moved_ = 0;
  uint64_t band_merge_in_ = 0;
  uint64_t band_merge_out_ = 0;
  std::vector<Stage> stages_;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_RANK_PROFILE_H_
