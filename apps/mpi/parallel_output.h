// The output of a job written by every rank at once: each rank's part at
// its own offset of the one output file, which rank 0 then renames into
// place (issue 15: "ranks write parts and a final rename").
//
// The output is rank 0's cli::OutputFile, opened as `neardup` opens it: a
// hidden temporary beside the target, renamed over it by Finish(true) and
// removed by Finish(false), so a failed job leaves no file that looks
// complete. Every rank opens that temporary (no O_CREAT: a rank that does
// not see it, on a host without the shared file system, cannot create a
// stray copy), writes its part with pwrite at the exclusive prefix sum of
// the parts' sizes, and fsyncs and closes it before rank 0 renames it, so
// the bytes are on the file system (a shared one, NFS or a parallel file
// system, as well as a local disk) before the file gets its name. Rank 0
// never receives or copies the other ranks' bytes.
// --no-fsync (cli::FileOutputsFsync() false on every rank) drops that
// fsync, as it drops rank 0's: each rank still closes its descriptor before
// the rename, and so its bytes are in the file system's cache by then.
//
// Where that cannot be done (standard output, a FIFO or device written in
// place, a rank that cannot open the temporary) the parts go through rank 0
// in rank order instead (Comm::GatherToRoot): the same bytes, slower.
#ifndef NEARDUP_APPS_MPI_PARALLEL_OUTPUT_H_
#define NEARDUP_APPS_MPI_PARALLEL_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "mpi_comm.h"
#include "neardup/status.h"
#include "output.h"

namespace neardup::mpi {

// Collective. Writes every rank's `part`, in rank order, as the content of
// `output` (rank 0's; ignored elsewhere). REQUIRES: nothing was written to
// `output` before. *in_parts (when given) says whether the ranks wrote
// their parts themselves. A write error on any rank is every rank's error.
Status WriteParts(Comm& comm, cli::OutputFile* output, std::string_view part,
                  bool* in_parts = nullptr);

// The part's pieces in order: calls write(piece) for each piece, returning
// the first error write returns.
using PartPieces = std::function<Status(const std::function<Status(std::string_view)>& write)>;

// The same for a part of `bytes` bytes handed over in pieces: where each rank
// writes its part itself, the pieces go through one buffer of
// kPartBufferBytes (PartWriter, part_writer.h), written out whenever it
// fills, so a rank never holds its whole part in one string (on the
// 1M-document corpus' dedup, ~265 MB of fresh pages a rank;
// docs/DISTRIBUTED.md "Fresh memory"). Where the parts go through rank 0
// the part is gathered into one string first. A rank whose pieces do not
// add up to `bytes` fails with InternalError.
inline constexpr size_t kPartBufferBytes = size_t{8} << 20;
Status WriteParts(Comm& comm, cli::OutputFile* output, uint64_t bytes, const PartPieces& pieces,
                  bool* in_parts = nullptr);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_PARALLEL_OUTPUT_H_
