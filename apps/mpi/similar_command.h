// `neardup-mpi similar COLLECTION [--top N] [--min X] [--format F] [--output
// FILE]`: the rows of `neardup similar`, byte for byte, computed by every
// rank together (distributed_similar.h). Read-only: it always computes the
// full table from the collection's current commit and does not store it
// (`neardup similar` stores what it computes; its rows are the same).
#ifndef NEARDUP_APPS_MPI_SIMILAR_COMMAND_H_
#define NEARDUP_APPS_MPI_SIMILAR_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

#include "mpi_jobs.h"

namespace neardup::mpi {

// Adds the `similar` subcommand; its run reads *flags (neardup-mpi's own
// flags, registered by the caller) when it runs.
void RegisterSimilarCommand(CLI::App* app, std::function<int()>* run, const MpiFlags* flags);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_SIMILAR_COMMAND_H_
