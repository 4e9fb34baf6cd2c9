#include "verification_split.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "work_split.h"

namespace neardup::mpi {

std::vector<uint32_t> ChunkSizes(const std::vector<Fingerprint>& verifying) {
  std::vector<uint32_t> sizes(verifying.size());
  for (size_t i = 0; i < verifying.size(); ++i) {
    sizes[i] = static_cast<uint32_t>(std::min<size_t>(verifying[i].chunks.size(), UINT32_MAX));
  }
  return sizes;
}

Status BalanceVerification(Comm& comm, const DocumentLayout& layout, uint64_t cost,
                           const std::vector<std::vector<uint64_t>>& asked_docs,
                           const std::vector<uint32_t>& sizes, const LocalNumbering& numbering,
                           std::vector<CandidatePair>* candidates,
                           std::vector<CandidatePair>* moved_in, uint64_t* moved_out) {
  *moved_out = 0;
  const size_t ranks = static_cast<size_t>(comm.size());
  if (ranks == 1) return Status::Ok();
  const size_t me = static_cast<size_t>(comm.rank());
  const std::vector<uint64_t> costs = comm.AllGather(cost);
  // The ranks that hold documents take part (an empty one can take no
  // candidate: it owns none of their documents).
  std::vector<bool> eligible(ranks);
  for (size_t r = 0; r < ranks; ++r) eligible[r] = layout.count[r] > 0;
  const Handover handover = HandoverOf(costs, eligible, me);
  const size_t receiver = handover.receiver;
  const uint64_t to_move = handover.amount;
  std::vector<std::string> send(ranks);
  if (receiver != ranks) {
    const std::vector<uint64_t>& fetched = asked_docs[receiver];
    std::vector<CandidatePair>& list = *candidates;
    std::vector<CandidatePair> moved;
    uint64_t moved_cost = 0;
    size_t kept = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const CandidatePair pair = list[i];
      bool move = false;
      if (moved_cost < to_move && numbering.IsMine(pair.a) != numbering.IsMine(pair.b)) {
        const bool a_mine = numbering.IsMine(pair.a);
        const uint64_t mine_doc = numbering.Global(a_mine ? pair.a : pair.b);
        const uint64_t other = numbering.Global(a_mine ? pair.b : pair.a);
        move = static_cast<size_t>(layout.OwnerOf(other)) == receiver &&
               std::binary_search(fetched.begin(), fetched.end(), mine_doc);
      }
      if (move) {
        moved_cost += VerificationCost(sizes, pair);
        moved.push_back({numbering.Global(pair.a), numbering.Global(pair.b)});
      } else {
        list[kept++] = pair;
      }
    }
    list.resize(kept);
    *moved_out = moved.size();
    send[receiver].resize(moved.size() * sizeof(CandidatePair));
    if (!moved.empty()) std::memcpy(send[receiver].data(), moved.data(), send[receiver].size());
  }
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  // The received pairs in local numbers: each document this rank's or one
  // it fetched. At most one rank gives to this one, in sorted order.
  Status status;
  for (size_t r = 0; r < ranks && status.ok(); ++r) {
    const Message& message = received[r];
    if (message.size() % sizeof(CandidatePair) != 0) {
      status = DataLossError("a message of moved candidates is not whole pairs");
      break;
    }
    for (size_t at = 0; at < message.size(); at += sizeof(CandidatePair)) {
      CandidatePair pair;
      std::memcpy(&pair, message.data() + at, sizeof(pair));
      CandidatePair local;
      if (!numbering.Local(pair.a, &local.a) || !numbering.Local(pair.b, &local.b)) {
        status = InternalError("rank " + std::to_string(r) + " moved candidate (" +
                               std::to_string(pair.a) + ", " + std::to_string(pair.b) +
                               ") here, which this rank cannot verify");
        break;
      }
      if (!moved_in->empty() && !(moved_in->back() < local)) {
        status = InternalError("rank " + std::to_string(r) + " moved candidate (" +
                               std::to_string(pair.a) + ", " + std::to_string(pair.b) +
                               ") here out of order (or a second rank gave to this one)");
        break;
      }
      moved_in->push_back(local);
    }
  }
  return comm.AgreeOnStatus(status);
}

}  // namespace neardup::mpi
