// The band-key grouping of FindPairsDistributed's MinHash stage
// (band_groups.h): the shuffle of (band, key, document) records to the keys'
// owners, their grouping into candidate cliques, the sharing of large
// cliques and the expansion into candidate pairs per verifier.
#include "band_groups.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "candidate_runs.h"

namespace neardup::mpi {
namespace {

// A (band, key, document) record of the shuffle: 20 bytes on the wire.
struct KeyedDocument {
  uint32_t band = 0;
  uint64_t key = 0;
  uint64_t doc = 0;
  friend bool operator<(const KeyedDocument& x, const KeyedDocument& y) {
    if (x.band != y.band) return x.band < y.band;
    if (x.key != y.key) return x.key < y.key;
    return x.doc < y.doc;
  }
};

// The rank that groups a band key: a mix of band and key (the keys are
// already uniform hashes; the band keeps equal keys of different bands
// apart), so owners get equal shares of the keys.
int KeyOwner(uint32_t band, uint64_t key, int ranks) {
  uint64_t x = key ^ (uint64_t{band} * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return static_cast<int>(x % static_cast<uint64_t>(ranks));
}

// Bytes of a (band, key, document) record on the wire.
constexpr size_t kKeyRecordBytes = 4 + 8 + 8;
// Bytes of a candidate pair on the wire: its two documents.
constexpr size_t kCandidateBytes = 8 + 8;

// The records of the received messages sorted by (band, key, document),
// by a counting sort on the band and the key's top bits (the keys are
// uniform hashes, so the buckets hold a few records each), then a sort of
// each bucket: several times faster than sorting all records, and it reads
// each message once, into place. The records lie in *block (handed on from
// the last round, not value-initialised: each is written before it is
// read). DataLoss for a message that is not whole records of bands `bands`
// of documents below `num_documents` (a peer out of step).
Result<std::span<KeyedDocument>> SortRecords(const std::vector<Message>& messages, PartRange bands,
                                             uint64_t num_documents, StageBlock* block) {
  size_t total = 0;
  for (const Message& message : messages) {
    if (message.size() % kKeyRecordBytes != 0) {
      return DataLossError("a band key message of " + std::to_string(message.size()) +
                           " bytes is not whole records (ranks out of step)");
    }
    total += message.size() / kKeyRecordBytes;
  }
  const uint64_t num_bands = bands.end - bands.begin;
  int bits = 0;
  while (bits < 20 && (uint64_t{4} << bits) * num_bands < total) ++bits;
  const auto bucket_of = [&](const char* record, size_t* bucket) -> bool {
    uint32_t band = 0;
    uint64_t key = 0;
    std::memcpy(&band, record, 4);
    std::memcpy(&key, record + 4, 8);
    if (band < bands.begin || band >= bands.end) return false;
    *bucket = static_cast<size_t>(((band - bands.begin) << bits) | (bits ? key >> (64 - bits) : 0));
    return true;
  };
  std::vector<size_t> start((num_bands << bits) + 1, 0);
  for (const Message& message : messages) {
    for (size_t at = 0; at < message.size(); at += kKeyRecordBytes) {
      size_t bucket = 0;
      if (!bucket_of(message.data() + at, &bucket)) {
        return DataLossError("a band key record outside this round's bands (ranks out of step)");
      }
      uint64_t doc = 0;
      std::memcpy(&doc, message.data() + at + 12, 8);
      if (doc >= num_documents) {
        return DataLossError("a band key record of document " + std::to_string(doc) +
                             " outside the " + std::to_string(num_documents) +
                             " documents (ranks out of step)");
      }
      ++start[bucket + 1];
    }
  }
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<size_t> next(start.begin(), start.end() - 1);
  const std::span<KeyedDocument> records = block->Take<KeyedDocument>(total);
  for (const Message& message : messages) {
    for (size_t at = 0; at < message.size(); at += kKeyRecordBytes) {
      size_t bucket = 0;
      bucket_of(message.data() + at, &bucket);
      KeyedDocument& record = records[next[bucket]++];
      std::memcpy(&record.band, message.data() + at, 4);
      std::memcpy(&record.key, message.data() + at + 4, 8);
      std::memcpy(&record.doc, message.data() + at + 12, 8);
    }
  }
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(records.begin() + static_cast<ptrdiff_t>(start[b]),
                records.begin() + static_cast<ptrdiff_t>(start[b + 1]));
    }
  }
  return records;
}

// A group of candidates: a run [begin, end) of equal (band, key) in the
// sorted records, its documents ascending.
struct Group {
  size_t begin = 0;
  size_t end = 0;
};

// A hash of a group's member list (to find groups with equal members; the
// members are then compared).
uint64_t MembersHash(std::span<const uint64_t> docs) {
  uint64_t hash = docs.size();
  for (uint64_t doc : docs) {
    hash = (hash ^ doc) * 0x9e3779b97f4a7c15ULL;
    hash ^= hash >> 32;
  }
  return hash;
}

std::vector<uint64_t> MembersOf(std::span<const KeyedDocument> records, Group group) {
  std::vector<uint64_t> docs;
  docs.reserve(group.end - group.begin);
  for (size_t i = group.begin; i < group.end; ++i) docs.push_back(records[i].doc);
  return docs;
}

// The groups of two or more of sorted records, less each group whose
// members equal those of a group of an earlier band here: such a group adds
// no pair, and a large one (many copies of one text) would repeat its whole
// clique in every band (the single-process index emits a pair from its
// first band only, for the same reason). Members are compared exactly.
std::vector<Group> DistinctGroups(std::span<const KeyedDocument> records) {
  std::vector<Group> groups;
  std::unordered_multimap<uint64_t, size_t> seen;  // members' hash -> index in groups
  std::vector<uint64_t> members;
  for (size_t begin = 0, end = 0; begin < records.size(); begin = end) {
    while (end < records.size() && records[end].band == records[begin].band &&
           records[end].key == records[begin].key) {
      ++end;
    }
    if (end - begin < 2) continue;
    members = MembersOf(records, {begin, end});
    const uint64_t hash = MembersHash(members);
    bool repeated = false;
    for (auto [it, last] = seen.equal_range(hash); it != last && !repeated; ++it) {
      repeated = MembersOf(records, groups[it->second]) == members;
    }
    if (repeated) continue;
    seen.emplace(hash, groups.size());
    groups.push_back({begin, end});
  }
  return groups;
}

// Groups at least this large are shared by all ranks (their member lists
// go to every rank: 8 bytes a member, against the 16 bytes of each of the
// group's size^2 / 2 candidate pairs).
constexpr size_t kSharedGroupSize = 16;

// Collective. Takes the large groups out of *groups and returns the
// distinct member lists of every rank's large groups, the same lists in the
// same order on every rank. A clique of many copies of one text is a group
// in every band, held by the owners of its band keys; shared, it is
// expanded once for the whole job, each rank taking a share of its rows
// (ExpandGroups), instead of once by every owner, whole.
Result<std::vector<std::vector<uint64_t>>> ShareLargeGroups(Comm& comm,
                                                            std::span<const KeyedDocument> records,
                                                            std::vector<Group>* groups) {
  std::vector<std::vector<uint64_t>> distinct;
  if (comm.size() == 1) return distinct;
  std::string mine;
  ByteWriter writer(&mine);
  std::erase_if(*groups, [&](const Group& group) {
    if (group.end - group.begin < kSharedGroupSize) return false;
    writer.PutVector(MembersOf(records, group));
    return true;
  });
  std::vector<std::string> send(static_cast<size_t>(comm.size()), mine);
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  std::unordered_multimap<uint64_t, size_t> seen;  // members' hash -> index in distinct
  Status status;
  for (size_t r = 0; r < received.size() && status.ok(); ++r) {
    ByteReader reader(received[r]);
    while (!reader.done() && status.ok()) {
      std::vector<uint64_t> members;
      status = reader.GetVector(&members);
      if (!status.ok()) break;
      const uint64_t hash = MembersHash(members);
      bool repeated = false;
      for (auto [it, last] = seen.equal_range(hash); it != last && !repeated; ++it) {
        repeated = distinct[it->second] == members;
      }
      if (repeated) continue;
      seen.emplace(hash, distinct.size());
      distinct.push_back(std::move(members));
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return distinct;
}

// Where a candidate is verified: the owner of one of its two documents,
// the first or the second by a hash of the pair, so that the pairs of a
// clique of copies spread over the owners of its members (sent to the
// first document's owner, they would pile up on the early ranks: with two
// ranks, 3/4 of a clique spread evenly over the corpus on rank 0).
int VerifierOf(const CandidatePair& pair, const DocumentLayout& layout) {
  uint64_t x = pair.a * 0x9e3779b97f4a7c15ULL ^ pair.b;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return layout.OwnerOf((x & 1) != 0 ? pair.a : pair.b);
}

// The candidate pairs of this rank's groups and of its share of the shared
// ones (the rows x = rank, rank + N, ... of each), per verifying rank
// (VerifierOf): each group is a clique of candidates.
std::vector<std::vector<CandidatePair>> ExpandGroups(
    std::span<const KeyedDocument> records, const std::vector<Group>& groups,
    const std::vector<std::vector<uint64_t>>& shared, const DocumentLayout& layout, int rank,
    int ranks) {
  std::vector<std::vector<CandidatePair>> found(static_cast<size_t>(ranks));
  // Each list sized for its share of the pairs up front (grown by doubling,
  // every step copied the list into fresh pages: about twice the final
  // size in all, on the 1M corpus hundreds of MB a rank).
  uint64_t total = 0;
  for (const Group& group : groups) {
    total += (group.end - group.begin) * (group.end - group.begin - 1) / 2;
  }
  for (const std::vector<uint64_t>& members : shared) {
    for (size_t x = static_cast<size_t>(rank); x < members.size();
         x += static_cast<size_t>(ranks)) {
      total += members.size() - x - 1;
    }
  }
  const size_t share = static_cast<size_t>(total / static_cast<uint64_t>(ranks) * 9 / 8);
  for (size_t r = 0; r < found.size(); ++r) {
    // This rank's own list is where the round's candidates are merged
    // (ShuffleBandRound): room for every rank's share for this rank (about
    // `total` when the ranks find alike) and a quarter more for the split
    // by cost. Capacity never written is never faulted in: under the
    // default overcommit it costs address space, not memory; with
    // vm.overcommit_memory=2 the own list commits ~1.4x this rank's
    // expansion (~2.5x its share at 2 ranks), on top of MergeUnique's
    // block where that is taken instead.
    found[r].reserve(r == static_cast<size_t>(rank) ? share * static_cast<size_t>(ranks) * 5 / 4
                                                    : share);
  }
  auto add = [&](uint64_t a, uint64_t b) {
    const CandidatePair pair{a, b};
    found[static_cast<size_t>(VerifierOf(pair, layout))].push_back(pair);
  };
  for (const Group& group : groups) {
    for (size_t x = group.begin; x < group.end; ++x) {
      for (size_t y = x + 1; y < group.end; ++y) add(records[x].doc, records[y].doc);
    }
  }
  for (const std::vector<uint64_t>& members : shared) {
    for (size_t x = static_cast<size_t>(rank); x < members.size();
         x += static_cast<size_t>(ranks)) {
      for (size_t y = x + 1; y < members.size(); ++y) add(members[x], members[y]);
    }
  }
  return found;
}

}  // namespace

Status ShuffleBandRound(Comm& comm, const DocumentLayout& layout,
                        const std::vector<Fingerprint>& local, uint64_t first_document,
                        const NearDuplicateScheme& scheme, PartRange bands, StageBlock* block,
                        std::vector<CandidatePair>* mine, DistributedPairsStats* stats) {
  const int ranks = comm.size();
  std::vector<std::string> outgoing(static_cast<size_t>(ranks));
  const uint64_t num_bands = bands.end - bands.begin;
  for (std::string& message : outgoing) {
    message.reserve(local.size() * num_bands * kKeyRecordBytes / static_cast<size_t>(ranks) * 9 /
                    8);
  }
  std::vector<uint64_t> keys;
  for (size_t i = 0; i < local.size(); ++i) {
    NEARDUP_RETURN_IF_ERROR(ComputeBandKeys(local[i], scheme, bands, &keys));
    for (size_t b = 0; b < keys.size(); ++b) {
      const uint32_t band = static_cast<uint32_t>(bands.begin + b);
      char record[kKeyRecordBytes];
      std::memcpy(record, &band, 4);
      std::memcpy(record + 4, &keys[b], 8);
      const uint64_t doc = first_document + i;
      std::memcpy(record + 12, &doc, 8);
      outgoing[static_cast<size_t>(KeyOwner(band, keys[b], ranks))].append(record, kKeyRecordBytes);
    }
  }
  for (size_t r = 0; r < outgoing.size(); ++r) {
    if (r != static_cast<size_t>(comm.rank())) stats->key_bytes += outgoing[r].size();
  }
  std::vector<Message> keyed;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(outgoing), &keyed));

  // *block serves, one after another, the sorted records, SortUnique's key
  // lists and the candidates received (each dead before the next takes
  // it): one block of fresh pages a job rather than three a round.
  Result<std::span<KeyedDocument>> sorted = SortRecords(keyed, bands, layout.total, block);
  keyed.clear();
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(sorted.status()));
  const std::span<const KeyedDocument> records = *sorted;
  std::vector<Group> groups = DistinctGroups(records);
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::vector<uint64_t>> shared,
                           ShareLargeGroups(comm, records, &groups));
  std::vector<std::vector<CandidatePair>> found =
      ExpandGroups(records, groups, shared, layout, comm.rank(), ranks);
  // The records are dead from here: the block is taken again below.
  // A message is the pairs' bytes (16 each), sent from the sorted list
  // itself (a copy into a string was ~180 MB of fresh pages a rank at 2
  // ranks on the 1M corpus); this rank's own pairs are not sent at all.
  static_assert(sizeof(CandidatePair) == kCandidateBytes);
  const size_t me = static_cast<size_t>(comm.rank());
  const auto bytes_of = [](const std::vector<CandidatePair>& pairs) {
    return std::string_view(reinterpret_cast<const char*>(pairs.data()),
                            pairs.size() * sizeof(CandidatePair));
  };
  std::vector<std::string_view> messages(found.size());
  for (size_t r = 0; r < found.size(); ++r) {
    SortUnique(&found[r], block);  // its key lists in the records' block
    if (r == me) continue;
    messages[r] = bytes_of(found[r]);
    stats->candidate_bytes += messages[r].size();
  }
  // Received into the key lists' block (this rank's own message is empty).
  std::vector<std::string_view> incoming;
  NEARDUP_RETURN_IF_ERROR(comm.ExchangeViews(messages, block, &incoming));
  for (size_t r = 0; r < found.size(); ++r) {
    if (r != me) found[r] = {};
  }
  // Every list is sorted and unique (the earlier rounds', this rank's own,
  // each peer's): merged, not sorted again (a radix sort of them all was
  // a tenth of a rank's time, and two lists of fresh pages), into this
  // rank's own list where its capacity holds them all (ExpandGroups
  // reserved it) and, after the last round, a quarter more (below), else
  // into a fresh block.
  std::vector<std::string_view> others;
  if (!mine->empty()) others.push_back(bytes_of(*mine));
  for (std::string_view message : incoming) {
    if (message.size() % kCandidateBytes != 0) {
      return DataLossError("a message of candidates is not whole pairs (ranks out of step)");
    }
    if (!message.empty()) others.push_back(message);
  }
  // The last round's list is the one the split by cost (BalanceVerification,
  // distributed_pairs.cc) may hand more candidates to: room for a quarter
  // more, so that those merge into it in place when they fit (without room
  // the receiver copied its whole list into a fresh block: up to ~0.4 s of
  // page zeroing and copying on the 1M corpus' receiving rank). In place
  // only where the capacity holds that quarter too: a skewed round (peers'
  // pairs near this rank's own) can fill the own list's block. Capacity
  // never written is never faulted in: under the default overcommit it
  // costs address space, not memory; with vm.overcommit_memory=2 it counts
  // against the commit limit. Earlier rounds' lists are merged again, so
  // they get none.
  const bool last_round = bands.end == scheme.num_parts;
  if (last_round) {
    stats->band_merge_in = found[me].size();
    for (std::string_view run : others) stats->band_merge_in += run.size() / kCandidateBytes;
  }
  NEARDUP_ASSIGN_OR_RETURN(const bool in_place,
                           MergeUniqueInPlace(&found[me], others, layout.total, last_round));
  if (in_place) {
    *mine = std::move(found[me]);
    if (last_round) stats->band_merge_out = mine->size();
    return Status::Ok();
  }
  std::vector<std::string_view> runs = std::move(others);
  runs.push_back(bytes_of(found[me]));
  Result<std::vector<CandidatePair>> merged = MergeUnique(runs, layout.total, last_round);
  if (!merged.ok()) return merged.status();
  *mine = std::move(merged).value();
  if (last_round) stats->band_merge_out = mine->size();
  return Status::Ok();
}

}  // namespace neardup::mpi
