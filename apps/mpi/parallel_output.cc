#include "parallel_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "part_writer.h"

namespace neardup::mpi {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Rank 0's temporary, opened by every rank; -1 on every rank where any rank
// cannot open it (the parts then go through rank 0). Collective.
int OpenOnEveryRank(Comm& comm, cli::OutputFile* output, std::string* path) {
  if (comm.rank() == 0) *path = output->temp_path();
  comm.Broadcast(path);
  int fd = -1;
  if (!path->empty()) fd = ::open(path->c_str(), O_WRONLY | O_CLOEXEC);
  // The same decision on every rank: path is rank 0's, and the sum is
  // everyone's.
  const bool everywhere = !path->empty() && comm.Sum(fd < 0 ? 1 : 0) == 0;
  if (!everywhere && fd >= 0) {
    ::close(fd);
    fd = -1;
  }
  return fd;
}

// fsyncs (unless --no-fsync) and closes fd after `status`; every rank's
// error is every rank's. Collective.
Status CloseOnEveryRank(Comm& comm, int fd, const std::string& path, Status status) {
  // --no-fsync: every rank parsed the same flags.
  if (status.ok() && cli::FileOutputsFsync() && ::fsync(fd) != 0) {
    status = IoError("cannot write this rank's part of the output to " + path +
                     ": fsync: " + ErrnoText(errno));
  }
  if (::close(fd) != 0 && status.ok()) {
    status =
        IoError("cannot close this rank's part of the output in " + path + ": " + ErrnoText(errno));
  }
  return comm.AgreeOnStatus(status);
}

}  // namespace

Status WriteParts(Comm& comm, cli::OutputFile* output, std::string_view part, bool* in_parts) {
  std::string path;
  const int fd = OpenOnEveryRank(comm, output, &path);
  if (in_parts != nullptr) *in_parts = fd >= 0;
  if (fd < 0) {
    return comm.GatherToRoot(part, [&](std::string_view piece) { return output->Write(piece); });
  }
  const uint64_t offset = comm.ExclusivePrefixSum(std::vector<uint64_t>{part.size()})[0];
  return CloseOnEveryRank(comm, fd, path, WriteAt(fd, part, offset, path));
}

Status WriteParts(Comm& comm, cli::OutputFile* output, uint64_t bytes, const PartPieces& pieces,
                  bool* in_parts) {
  std::string path;
  const int fd = OpenOnEveryRank(comm, output, &path);
  if (in_parts != nullptr) *in_parts = fd >= 0;
  if (fd < 0) {
    // Reserved exactly, as before the buffered writer: a part grown by
    // doubling would hold up to ~2x its size at a reallocation.
    std::string part;
    part.reserve(static_cast<size_t>(bytes));
    Status status = pieces([&](std::string_view piece) {
      part.append(piece);
      return Status::Ok();
    });
    if (status.ok() && part.size() != bytes) status = PartSizeError(part.size(), bytes, true);
    NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
    return comm.GatherToRoot(part, [&](std::string_view piece) { return output->Write(piece); });
  }
  const uint64_t offset = comm.ExclusivePrefixSum(std::vector<uint64_t>{bytes})[0];
  PartWriter writer(fd, offset, bytes, path, kPartBufferBytes);
  Status status = pieces([&](std::string_view piece) { return writer.Add(piece); });
  if (status.ok()) status = writer.Finish();
  return CloseOnEveryRank(comm, fd, path, status);
}

}  // namespace neardup::mpi
