#include "distributed_clusters.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "leader_scan.h"

namespace neardup::mpi {
namespace {

OwnRange OwnRangeOf(const Comm& comm, const DocumentLayout& layout) {
  const size_t me = static_cast<size_t>(comm.rank());
  return {layout.first[me], layout.count[me]};
}

// Decodes a message of 64-bit document numbers, each of which must be on
// this rank.
Status GetOwnDocs(std::string_view message, OwnRange own, std::vector<uint64_t>* docs) {
  ByteReader reader(message);
  while (!reader.done()) {
    uint64_t doc = 0;
    NEARDUP_RETURN_IF_ERROR(reader.Get(&doc));
    if (!own.Holds(doc)) {
      return InternalError("a peer named document " + std::to_string(doc) +
                           ", which is not on this rank");
    }
    docs->push_back(doc);
  }
  return Status::Ok();
}

// A document that is not its cluster's first member, as sent to the owner
// of the first member (with its length where the keep rule needs it).
struct MemberRecord {
  uint64_t cluster = 0;
  uint64_t doc = 0;
  uint64_t length = 0;
};

// Each document of this rank that is not its cluster's first member, sent
// as (cluster, document[, length]) to the owner of the cluster's first
// member; the length when `lengths` (this rank's documents') is given.
std::vector<std::string> MembersToFirstOwners(const Comm& comm, const DocumentLayout& layout,
                                              const std::vector<uint64_t>& cluster_of,
                                              const std::vector<uint64_t>* lengths) {
  const OwnRange own = OwnRangeOf(comm, layout);
  std::vector<std::string> send(static_cast<size_t>(comm.size()));
  for (uint64_t i = 0; i < cluster_of.size(); ++i) {
    if (cluster_of[i] == own.first + i) continue;
    ByteWriter writer(&send[static_cast<size_t>(layout.OwnerOf(cluster_of[i]))]);
    writer.Put(cluster_of[i]);
    writer.Put(own.first + i);
    if (lengths != nullptr) writer.Put((*lengths)[i]);
  }
  return send;
}

// The records MembersToFirstOwners sent here (`with_lengths` as it was
// given lengths): decoded, checked (the cluster is one of this rank's
// first members, the member a later document) and sorted by cluster, then
// member.
Result<std::vector<MemberRecord>> ReceiveMembers(const std::vector<Message>& received, OwnRange own,
                                                 const std::vector<uint64_t>& cluster_of,
                                                 bool with_lengths) {
  std::vector<MemberRecord> members;
  for (const Message& message : received) {
    ByteReader reader(message);
    while (!reader.done()) {
      MemberRecord record;
      NEARDUP_RETURN_IF_ERROR(reader.Get(&record.cluster));
      NEARDUP_RETURN_IF_ERROR(reader.Get(&record.doc));
      if (with_lengths) NEARDUP_RETURN_IF_ERROR(reader.Get(&record.length));
      if (!own.Holds(record.cluster) || cluster_of[record.cluster - own.first] != record.cluster ||
          record.doc <= record.cluster) {
        return InternalError("document " + std::to_string(record.doc) + " names cluster " +
                             std::to_string(record.cluster) +
                             ", which is not a first member on this rank");
      }
      members.push_back(record);
    }
  }
  std::sort(members.begin(), members.end(), [](const MemberRecord& x, const MemberRecord& y) {
    return x.cluster != y.cluster ? x.cluster < y.cluster : x.doc < y.doc;
  });
  return members;
}

Result<std::vector<uint64_t>> LabelsOf(Comm& comm, const DocumentLayout& layout,
                                       const std::vector<uint64_t>& label,
                                       const std::vector<uint64_t>& docs);

// The first copy of each own document (itself unless a SimHash pair at
// distance 0 names it as the later copy: leader_scan.h's TakeCopyPairs,
// which takes those pairs out of *pairs). The records go to the later
// copies' owners. nullopt on every rank when no rank has such a pair
// (MinHash, or no copies); otherwise a value on every rank, empty on a rank
// without documents, so that every rank runs the same collectives after.
// Collective (a sum; an exchange and an agreement when any).
Result<std::optional<std::vector<uint64_t>>> FirstCopies(Comm& comm, const DocumentLayout& layout,
                                                         std::vector<SimilarPair>* pairs) {
  const OwnRange own = OwnRangeOf(comm, layout);
  std::vector<CopyRecord> copies = TakeCopyPairs(pairs);
  if (comm.Sum(copies.size()) == 0) return std::optional<std::vector<uint64_t>>();
  std::vector<std::string> send(static_cast<size_t>(comm.size()));
  for (const CopyRecord& record : copies) {
    ByteWriter(&send[static_cast<size_t>(layout.OwnerOf(record.doc))]).Put(record);
  }
  copies = {};
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  std::vector<uint64_t> first_copy(own.count);
  for (uint64_t i = 0; i < own.count; ++i) first_copy[i] = own.first + i;
  Status status;
  for (const Message& message : received) {
    ByteReader reader(message);
    std::vector<CopyRecord> records;
    while (status.ok() && !reader.done()) {
      CopyRecord record;
      status = reader.Get(&record);
      if (status.ok()) records.push_back(record);
    }
    if (status.ok()) status = ApplyCopyRecords(records, own, &first_copy);
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return std::optional<std::vector<uint64_t>>(std::move(first_copy));
}

// The leader rule over ranks (ClusterDocuments' scan: in document order,
// a document joins its first earlier neighbour that is a leader, or leads).
// Each pair is on the owner of a or of b (PairPlacement::kVerifiers). Rank t scans in
// round t, once every earlier rank has broadcast its leader flags (one bit
// per document: 62.5 KB for 500,000 documents) and sent, for each of t's
// documents, the smallest leader among its neighbours in the pairs that
// earlier rank verified (a record per document, not per pair). So no pair
// moves: a rank groups the pairs of its own second documents while the
// earlier ranks scan, then looks each earlier neighbour up in the bits.
// Groups of SimHash copies (pairs at distance 0; grouped_pairs.h) are
// clustered as ClusterDocumentGroups does: the scan leaves the later
// copies out, and each then takes its first copy's cluster, asked of the
// first copy's owner when that is another rank (O(documents), where the
// scan over every copy's pairs would cost O(g) per neighbour of a group).
// Collective.
Result<std::vector<uint64_t>> LeaderClusters(Comm& comm, const DocumentLayout& layout,
                                             std::vector<SimilarPair> pairs) {
  const OwnRange own = OwnRangeOf(comm, layout);
  const size_t ranks = static_cast<size_t>(comm.size());
  const size_t me = static_cast<size_t>(comm.rank());
  Status status;
  bool sorted_by_a = true;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const SimilarPair& pair = pairs[i];
    if (!(pair.a < pair.b && pair.b < layout.total) && status.ok()) {
      status =
          InternalError("pair (" + std::to_string(pair.a) + ", " + std::to_string(pair.b) +
                        ") must have a < b < the " + std::to_string(layout.total) + " documents");
    } else if (!(own.Holds(pair.a) || own.Holds(pair.b)) && status.ok()) {
      status = InternalError("pair (" + std::to_string(pair.a) + ", " + std::to_string(pair.b) +
                             ") is not on the owner of one of its documents");
    }
    if (i > 0 && pair.a < pairs[i - 1].a) sorted_by_a = false;
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  NEARDUP_ASSIGN_OR_RETURN(std::optional<std::vector<uint64_t>> copy_of,
                           FirstCopies(comm, layout, &pairs));
  // The same on every rank (a rank without documents has an empty list).
  const bool copies = copy_of.has_value();
  std::vector<uint64_t> first_copy;
  if (copies) {
    first_copy = std::move(*copy_of);
  } else {
    first_copy.resize(own.count);
    for (uint64_t i = 0; i < own.count; ++i) first_copy[i] = own.first + i;
  }
  const Neighbours earlier = NeighboursByLater(pairs, own);
  // The pairs whose second document is on a later rank.
  KeepLaterPairs(own, sorted_by_a, &pairs);

  // The leader flag of every document before this rank's, a bit each
  // (looked up once per pair scanned), filled round by round; the smallest
  // leader neighbour of each own document in the earlier ranks' pairs.
  std::vector<bool> external_leader(own.first, false);
  std::vector<uint64_t> smallest_leader(own.count, UINT64_MAX);
  std::vector<uint8_t> leader(own.count, 0);
  std::vector<uint64_t> cluster_of(own.count);
  // Rounds 0..N-2 on every rank, all collective; the last rank also runs
  // its own round N-1, which ends before any collective (it sends nothing).
  for (size_t round = 0; round + 1 < ranks || round == me; ++round) {
    std::string flags;
    std::vector<std::string> smallest(ranks);
    if (round == me) {
      ScanLeaders(own, earlier, external_leader, smallest_leader, first_copy, &cluster_of, &leader);
      // The last rank's flags are nobody's earlier documents.
      if (round + 1 == ranks) break;
      flags.assign((own.count + 7) / 8, '\0');
      for (uint64_t i = 0; i < own.count; ++i) {
        if (leader[i] != 0) flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
      }
      for (const SmallestLeader& record : SmallestLeaders(pairs, leader, own, layout.total)) {
        ByteWriter(&smallest[static_cast<size_t>(layout.OwnerOf(record.doc))]).Put(record);
      }
      pairs = {};
    }
    comm.Broadcast(&flags, static_cast<int>(round));
    std::vector<Message> received;
    NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(smallest), &received));
    if (round >= me) continue;
    const uint64_t first = layout.first[round];
    const uint64_t count = layout.count[round];
    if (flags.size() != (count + 7) / 8) {
      if (status.ok()) status = InternalError("leader flags of the wrong length");
      continue;
    }
    for (uint64_t i = 0; i < count; ++i) {
      external_leader[first + i] = ((static_cast<uint8_t>(flags[i / 8]) >> (i % 8)) & 1) != 0;
    }
    const Message& message = received[round];
    if (message.size() % sizeof(SmallestLeader) != 0) {
      if (status.ok()) status = InternalError("a message of smallest leaders is not whole records");
      continue;
    }
    std::vector<SmallestLeader> records(message.size() / sizeof(SmallestLeader));
    if (!records.empty()) std::memcpy(records.data(), message.data(), message.size());
    if (status.ok()) {
      status = ApplySmallestLeaders(records, static_cast<int>(round), {first, count}, own,
                                    external_leader, &smallest_leader);
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  if (!copies) return cluster_of;
  // The later copies whose first copy is on an earlier rank: its cluster,
  // final there (ScanLeaders left the first copy's number).
  std::vector<uint64_t> later;
  std::vector<uint64_t> firsts;
  for (uint64_t i = 0; i < own.count; ++i) {
    if (first_copy[i] < own.first) {
      later.push_back(i);
      firsts.push_back(first_copy[i]);
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<uint64_t> clusters,
                           LabelsOf(comm, layout, cluster_of, firsts));
  for (size_t k = 0; k < later.size(); ++k) cluster_of[later[k]] = clusters[k];
  return cluster_of;
}

// The labels of `docs` (any rank's; `label` this rank's documents'):
// each asked of its owner. Collective (two exchanges, one agreement).
Result<std::vector<uint64_t>> LabelsOf(Comm& comm, const DocumentLayout& layout,
                                       const std::vector<uint64_t>& label,
                                       const std::vector<uint64_t>& docs) {
  const OwnRange own = OwnRangeOf(comm, layout);
  const size_t ranks = static_cast<size_t>(comm.size());
  std::vector<std::string> ask(ranks);
  for (uint64_t doc : docs) ByteWriter(&ask[static_cast<size_t>(layout.OwnerOf(doc))]).Put(doc);
  std::vector<Message> asked;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(ask), &asked));
  std::vector<std::string> answer(ranks);
  Status status;
  for (size_t r = 0; r < ranks && status.ok(); ++r) {
    std::vector<uint64_t> wanted;
    status = GetOwnDocs(asked[r], own, &wanted);
    ByteWriter writer(&answer[r]);
    for (uint64_t doc : wanted) writer.Put(label[doc - own.first]);
  }
  // A bad request leaves its asker short of answers: the one agreement
  // below fails every rank (no collective is skipped on the way).
  std::vector<Message> answered;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(answer), &answered));
  std::vector<ByteReader> readers;
  readers.reserve(ranks);
  for (const Message& message : answered) readers.emplace_back(message);
  std::vector<uint64_t> labels(docs.size());
  for (size_t i = 0; i < docs.size() && status.ok(); ++i) {
    status = readers[static_cast<size_t>(layout.OwnerOf(docs[i]))].Get(&labels[i]);
    if (status.ok() && labels[i] > docs[i]) {
      status = InternalError("document " + std::to_string(docs[i]) + " has the label " +
                             std::to_string(labels[i]) + ", above itself");
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return labels;
}

// Components: a union-find spread over the ranks, each document's label
// (the smallest member of its component found so far, itself at first) on
// its owner, each rank's spanning forest where it is
// (PairPlacement::kForests). A round hooks: for each pair (a, b) with
// labels la != lb, the end with the larger label and that label's document
// are told m = min(la, lb) (each owner keeps the smallest it is told); then
// labels jump once (a document whose label l is not itself takes l's
// label). Rounds go on until one lowers no label (one Sum a round: about
// a dozen collectives a round in all, each a few ms on the loaded VM). Labels only fall
// and stay members of their component, so at the fixed point (no pair has
// two labels, no label has another) each component has one label, which
// is its smallest member's own: ClusterDocuments' cluster_of. Rounds:
// about log of the longest path (each hook and jump halves it, roughly).
// Collective; nothing gathered on one rank.
Result<std::vector<uint64_t>> ComponentClusters(Comm& comm, const DocumentLayout& layout,
                                                const std::vector<SimilarPair>& pairs) {
  const OwnRange own = OwnRangeOf(comm, layout);
  const size_t ranks = static_cast<size_t>(comm.size());
  Status status;
  for (const SimilarPair& pair : pairs) {
    if (!(pair.a < pair.b && pair.b < layout.total)) {
      status =
          InternalError("pair (" + std::to_string(pair.a) + ", " + std::to_string(pair.b) +
                        ") must have a < b < the " + std::to_string(layout.total) + " documents");
      break;
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  // One rank holds every pair and document: the library's union-find, no
  // rounds of exchanges with itself (the same cluster_of).
  if (comm.size() == 1) return ClusterDocuments(layout.total, pairs, ClusterRule::kComponents);
  std::vector<uint64_t> label(own.count);
  for (uint64_t i = 0; i < own.count; ++i) label[i] = own.first + i;
  std::vector<uint64_t> ends;  // a and b of each pair
  ends.reserve(2 * pairs.size());
  for (const SimilarPair& pair : pairs) {
    ends.push_back(pair.a);
    ends.push_back(pair.b);
  }
  // Applies the (document, label) records sent here: each own document
  // keeps the smallest. Returns how many labels fell.
  auto apply = [&](const std::vector<Message>& received, uint64_t* fell) -> Status {
    for (const Message& message : received) {
      ByteReader reader(message);
      while (!reader.done()) {
        uint64_t doc = 0;
        uint64_t to = 0;
        NEARDUP_RETURN_IF_ERROR(reader.Get(&doc));
        NEARDUP_RETURN_IF_ERROR(reader.Get(&to));
        if (!own.Holds(doc) || to > doc) {
          return InternalError("a label " + std::to_string(to) + " for document " +
                               std::to_string(doc) + ", which is not on this rank or is below it");
        }
        uint64_t& mine = label[doc - own.first];
        if (to < mine) {
          mine = to;
          ++*fell;
        }
      }
    }
    return Status::Ok();
  };
  for (;;) {
    // Hook.
    NEARDUP_ASSIGN_OR_RETURN(std::vector<uint64_t> end_labels, LabelsOf(comm, layout, label, ends));
    std::vector<std::string> tell(ranks);
    auto put = [&](uint64_t doc, uint64_t to) {
      ByteWriter writer(&tell[static_cast<size_t>(layout.OwnerOf(doc))]);
      writer.Put(doc);
      writer.Put(to);
    };
    for (size_t i = 0; i < pairs.size(); ++i) {
      const uint64_t la = end_labels[2 * i];
      const uint64_t lb = end_labels[2 * i + 1];
      if (la == lb) continue;
      const uint64_t m = std::min(la, lb);
      const uint64_t high = std::max(la, lb);
      put(high, m);
      put(la == m ? pairs[i].b : pairs[i].a, m);
    }
    end_labels = {};
    std::vector<Message> received;
    NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(tell), &received));
    uint64_t fell = 0;
    const Status applied = apply(received, &fell);
    received.clear();
    // Jump once.
    std::vector<uint64_t> pointing;  // own documents whose label is another's
    std::vector<uint64_t> targets;
    for (uint64_t i = 0; i < own.count; ++i) {
      if (label[i] != own.first + i) {
        pointing.push_back(i);
        targets.push_back(label[i]);
      }
    }
    NEARDUP_ASSIGN_OR_RETURN(std::vector<uint64_t> next, LabelsOf(comm, layout, label, targets));
    uint64_t jumped = 0;
    for (size_t k = 0; k < pointing.size(); ++k) {
      if (next[k] < label[pointing[k]]) {
        label[pointing[k]] = next[k];
        ++jumped;
      }
    }
    NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(applied));
    // Done when the round lowered no label: then no pair has two labels
    // (its hook would have lowered one).
    if (comm.Sum(fell + jumped) == 0) break;
  }
  return label;
}

}  // namespace

Result<std::vector<uint64_t>> ClusterOnRanks(Comm& comm, const DocumentLayout& layout,
                                             std::vector<SimilarPair> pairs, ClusterRule rule) {
  if (rule == ClusterRule::kLeader) return LeaderClusters(comm, layout, std::move(pairs));
  return ComponentClusters(comm, layout, pairs);
}

Result<std::vector<bool>> KeepOnRanks(Comm& comm, const DocumentLayout& layout,
                                      const std::vector<uint64_t>& cluster_of,
                                      const std::vector<uint64_t>& lengths, KeepRule rule) {
  const OwnRange own = OwnRangeOf(comm, layout);
  std::vector<bool> keep(own.count);
  for (uint64_t i = 0; i < own.count; ++i) keep[i] = cluster_of[i] == own.first + i;
  // The first member is kept unless a later member is strictly longer
  // (shorter): only then does a cluster's choice need its members.
  if (rule == KeepRule::kFirst) return keep;
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(
      comm.Exchange(MembersToFirstOwners(comm, layout, cluster_of, &lengths), &received));
  Result<std::vector<MemberRecord>> sorted = ReceiveMembers(received, own, cluster_of, true);
  received.clear();
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(sorted.status()));
  const std::vector<MemberRecord>& members = *sorted;
  // ChooseKept's choice: in document order, a member replaces the best so
  // far only when strictly longer (shorter); the first member starts.
  std::vector<std::string> send(static_cast<size_t>(comm.size()));
  for (size_t begin = 0, end = 0; begin < members.size(); begin = end) {
    const uint64_t cluster = members[begin].cluster;
    uint64_t best = cluster;
    uint64_t best_length = lengths[cluster - own.first];
    for (end = begin; end < members.size() && members[end].cluster == cluster; ++end) {
      const MemberRecord& m = members[end];
      if ((rule == KeepRule::kLongest && m.length > best_length) ||
          (rule == KeepRule::kShortest && m.length < best_length)) {
        best = m.doc;
        best_length = m.length;
      }
    }
    if (best == cluster) continue;
    keep[cluster - own.first] = false;
    ByteWriter(&send[static_cast<size_t>(layout.OwnerOf(best))]).Put(best);
  }
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  Status status;
  std::vector<uint64_t> chosen;
  for (size_t r = 0; r < received.size() && status.ok(); ++r) {
    status = GetOwnDocs(received[r], own, &chosen);
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  for (uint64_t doc : chosen) keep[doc - own.first] = true;
  return keep;
}

Result<LocalClusters> GroupClustersOnRanks(Comm& comm, const DocumentLayout& layout,
                                           const std::vector<uint64_t>& cluster_of) {
  const OwnRange own = OwnRangeOf(comm, layout);
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(
      comm.Exchange(MembersToFirstOwners(comm, layout, cluster_of, nullptr), &received));
  Result<std::vector<MemberRecord>> members = ReceiveMembers(received, own, cluster_of, false);
  received.clear();
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(members.status()));
  LocalClusters clusters;
  for (size_t begin = 0, end = 0; begin < members->size(); begin = end) {
    const uint64_t first = (*members)[begin].cluster;
    std::vector<uint64_t>& list = clusters.members.emplace_back(1, first);
    for (end = begin; end < members->size() && (*members)[end].cluster == first; ++end) {
      list.push_back((*members)[end].doc);
    }
  }
  const uint64_t mine = clusters.members.size();
  clusters.first_number = comm.ExclusivePrefixSum({mine})[0];
  clusters.total = comm.Sum(mine);
  return clusters;
}

}  // namespace neardup::mpi
