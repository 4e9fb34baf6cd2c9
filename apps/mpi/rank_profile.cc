#include "rank_profile.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace neardup::mpi {
namespace {

double Seconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Seconds since this process started: field 22 of /proc/self/stat, in
// clock ticks since boot (10 ms on Linux), against CLOCK_BOOTTIME; nothing
// where /proc is not there.
std::optional<double> SecondsSinceProcessStart() {
  std::ifstream file("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: the fields after it.
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i < 22) continue;
    const long ticks_per_second = sysconf(_SC_CLK_TCK);
    if (ticks_per_second <= 0) return std::nullopt;
    const double started =
        std::strtod(field.c_str(), nullptr) / static_cast<double>(ticks_per_second);
    return Seconds(CLOCK_BOOTTIME) - started;
  }
  return std::nullopt;
}

}  // namespace

RankProfile::RankProfile(const Comm& comm) : comm_(comm) {
  if (const std::optional<double> wall = SecondsSinceProcessStart()) {
    const double cpu = Seconds(CLOCK_PROCESS_CPUTIME_ID);
    Record("start",
           StageTime{.wall_seconds = *wall,
                     .cpu_seconds = cpu,
                     .main_cpu_seconds = Seconds(CLOCK_THREAD_CPUTIME_ID)},
           comm.in_mpi());
  }
  mpi_at_ = comm.in_mpi();
}

void RankProfile::Add(const DistributedPairsStats& stats) {
  for (const DistributedPairsStats::Stage& stage : stats.stages) {
    Record(stage.name, stage.time, stage.in_mpi_at_end);
  }
  timer_.Restart();
  mpi_at_ = comm_.in_mpi();
}

void RankProfile::SetWork(const DistributedPairsStats& stats, const NearDuplicateReport& report) {
  has_work_ = true;
  sketched_ = stats.sketched_documents;
  candidates_ = report.candidates;
  exact_checks_ = report.exact_checks;
  pair_bytes_ = stats.pair_bytes;
  moved_ = stats.moved_candidates;
  band_merge_in_ = stats.band_merge_in;
  band_merge_out_ = stats.band_merge_out;
  handed_out_ = stats.handed_out_records;
  handed_out_back_ = stats.handed_out_back;
  handed_in_ = stats.handed_in_records;
  handed_in_back_ = stats.handed_in_back;
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
  std::snprintf(buffer, sizeof(buffer), " total %.3f/%.3f/%.3f", total.wall_seconds,
                total.cpu_seconds, total_mpi);
  line += buffer;
  if (has_work_) {
    std::snprintf(buffer, sizeof(buffer),
                  "; sketched %llu documents again; verified %llu candidates (%llu exact), %llu "
                  "handed to another rank; pairs sent %.3f MB",
                  static_cast<unsigned long long>(sketched_),
                  static_cast<unsigned long long>(candidates_),
                  static_cast<unsigned long long>(exact_checks_),
                  static_cast<unsigned long long>(moved_), static_cast<double>(pair_bytes_) / 1e6);
    line += buffer;
    std::snprintf(buffer, sizeof(buffer), "; last band merge %llu -> %llu candidates",
                  static_cast<unsigned long long>(band_merge_in_),
                  static_cast<unsigned long long>(band_merge_out_));
    line += buffer;
  }
  std::snprintf(buffer, sizeof(buffer), "; peak RSS %.1f MB",
                static_cast<double>(PeakResidentBytes()) / 1e6);
  line += buffer;
  if (has_work_) {
    std::snprintf(buffer, sizeof(buffer),
                  "; records handed out %llu (%llu to come back), handed in %llu (%llu sent back)",
                  static_cast<unsigned long long>(handed_out_),
                  static_cast<unsigned long long>(handed_out_back_),
                  static_cast<unsigned long long>(handed_in_),
                  static_cast<unsigned long long>(handed_in_back_));
    line += buffer;
  }
  line += '\n';
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
