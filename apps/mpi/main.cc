// neardup-mpi: the near-duplicate commands of `neardup` on many machines
// (`mpirun -n N neardup-mpi pairs|clusters|dedup|fingerprint ...`) and the
// containment top-N of a collection (`similar COLLECTION`), with the
// same flags (parsed by the shared front end, apps/frontend/) and the same
// output, byte for byte, whatever N. The design: docs/DISTRIBUTED.md.
//
// Errors: every rank reaches the same exit code through the collective
// agreement of mpi_comm.h, and rank 0 prints the message; what still
// escapes as an exception ends the whole job with MPI_Abort after printing,
// never a hang of the other ranks.
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>

#include "exit_codes.h"
#include "fingerprint_command.h"
#include "huge_pages.h"
#include "launch_settings.h"
#include "mpi_jobs.h"
#include "near_duplicate_commands.h"
#include "output.h"
#include "similar_command.h"

namespace {

int ParseAndRun(int argc, char** argv, int rank) {
  CLI::App app{
      "neardup-mpi: the near-duplicate commands of neardup over MPI ranks; the output "
      "is byte-identical to neardup's",
      "neardup-mpi"};
  app.set_version_flag("--version", "neardup-mpi 0.1.0");
  app.require_subcommand(1);

  neardup::mpi::MpiFlags flags;
  flags.command_line.assign(argv + 1, argv + argc);
  std::function<int()> run;
  neardup::cli::RegisterFingerprintCommand(&app, &run,
                                           [&](const neardup::cli::FingerprintJob& job) {
                                             return neardup::mpi::RunFingerprintOnRanks(job, flags);
                                           });
  neardup::cli::RegisterNearDuplicateCommands(
      &app, &run, [&](const neardup::cli::NearDuplicateJob& job) {
        return neardup::mpi::RunNearDuplicatesOnRanks(job, flags);
      });
  neardup::mpi::RegisterSimilarCommand(&app, &run, &flags);
  for (const char* name : {"fingerprint", "pairs", "clusters", "dedup", "similar"}) {
    flags.Register(app.get_subcommand(name));
  }
  for (const char* name : {"fingerprint", "pairs", "clusters", "dedup"}) {
    flags.RegisterCheckpoint(app.get_subcommand(name));
  }

  // Every rank parses (they all need the flags); only rank 0 prints help,
  // the version and usage errors.
  std::ostringstream discard;
  std::ostream& out = rank == 0 ? std::cout : discard;
  std::ostream& err = rank == 0 ? std::cerr : discard;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return neardup::cli::kExitUsage;
  }
  return run ? run() : neardup::cli::kExitUsage;
}

// Open MPI's point-to-point layer chosen directly on one host
// (launch_settings.h: ~0.2 s of MPI_Init); before the restart, which keeps
// the environment.
void PreferSingleHostPml() {
  const std::optional<neardup::mpi::EnvironmentSetting> setting =
      neardup::mpi::SingleHostPml([](const char* name) { return std::getenv(name); });
  if (setting) setenv(setting->name.c_str(), setting->value.c_str(), 0);
}

}  // namespace

int main(int argc, char** argv) {
  PreferSingleHostPml();
  // Transparent huge pages for the heap (apps/frontend/huge_pages.h). A
  // rank's working set is gigabytes of vectors read at random (the
  // verification's sketches and chunk sets, the band-key records, the
  // pairs): with 4 KiB pages a third of its CPU went to TLB misses and
  // page faults in one loaded run (docs/DISTRIBUTED.md, "Measured, session
  // 10"). Before MPI_Init (the launcher's environment is kept);
  // NEARDUP_MPI_HUGEPAGES=0 turns it off.
  neardup::cli::RestartWithMallocHugePages(argv, "NEARDUP_MPI_HUGEPAGES",
                                           "NEARDUP_MPI_HUGEPAGES_RESTARTED");
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "neardup-mpi: MPI_Init_thread failed\n");
    return neardup::cli::kExitInternal;
  }
  // MPI errors end the job (the default handler) rather than returning codes
  // that every call would have to check.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = neardup::cli::kExitOk;
  const char* failure = nullptr;
  std::string what;
  try {
    code = ParseAndRun(argc, argv, rank);
  } catch (const std::bad_alloc&) {
    failure = "out of memory";
    code = neardup::cli::kExitIo;
  } catch (const std::exception& e) {
    what = std::string("internal error: ") + e.what();
    failure = what.c_str();
    code = neardup::cli::kExitInternal;
  } catch (...) {
    failure = "internal error: unknown exception";
    code = neardup::cli::kExitInternal;
  }
  if (failure != nullptr) {
    // The other ranks may be waiting in a collective this rank never
    // reaches: end them all.
    std::fprintf(stderr, "neardup-mpi: rank %d: %s\n", rank, failure);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  if (rank == 0) {
    neardup::Status flushed = neardup::cli::FlushStandardOutput();
    if (!flushed.ok() && code == neardup::cli::kExitOk) {
      std::fprintf(stderr, "neardup-mpi: %s\n", flushed.ToString().c_str());
      code = neardup::cli::ExitCodeFor(flushed);
    }
  }
  MPI_Finalize();
  return code;
}
