// Settings neardup-mpi gives the MPI library before MPI_Init, from the
// launcher's environment. The pure part (no MPI), so it is unit-tested.
//
// Open MPI 4.1 chooses its point-to-point layer (the "pml") by opening every
// one it has and asking each; the "cm" layer opens its transports (PSM,
// PSM2, OFI), and the PSM libraries calibrate a timer for 0.1 s each while
// loading, pinned to the first CPU: ~0.2 s of every rank's MPI_Init on a
// host without Omni-Path or InfiniPath hardware, where "ob1" (shared memory
// and TCP) is what Open MPI chooses in the end anyway (docs/DISTRIBUTED.md,
// "Running it", Start-up). A job whose ranks all run on one host needs no
// network transport: there neardup-mpi asks for "ob1" directly. Jobs over
// several hosts keep Open MPI's own choice (UCX, PSM2, OFI on the fabrics
// that have them). Other MPI libraries ignore the variable.
//
// It is an override: an environment variable outranks Open MPI's parameter
// files, so a site that picks its pml there (`pml = ucx`) gets ob1 for a
// single-host job, and a site whose `btl` list has neither shared memory
// nor TCP fails in MPI_Init. Opting out: set OMPI_MCA_pml yourself
// (`OMPI_MCA_pml=ucx mpirun ...`, or empty for Open MPI's own choice); a
// launcher's value, even an empty one, is always kept. "^cm" (only the cm
// probe skipped) opens UCX instead and started 0.04-0.07 s slower than ob1
// on a tiny 2-rank job (docs/notebook/distributed.md, "Session 15").
#ifndef NEARDUP_APPS_MPI_LAUNCH_SETTINGS_H_
#define NEARDUP_APPS_MPI_LAUNCH_SETTINGS_H_

#include <functional>
#include <optional>
#include <string>

namespace neardup::mpi {

// A variable and the value to set it to.
struct EnvironmentSetting {
  std::string name;
  std::string value;
};

// The point-to-point layer to ask Open MPI for, given the launcher's
// environment (`get` returns a variable's value, nullptr when unset):
// OMPI_MCA_pml=ob1 when OMPI_COMM_WORLD_SIZE and OMPI_COMM_WORLD_LOCAL_SIZE
// (set by Open MPI's mpirun on every rank) are the same positive number and
// OMPI_MCA_pml is unset; otherwise nothing.
std::optional<EnvironmentSetting> SingleHostPml(const std::function<const char*(const char*)>& get);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_LAUNCH_SETTINGS_H_
