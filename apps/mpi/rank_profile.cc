#include "rank_profile.h"

#include <cstdio>
#include <string>
#include <string_view>

namespace neardup::mpi {

void RankProfile::Add(const DistributedPairsStats& stats) {
  for (const DistributedPairsStats::Stage& stage : stats.stages) {
    Record(stage.name, stage.time, stage.in_mpi_at_end);
  }
  timer_.Restart();
  mpi_at_ = comm_.in_mpi();
}

void RankProfile::SetWork(const DistributedPairsStats& stats, const NearDuplicateReport& report) {
  sketched_ = stats.sketched_documents;
  candidates_ = report.candidates;
  exact_checks_ = report.exact_checks;
  pair_bytes_ = stats.pair_bytes;
  moved_ = stats.moved_candidates;
}

void RankProfile::Print(Comm& comm, bool enabled) const {
  if (!enabled) return;
  std::string line =
      "neardup-mpi: profile rank " + std::to_string(comm.rank()) + " (wall/cpu/cpu in MPI s):";
  StageTime total;
  double total_mpi = 0;
  char buffer[192];
  for (const Stage& stage : stages_) {
    std::snprintf(buffer, sizeof(buffer), " %s %.3f/%.3f/%.3f,", stage.name,
                  stage.time.wall_seconds, stage.time.cpu_seconds, stage.mpi_cpu_seconds);
    line += buffer;
    total += stage.time;
    total_mpi += stage.mpi_cpu_seconds;
  }
  std::snprintf(
      buffer, sizeof(buffer),
      " total %.3f/%.3f/%.3f; sketched %llu documents again; verified %llu "
      "candidates (%llu exact), %llu handed to another rank; pairs sent %.3f MB; peak RSS %.1f "
      "MB\n",
      total.wall_seconds, total.cpu_seconds, total_mpi, static_cast<unsigned long long>(sketched_),
      static_cast<unsigned long long>(candidates_), static_cast<unsigned long long>(exact_checks_),
      static_cast<unsigned long long>(moved_), static_cast<double>(pair_bytes_) / 1e6,
      static_cast<double>(PeakResidentBytes()) / 1e6);
  line += buffer;
  comm.GatherToRoot(line,
                    [](std::string_view piece) {
                      std::fwrite(piece.data(), 1, piece.size(), stderr);
                      return Status::Ok();
                    })
      .IgnoreError();
}

void RankProfile::Record(const char* name, const StageTime& time, const StageTime& mpi_now) {
  stages_.push_back({name, time, mpi_now.cpu_seconds - mpi_at_.cpu_seconds});
  mpi_at_ = mpi_now;
}

}  // namespace neardup::mpi
