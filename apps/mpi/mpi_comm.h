// The few collective operations neardup-mpi needs, over the plain MPI-3.1 C
// API (Open MPI, MPICH, Intel MPI and Cray MPICH alike), with 64-bit sizes.
//
// MPI-3 counts are `int`: a message of 2 GiB or more overflows them. Every
// exchange here therefore goes in rounds of at most `max_round_bytes` bytes
// per rank (max_round_bytes / size to each peer, capped below INT_MAX, so
// no count can overflow). An exchange first swaps the messages' sizes
// (MPI_Alltoall of 64-bit counts), then moves each message straight from
// the sender's string into the receiver's (MPI_Isend/MPI_Irecv, one piece
// per peer and round): no staging buffer and no copy on either side, and
// no value-initialisation of a receive block (Message, StageBlock).
//
// Errors: a Status on one rank becomes the job's error through AgreeOnStatus
// (every rank learns the lowest failing rank's message and exit code), so
// that no rank waits in a collective its peers never enter.
// Thread safety: MPI is initialised for one thread (MPI_THREAD_FUNNELED);
// call these only from the main thread, the same sequence on every rank.
#ifndef NEARDUP_APPS_MPI_MPI_COMM_H_
#define NEARDUP_APPS_MPI_MPI_COMM_H_

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "neardup/stage_time.h"
#include "neardup/status.h"
#include "stage_block.h"

namespace neardup::mpi {

// Appends trivially copyable values and byte strings to a message.
class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}
  template <typename T>
  void Put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_->append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void PutBytes(std::string_view bytes) {
    Put<uint64_t>(bytes.size());
    out_->append(bytes);
  }
  template <typename T>
  void PutVector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    Put<uint64_t>(values.size());
    out_->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }

 private:
  std::string* out_;
};

// Reads what a ByteWriter wrote; a short or malformed message is DataLoss
// (a peer that sent something else), never a read past the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return bytes_.empty(); }
  template <typename T>
  Status Get(T* value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() < sizeof(T)) return Short();
    std::memcpy(value, bytes_.data(), sizeof(T));
    bytes_.remove_prefix(sizeof(T));
    return Status::Ok();
  }
  Status GetBytes(std::string* value);
  template <typename T>
  Status GetVector(std::vector<T>* values) {
    uint64_t count = 0;
    NEARDUP_RETURN_IF_ERROR(Get(&count));
    if (count > bytes_.size() / sizeof(T)) return Short();
    values->resize(count);
    // An empty vector's data() may be null, which memcpy must not get.
    if (count != 0) std::memcpy(values->data(), bytes_.data(), count * sizeof(T));
    bytes_.remove_prefix(count * sizeof(T));
    return Status::Ok();
  }

 private:
  static Status Short();
  std::string_view bytes_;
};

// A message an exchange received: its bytes in a block that MPI writes
// before anything reads it, so not value-initialised (std::string::resize
// zero-filled every received message first: user-space writes into pages
// the kernel had just zeroed, tens of ms a rank at 2 ranks on the 1M
// corpus), or this rank's own message, moved in as it was (no copy).
// Reads as a std::string_view (ByteReader, the merges).
class Message {
 public:
  Message() = default;
  explicit Message(std::string own) : own_(std::move(own)) {}
  // `size` bytes, not initialised. REQUIRES: written before they are read.
  static Message ForOverwrite(size_t size);

  const char* data() const { return block_ != nullptr ? block_.get() : own_.data(); }
  char* data() { return block_ != nullptr ? block_.get() : own_.data(); }
  size_t size() const { return block_ != nullptr ? block_size_ : own_.size(); }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return {data(), size()}; }
  operator std::string_view() const { return view(); }  // NOLINT: reads as bytes

 private:
  std::string own_;
  std::unique_ptr<char[]> block_;
  size_t block_size_ = 0;
};

class Comm {
 public:
  // `max_round_bytes`: the most bytes one rank sends or receives in one
  // round of an exchange (lowered to fit int counts).
  Comm(MPI_Comm comm, uint64_t max_round_bytes);

  int rank() const { return rank_; }
  int size() const { return size_; }
  uint64_t round_bytes() const { return round_bytes_; }
  // Rounds taken by the exchanges so far, and bytes this rank sent in them
  // (to other ranks and to itself).
  uint64_t rounds() const { return rounds_; }
  uint64_t bytes_sent() const { return bytes_sent_; }
  // Wall and CPU seconds this rank spent inside MPI calls so far (waiting
  // for its peers, which Open MPI does by spinning, and moving bytes): what
  // --profile subtracts to show each stage's own work.
  StageTime in_mpi() const { return in_mpi_; }

  // Collective. Ok on every rank when `local` is Ok on every rank; else the
  // lowest failing rank's status, on every rank.
  Status AgreeOnStatus(const Status& local);

  // Collective. send[r] goes to rank r; (*received)[r] is what rank r sent
  // here. In rounds (see above); the message to this rank itself is moved
  // (pass `send` with std::move to avoid a copy). Rounds and bytes_sent()
  // count what went between ranks (a rank's rounds: those its own messages
  // needed, sent or received).
  Status Exchange(std::vector<std::string> send, std::vector<Message>* received);
  // The same, sending each message from where it is (send[r] must stay valid
  // until the call returns): no copy of a list into a string first. The
  // message to this rank itself is copied (pass it empty where the caller
  // keeps its own part). No view may point into *received's messages: they
  // are reassigned before anything is sent (so never reuse one list as both
  // the views' owner and `received`).
  Status ExchangeViews(const std::vector<std::string_view>& send, std::vector<Message>* received);
  // The same, every received message (this rank's own copied too) laid end
  // to end at the start of *block, in rank order: (*received)[r] views
  // rank r's bytes there, valid until the block is taken again. The block
  // is handed on from the stage before (no fresh pages where its capacity
  // holds the messages). REQUIRES: no view of `send` points into *block.
  Status ExchangeViews(const std::vector<std::string_view>& send, StageBlock* block,
                       std::vector<std::string_view>* received);

  // Collective. Hands `local` of every rank, in rank order, to `sink` on
  // rank 0 (other ranks' sink is not called), in pieces of at most one
  // round: rank 0 never holds more than one round of another rank's bytes.
  // A sink error on rank 0 is returned by every rank.
  Status GatherToRoot(std::string_view local, const std::function<Status(std::string_view)>& sink);

  // Collective sums and prefix sums of 64-bit counts.
  uint64_t Sum(uint64_t value);
  // Element-wise sums of the values of the ranks before this one (zeros on
  // rank 0).
  std::vector<uint64_t> ExclusivePrefixSum(const std::vector<uint64_t>& values);
  // value of every rank, in rank order.
  std::vector<uint64_t> AllGather(uint64_t value);
  // `root`'s bytes, on every rank.
  void Broadcast(std::string* bytes, int root = 0);

 private:
  // Exchange's first step: the sizes of the messages every other rank
  // sends here (MPI_Alltoall), this rank's own entry 0.
  // The exchange of `send` (this rank's own entry left out by the caller)
  // into (*received)[r] for every other rank r, each a Message not
  // value-initialised. REQUIRES: received->size() == size().
  void ReceiveIntoMessages(const std::vector<std::string_view>& send,
                           std::vector<Message>* received);
  std::vector<uint64_t> IncomingSizes(const std::vector<std::string_view>& send);
  // Exchange's rounds: send[r] to every other rank r, rank r's `incoming[r]`
  // bytes received at into[r] (this rank's own entry is not touched).
  void MoveMessages(const std::vector<std::string_view>& send,
                    const std::vector<uint64_t>& incoming, const std::vector<char*>& into);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  uint64_t round_bytes_;
  uint64_t rounds_ = 0;
  uint64_t bytes_sent_ = 0;
  StageTime in_mpi_;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_MPI_COMM_H_
