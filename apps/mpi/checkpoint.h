// --checkpoint DIR and --resume: each finished stage of a job saved per
// rank, so that a job that died (a rank killed, a node lost: Open MPI 4.1
// ends the whole job then) restarts after its last finished stage and
// writes the same output as an uninterrupted run.
//
// DIR (on a file system every rank sees) holds
//   manifest              rank 0's record of the job and its finished stages
//   <stage>.rank<R>       rank R's state after <stage>
// all written atomically (checksummed_file.h: temporary name, fsync, rename,
// fsync of the directory) and checksummed, so a torn or damaged file is
// reported (DataLoss naming it), never used. The manifest holds the
// checkpoint's format version (bumped whenever a stage file's contents or
// the placement of the pairs change: a checkpoint of another version is
// refused with FailedPrecondition naming both versions, never resumed) and
// the job's identity: the command line (less the flags that cannot change what is
// computed: --resume, --threads, --quiet, --profile, --memory-mb,
// --max-round-bytes, --output and --checkpoint, so a checkpoint may be
// copied and the output renamed),
// the size and modification time of every input file (those below an input
// directory too) and the number of ranks; a stage is appended to it only
// after every rank has written that stage's file. A resume whose identity
// differs is refused (FailedPrecondition, naming the first difference); a
// resume without a manifest in DIR runs from the start. A run without
// --resume starts afresh (it first rewrites the manifest with no stage, so
// an older job's files are never mixed in).
//
// Test hooks, compiled only with NEARDUP_MPI_TEST_HOOKS defined: into the
// test build `neardup-mpi-testhooks` (apps/mpi/CMakeLists.txt, never
// installed), never into `neardup-mpi`, which reads neither variable.
// NEARDUP_MPI_TEST_EXIT_AFTER=<stage>:<rank> makes that rank exit at once
// (code 86, without MPI_Finalize, as a killed process would) right after
// <stage> is recorded in the manifest;
// NEARDUP_MPI_TEST_CHECKPOINT_FORMAT=<n> writes format version n (to test
// the refusal of an older binary's checkpoint).
#ifndef NEARDUP_APPS_MPI_CHECKPOINT_H_
#define NEARDUP_APPS_MPI_CHECKPOINT_H_

#include <string>
#include <string_view>
#include <vector>

#include "mpi_comm.h"
#include "neardup/status.h"

namespace neardup::mpi {

class Checkpoint {
 public:
  // A checkpoint that saves nothing (no --checkpoint).
  Checkpoint() = default;

  // Collective. Empty `dir`: disabled. `command_line`: the arguments after
  // the program name; `inputs`: the job's input paths (standard input,
  // "-", cannot be checkpointed: InvalidArgument). With `resume`, reads the
  // manifest and checks the identity; else starts a new manifest.
  static Result<Checkpoint> Open(Comm& comm, const std::string& dir, bool resume,
                                 const std::vector<std::string>& command_line,
                                 const std::vector<std::string>& inputs);

  bool enabled() const { return !dir_.empty(); }
  // Whether `stage` was finished by the run that is resumed.
  bool Done(std::string_view stage) const;
  // The last finished stage of the resumed run ("" when none).
  std::string LastDone() const { return done_.empty() ? std::string() : done_.back(); }
  // This rank's file of `stage`.
  std::string RankFile(std::string_view stage) const;

  // Collective, after this rank wrote its file of `stage` (`written`: how
  // that went). When every rank succeeded, rank 0 records the stage in the
  // manifest. The first failure of any rank, on every rank.
  Status Finish(Comm& comm, std::string_view stage, const Status& written);

 private:
  Status WriteManifest() const;

  std::string dir_;
  int rank_ = 0;
  std::string identity_;           // rank 0 only
  std::vector<std::string> done_;  // finished stages, in order
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_CHECKPOINT_H_
