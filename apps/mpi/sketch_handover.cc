#include "sketch_handover.h"

#include <string>
#include <utility>

#include "work_split.h"

namespace neardup::mpi {
namespace {

// Why this rank's documents (indices into `local`) are needed for
// verification (work_split.h's bits): its own candidates `mine` name them
// (kNeededHere). One pass over every candidate, so done once.
std::vector<uint8_t> NeededHere(size_t num_local, const std::vector<CandidatePair>& mine,
                                uint64_t first_document) {
  std::vector<uint8_t> needs(num_local, 0);
  auto mark = [&](uint64_t doc) {
    if (doc >= first_document && doc - first_document < num_local) {
      needs[doc - first_document] = kNeededHere;
    }
  };
  for (const CandidatePair& pair : mine) {
    mark(pair.a);
    mark(pair.b);
  }
  return needs;
}

// `needed_here` with the askers added: the rank `receiver` asked for them
// (kAskedByReceiver; none when receiver is no rank), another rank did
// (kAskedByAnotherRank).
std::vector<uint8_t> NeedsOfDocuments(const std::vector<uint8_t>& needed_here,
                                      const std::vector<std::vector<uint64_t>>& asked_docs,
                                      uint64_t first_document, size_t receiver) {
  std::vector<uint8_t> needs = needed_here;
  for (size_t r = 0; r < asked_docs.size(); ++r) {
    const uint8_t why = r == receiver ? kAskedByReceiver : kAskedByAnotherRank;
    for (uint64_t doc : asked_docs[r]) {
      if (doc >= first_document && doc - first_document < needs.size()) {
        needs[doc - first_document] |= why;
      }
    }
  }
  return needs;
}

// The documents of this rank (indices into `local`) that verification
// reads whose verification sketches were deferred (an empty bottom-k
// sketch: a candidate document has features, so its computed sketch is
// never empty), ascending.
std::vector<uint64_t> DeferredDocuments(const std::vector<Fingerprint>& local,
                                        const std::vector<uint8_t>& needs) {
  std::vector<uint64_t> docs;
  for (uint64_t i = 0; i < local.size(); ++i) {
    if (needs[i] != 0 && local[i].minhash.values.empty()) docs.push_back(i);
  }
  return docs;
}

}  // namespace

Status HandOverSketching(Comm& comm, const DocumentLayout& layout, const DeferredSketches& sketches,
                         const std::vector<CandidatePair>& mine,
                         const std::vector<std::vector<uint64_t>>& asked_docs,
                         const DocumentSet& fetched, const std::vector<Fingerprint>& local,
                         SketchWork* work, DistributedPairsStats* stats) {
  const size_t ranks = static_cast<size_t>(comm.size());
  const size_t me = static_cast<size_t>(comm.rank());
  const uint64_t first_document = layout.first[me];
  work->handed_out.assign(local.size(), 0);
  work->receiver = ranks;
  // Without records to hand (or a way to sketch them), every rank sketches
  // its own, as all ranks see alike.
  const bool can_hand = ranks > 1 && sketches.record && sketches.id && sketches.of_records;
  const std::vector<uint8_t> needed_here = NeededHere(local.size(), mine, first_document);
  std::vector<uint8_t> needs = NeedsOfDocuments(needed_here, asked_docs, first_document, ranks);
  work->deferred = DeferredDocuments(local, needs);
  if (!can_hand) return Status::Ok();
  std::vector<uint64_t> bytes(work->deferred.size());
  uint64_t cost = 0;
  for (size_t i = 0; i < work->deferred.size(); ++i) {
    bytes[i] = sketches.record(work->deferred[i]).size();
    cost += bytes[i];
  }
  const std::vector<uint64_t> costs = comm.AllGather(cost);
  std::vector<bool> eligible(ranks);
  for (size_t r = 0; r < ranks; ++r) eligible[r] = layout.count[r] > 0;
  bool anyone_gives = false;
  for (size_t r = 0; r < ranks; ++r) anyone_gives |= HandoverOf(costs, eligible, r).amount > 0;
  if (!anyone_gives) return Status::Ok();
  const Handover handover = HandoverOf(costs, eligible, me);
  std::vector<std::string> send(ranks);
  if (handover.amount > 0) {
    work->receiver = handover.receiver;
    needs = NeedsOfDocuments(needed_here, asked_docs, first_document, handover.receiver);
    const std::vector<uint64_t> handed =
        RecordsToHand(work->deferred, bytes, needs, handover.amount);
    ByteWriter writer(&send[handover.receiver]);
    for (uint64_t doc : handed) {
      const bool back = (needs[doc] & kNeededHere) != 0;
      work->handed_out[doc] = 1;
      if (back) work->coming_back.push_back(doc);
      ++stats->handed_out_records;
      if (back) ++stats->handed_out_back;
      writer.Put(first_document + doc);
      writer.Put<uint8_t>(back ? 1 : 0);
      writer.PutBytes(sketches.id(doc));
      writer.PutBytes(sketches.record(doc));
    }
    stats->sketch_bytes += send[handover.receiver].size();
    size_t kept = 0;
    for (uint64_t doc : work->deferred) {
      if (work->handed_out[doc] == 0) work->deferred[kept++] = doc;
    }
    work->deferred.resize(kept);
  }
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  // The records handed here, in rank order, each rank's ascending: global
  // document order. Each must be the sender's, and one this rank asked for
  // or one whose sketches go back.
  std::vector<std::string> ids;
  std::vector<std::string> records;
  Status status;
  for (size_t r = 0; r < ranks && status.ok(); ++r) {
    ByteReader reader(received[r]);
    while (!reader.done() && status.ok()) {
      uint64_t doc = 0;
      uint8_t back = 0;
      status = reader.Get(&doc);
      if (status.ok()) status = reader.Get(&back);
      if (status.ok()) {
        ids.emplace_back();
        records.emplace_back();
        status = reader.GetBytes(&ids.back());
      }
      if (status.ok()) status = reader.GetBytes(&records.back());
      // A malformed peer message, as elsewhere (band_groups.cc,
      // candidate_runs.cc): DataLoss.
      if (status.ok() && (doc >= layout.total || static_cast<size_t>(layout.OwnerOf(doc)) != r ||
                          (!work->in_docs.empty() && doc <= work->in_docs.back()) || back > 1 ||
                          (back == 0 && !fetched.Contains(doc)))) {
        status = DataLossError("rank " + std::to_string(r) + " handed the record of document " +
                               std::to_string(doc) +
                               " here out of order, not its own, not asked for or with a "
                               "malformed flag (ranks out of step)");
      }
      if (status.ok()) {
        work->in_docs.push_back(doc);
        work->in_from.push_back(r);
        work->in_back.push_back(back != 0);
        ++stats->handed_in_records;
        if (back != 0) ++stats->handed_in_back;
      }
    }
    received[r] = {};
  }
  if (status.ok() && !records.empty()) {
    status = sketches.of_records(std::move(ids), std::move(records), &work->in_sketches);
    if (status.ok() && work->in_sketches.size() != work->in_docs.size()) {
      status = InternalError("sketched " + std::to_string(work->in_sketches.size()) +
                             " records of " + std::to_string(work->in_docs.size()));
    }
  }
  stats->sketched_documents += work->in_docs.size();
  return comm.AgreeOnStatus(status);
}

}  // namespace neardup::mpi
