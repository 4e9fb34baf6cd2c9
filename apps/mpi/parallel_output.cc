#include "parallel_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace neardup::mpi {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Writes `bytes` at `offset` of `fd`, whole (pwrite may write less).
Status WriteAt(int fd, std::string_view bytes, uint64_t offset, const std::string& path) {
  // At most 1 GiB a call: Linux writes at most about 2 GiB per call anyway.
  constexpr size_t kMaxCall = size_t{1} << 30;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::pwrite(fd, bytes.data() + done, std::min(kMaxCall, bytes.size() - done),
                                   static_cast<off_t>(offset + done));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      return IoError("cannot write this rank's part of the output to " + path + ": " +
                     (wrote < 0 ? ErrnoText(errno) : std::string("nothing written")));
    }
    done += static_cast<size_t>(wrote);
  }
  return Status::Ok();
}

}  // namespace

Status WriteParts(Comm& comm, cli::OutputFile* output, std::string_view part, bool* in_parts) {
  std::string path;
  if (comm.rank() == 0) path = output->temp_path();
  comm.Broadcast(&path);
  int fd = -1;
  if (!path.empty()) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  // The same decision on every rank: path is rank 0's, and the sum is
  // everyone's.
  const bool everywhere = !path.empty() && comm.Sum(fd < 0 ? 1 : 0) == 0;
  if (in_parts != nullptr) *in_parts = everywhere;
  if (!everywhere) {
    if (fd >= 0) ::close(fd);
    return comm.GatherToRoot(part, [&](std::string_view piece) { return output->Write(piece); });
  }
  const uint64_t offset = comm.ExclusivePrefixSum(std::vector<uint64_t>{part.size()})[0];
  Status status = WriteAt(fd, part, offset, path);
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

}  // namespace neardup::mpi
