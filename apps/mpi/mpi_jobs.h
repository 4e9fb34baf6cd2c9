// The commands of neardup-mpi: the jobs the shared front end parses
// (apps/frontend/), run on every rank of MPI_COMM_WORLD. Each writes exactly
// what the single-process command writes, each rank its part of the output
// (parallel_output.h).
#ifndef NEARDUP_APPS_MPI_MPI_JOBS_H_
#define NEARDUP_APPS_MPI_MPI_JOBS_H_

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fingerprint_command.h"
#include "near_duplicate_commands.h"

namespace neardup::mpi {

// The flags neardup-mpi adds to every command.
struct MpiFlags {
  // Per-rank budget for one round of the band key shuffle. Default 1024 MiB:
  // fewer rounds when larger.
  uint64_t memory_mb = 1024;
  // The most bytes one rank sends in one exchange round (0: a quarter of
  // memory_mb, at most 2 GiB - 1). Tests set it tiny to force many rounds.
  uint64_t max_round_bytes = 0;
  // --checkpoint DIR and --resume (checkpoint.h; not for `similar`).
  std::string checkpoint_dir;
  bool resume = false;
  // The arguments after the program name: the job's identity in a checkpoint.
  std::vector<std::string> command_line;

  void Register(CLI::App* command);
  void RegisterCheckpoint(CLI::App* command);
  uint64_t RoundBytes() const;
};

// Collective; the same exit code on every rank.
int RunFingerprintOnRanks(const cli::FingerprintJob& job, const MpiFlags& flags);
int RunNearDuplicatesOnRanks(const cli::NearDuplicateJob& job, const MpiFlags& flags);

// "neardup-mpi: <message>" on stderr (rank 0 only), and the exit code.
int ReportErrorOnRanks(const Status& status, int rank);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_MPI_JOBS_H_
