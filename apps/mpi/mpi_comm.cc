#include "mpi_comm.h"

#include <time.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <span>
#include <utility>

namespace neardup::mpi {
namespace {

// One message of at most INT_MAX bytes at a time, for the calls whose count
// is an int.
constexpr uint64_t kMaxMessageBytes = INT_MAX;

double ClockSeconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Adds the wall and CPU time (of this thread, which makes every MPI call)
// from its construction to its destruction to *total.
class MpiClock {
 public:
  explicit MpiClock(StageTime* total)
      : total_(total),
        wall_(ClockSeconds(CLOCK_MONOTONIC)),
        cpu_(ClockSeconds(CLOCK_THREAD_CPUTIME_ID)) {}
  ~MpiClock() {
    total_->wall_seconds += ClockSeconds(CLOCK_MONOTONIC) - wall_;
    total_->cpu_seconds += ClockSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_;
  }
  MpiClock(const MpiClock&) = delete;
  MpiClock& operator=(const MpiClock&) = delete;

 private:
  StageTime* total_;
  double wall_;
  double cpu_;
};

}  // namespace

Status ByteReader::GetBytes(std::string* value) {
  uint64_t size = 0;
  NEARDUP_RETURN_IF_ERROR(Get(&size));
  if (size > bytes_.size()) return Short();
  value->assign(bytes_.data(), size);
  bytes_.remove_prefix(size);
  return Status::Ok();
}

Status ByteReader::Short() {
  return DataLossError("a message from another rank ended early (ranks out of step)");
}

Comm::Comm(MPI_Comm comm, uint64_t max_round_bytes) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // One round's piece to a peer (round_bytes_ / size) stays below INT_MAX
  // and is at least one byte.
  round_bytes_ =
      std::clamp<uint64_t>(max_round_bytes, static_cast<uint64_t>(size_), kMaxMessageBytes - 1);
}

Status Comm::AgreeOnStatus(const Status& local) {
  MpiClock clock(&in_mpi_);
  int failing = local.ok() ? size_ : rank_;
  int first = size_;
  MPI_Allreduce(&failing, &first, 1, MPI_INT, MPI_MIN, comm_);
  if (first == size_) return Status::Ok();
  std::string message;
  int code = 0;
  if (rank_ == first) {
    message = "rank " + std::to_string(rank_) + ": " + local.message();
    code = static_cast<int>(local.code());
  }
  MPI_Bcast(&code, 1, MPI_INT, first, comm_);
  uint64_t size = message.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, first, comm_);
  message.resize(std::min<uint64_t>(size, kMaxMessageBytes));
  MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_CHAR, first, comm_);
  return Status(static_cast<StatusCode>(code), std::move(message));
}

Message Message::ForOverwrite(size_t size) {
  Message message;
  if (size == 0) return message;
  message.block_ = std::make_unique_for_overwrite<char[]>(size);
  message.block_size_ = size;
  return message;
}

Status Comm::Exchange(std::vector<std::string> send, std::vector<Message>* received) {
  const size_t n = static_cast<size_t>(size_);
  if (send.size() != n) return InternalError("Exchange needs one message per rank");
  received->clear();
  received->resize(n);
  // This rank's message to itself is moved, not sent: with one rank an
  // exchange copies nothing, with N it saves 1/N of the traffic and copies.
  const size_t me = static_cast<size_t>(rank_);
  (*received)[me] = Message(std::move(send[me]));
  send[me].clear();
  if (n == 1) return Status::Ok();
  const std::vector<std::string_view> views(send.begin(), send.end());
  ReceiveIntoMessages(views, received);
  return Status::Ok();
}

Status Comm::ExchangeViews(const std::vector<std::string_view>& send,
                           std::vector<Message>* received) {
  const size_t n = static_cast<size_t>(size_);
  if (send.size() != n) return InternalError("Exchange needs one message per rank");
  received->clear();
  received->resize(n);
  const size_t me = static_cast<size_t>(rank_);
  (*received)[me] = Message(std::string(send[me]));
  if (n == 1) return Status::Ok();
  std::vector<std::string_view> others = send;
  others[me] = {};
  ReceiveIntoMessages(others, received);
  return Status::Ok();
}

Status Comm::ExchangeViews(const std::vector<std::string_view>& send, StageBlock* block,
                           std::vector<std::string_view>* received) {
  const size_t n = static_cast<size_t>(size_);
  if (send.size() != n) return InternalError("Exchange needs one message per rank");
  const size_t me = static_cast<size_t>(rank_);
  std::vector<std::string_view> others = send;
  others[me] = {};
  std::vector<uint64_t> incoming = n == 1 ? std::vector<uint64_t>(1, 0) : IncomingSizes(others);
  incoming[me] = send[me].size();
  uint64_t total = 0;
  for (uint64_t size : incoming) total += size;
  const std::span<char> bytes = block->Take<char>(static_cast<size_t>(total));
  std::vector<char*> into(n, nullptr);
  received->assign(n, std::string_view());
  uint64_t offset = 0;
  for (size_t r = 0; r < n; ++r) {
    into[r] = bytes.data() + offset;
    (*received)[r] = std::string_view(bytes.data() + offset, incoming[r]);
    offset += incoming[r];
  }
  // An empty message's data() may be null, which memcpy must not get.
  if (!send[me].empty()) std::memcpy(into[me], send[me].data(), send[me].size());
  if (n == 1) return Status::Ok();
  incoming[me] = 0;
  MoveMessages(others, incoming, into);
  return Status::Ok();
}

void Comm::ReceiveIntoMessages(const std::vector<std::string_view>& send,
                               std::vector<Message>* received) {
  const size_t n = static_cast<size_t>(size_);
  const size_t me = static_cast<size_t>(rank_);
  const std::vector<uint64_t> incoming = IncomingSizes(send);
  std::vector<char*> into(n, nullptr);
  for (size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    (*received)[r] = Message::ForOverwrite(incoming[r]);
    into[r] = (*received)[r].data();
  }
  MoveMessages(send, incoming, into);
}

std::vector<uint64_t> Comm::IncomingSizes(const std::vector<std::string_view>& send) {
  const size_t n = static_cast<size_t>(size_);
  // The sizes first, so each message is received straight into its place
  // (no staging buffer, no copy: the messages of one exchange were hundreds
  // of MB copied twice and their buffers' pages faulted in every time).
  std::vector<uint64_t> sizes(n), incoming(n);
  for (size_t r = 0; r < n; ++r) sizes[r] = send[r].size();
  {
    MpiClock clock(&in_mpi_);
    MPI_Alltoall(sizes.data(), 1, MPI_UINT64_T, incoming.data(), 1, MPI_UINT64_T, comm_);
  }
  incoming[static_cast<size_t>(rank_)] = 0;
  return incoming;
}

void Comm::MoveMessages(const std::vector<std::string_view>& send,
                        const std::vector<uint64_t>& incoming, const std::vector<char*>& into) {
  const size_t n = static_cast<size_t>(size_);
  const size_t me = static_cast<size_t>(rank_);
  const uint64_t per_destination = round_bytes_ / n;
  uint64_t num_rounds = 0;
  for (size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    num_rounds = std::max({num_rounds, (send[r].size() + per_destination - 1) / per_destination,
                           (incoming[r] + per_destination - 1) / per_destination});
  }
  // In rounds of at most per_destination bytes per peer (an int count each,
  // and at most round_bytes_ in flight per rank): round k moves bytes
  // [k * per_destination, (k + 1) * per_destination) of every message.
  // Messages of one pair of ranks and one tag arrive in order (MPI's
  // non-overtaking rule), so the pieces need no numbering.
  constexpr int kTag = 23;
  std::vector<MPI_Request> requests;
  requests.reserve(2 * n);
  for (uint64_t round = 0; round < num_rounds; ++round) {
    const uint64_t offset = round * per_destination;
    requests.clear();
    for (size_t step = 1; step < n; ++step) {
      // Receive from the rank `step` before, send to the rank `step` after:
      // every pair of ranks is busy at once.
      const size_t from = (me + n - step) % n;
      if (offset < incoming[from]) {
        const uint64_t count = std::min(per_destination, incoming[from] - offset);
        MPI_Request& request = requests.emplace_back();
        MPI_Irecv(into[from] + offset, static_cast<int>(count), MPI_BYTE, static_cast<int>(from),
                  kTag, comm_, &request);
      }
    }
    for (size_t step = 1; step < n; ++step) {
      const size_t to = (me + step) % n;
      if (offset < send[to].size()) {
        const uint64_t count = std::min(per_destination, send[to].size() - offset);
        MPI_Request& request = requests.emplace_back();
        MPI_Isend(send[to].data() + offset, static_cast<int>(count), MPI_BYTE, static_cast<int>(to),
                  kTag, comm_, &request);
        bytes_sent_ += count;
      }
    }
    {
      MpiClock clock(&in_mpi_);
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    }
    ++rounds_;
  }
}

Status Comm::GatherToRoot(std::string_view local,
                          const std::function<Status(std::string_view)>& sink) {
  constexpr int kTag = 17;
  Status status;
  if (rank_ != 0) {
    MpiClock clock(&in_mpi_);
    uint64_t size = local.size();
    MPI_Send(&size, 1, MPI_UINT64_T, 0, kTag, comm_);
    for (uint64_t offset = 0; offset < size; offset += round_bytes_) {
      const uint64_t count = std::min<uint64_t>(round_bytes_, size - offset);
      MPI_Send(local.data() + offset, static_cast<int>(count), MPI_BYTE, 0, kTag, comm_);
      bytes_sent_ += count;
    }
  } else {
    status = sink(local);
    std::string buffer;
    for (int source = 1; source < size_; ++source) {
      uint64_t size = 0;
      {
        MpiClock clock(&in_mpi_);
        MPI_Recv(&size, 1, MPI_UINT64_T, source, kTag, comm_, MPI_STATUS_IGNORE);
      }
      for (uint64_t offset = 0; offset < size; offset += round_bytes_) {
        const uint64_t count = std::min<uint64_t>(round_bytes_, size - offset);
        buffer.resize(count);
        {
          MpiClock clock(&in_mpi_);
          MPI_Recv(buffer.data(), static_cast<int>(count), MPI_BYTE, source, kTag, comm_,
                   MPI_STATUS_IGNORE);
        }
        // After a sink error the rest is still received (the senders would
        // wait forever otherwise) but no longer written.
        if (status.ok()) status = sink(buffer);
      }
    }
  }
  return AgreeOnStatus(status);
}

uint64_t Comm::Sum(uint64_t value) {
  MpiClock clock(&in_mpi_);
  uint64_t sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_UINT64_T, MPI_SUM, comm_);
  return sum;
}

std::vector<uint64_t> Comm::ExclusivePrefixSum(const std::vector<uint64_t>& values) {
  MpiClock clock(&in_mpi_);
  std::vector<uint64_t> before(values.size(), 0);
  if (!values.empty()) {
    MPI_Exscan(values.data(), before.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
               comm_);
  }
  // MPI leaves rank 0's result undefined.
  if (rank_ == 0) std::fill(before.begin(), before.end(), 0);
  return before;
}

std::vector<uint64_t> Comm::AllGather(uint64_t value) {
  MpiClock clock(&in_mpi_);
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm_);
  return all;
}

void Comm::Broadcast(std::string* bytes, int root) {
  MpiClock clock(&in_mpi_);
  uint64_t size = bytes->size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm_);
  bytes->resize(size);
  for (uint64_t offset = 0; offset < size; offset += kMaxMessageBytes) {
    const uint64_t count = std::min(kMaxMessageBytes, size - offset);
    MPI_Bcast(bytes->data() + offset, static_cast<int>(count), MPI_BYTE, root, comm_);
  }
}

}  // namespace neardup::mpi
