#include "distributed_pairs.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

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

// The records of the received messages sorted by (band, key, document),
// by a counting sort on the band and the key's top bits (the keys are
// uniform hashes, so the buckets hold a few records each), then a sort of
// each bucket: several times faster than sorting all records, and it reads
// each message once, into place. DataLoss for a message that is not whole
// records of bands `bands` (a peer out of step).
Result<std::vector<KeyedDocument>> SortRecords(const std::vector<std::string>& messages,
                                               PartRange bands) {
  size_t total = 0;
  for (const std::string& message : messages) {
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
  for (const std::string& message : messages) {
    for (size_t at = 0; at < message.size(); at += kKeyRecordBytes) {
      size_t bucket = 0;
      if (!bucket_of(message.data() + at, &bucket)) {
        return DataLossError("a band key record outside this round's bands (ranks out of step)");
      }
      ++start[bucket + 1];
    }
  }
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<size_t> next(start.begin(), start.end() - 1);
  std::vector<KeyedDocument> records(total);
  for (const std::string& message : messages) {
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

// The member lists of the groups (runs of equal band and key in the sorted
// records) seen so far in one round, to find a group whose documents are
// exactly those of an earlier one. Holds positions into the records, not
// copies; compares members exactly (a hash only picks the bucket).
class SeenGroups {
 public:
  explicit SeenGroups(const std::vector<KeyedDocument>& records) : records_(records) {}

  // False when [begin, end) has the members of a group inserted before.
  bool Insert(size_t begin, size_t end) {
    uint64_t hash = end - begin;
    for (size_t i = begin; i < end; ++i) {
      hash = (hash ^ records_[i].doc) * 0x9e3779b97f4a7c15ULL;
      hash ^= hash >> 32;
    }
    auto [first, last] = groups_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      const auto [other_begin, other_end] = it->second;
      if (other_end - other_begin == end - begin &&
          std::equal(
              records_.begin() + static_cast<ptrdiff_t>(begin),
              records_.begin() + static_cast<ptrdiff_t>(end),
              records_.begin() + static_cast<ptrdiff_t>(other_begin),
              [](const KeyedDocument& x, const KeyedDocument& y) { return x.doc == y.doc; })) {
        return false;
      }
    }
    groups_.emplace(hash, std::make_pair(begin, end));
    return true;
  }

 private:
  const std::vector<KeyedDocument>& records_;
  std::unordered_multimap<uint64_t, std::pair<size_t, size_t>> groups_;
};

void SortUnique(std::vector<CandidatePair>* candidates) {
  std::sort(candidates->begin(), candidates->end());
  candidates->erase(std::unique(candidates->begin(), candidates->end()), candidates->end());
}

// The candidate pairs of sorted records, per owner rank of their first
// document. Each group of equal (band, key) is a clique of candidates; a
// pair goes to the owner of its first (smaller) document.
std::vector<std::vector<CandidatePair>> GroupCandidates(const std::vector<KeyedDocument>& records,
                                                        const DocumentLayout& layout, int ranks) {
  std::vector<std::vector<CandidatePair>> found(static_cast<size_t>(ranks));
  SeenGroups seen(records);
  for (size_t begin = 0, end = 0; begin < records.size(); begin = end) {
    while (end < records.size() && records[end].band == records[begin].band &&
           records[end].key == records[begin].key) {
      ++end;
    }
    // A group with the same members as one of an earlier band here adds
    // no pair: skip it rather than repeat its clique (the single-process
    // index emits a pair from its first band only, for the same reason).
    if (end - begin < 2 || !seen.Insert(begin, end)) continue;
    for (size_t x = begin; x < end; ++x) {
      std::vector<CandidatePair>& to = found[static_cast<size_t>(layout.OwnerOf(records[x].doc))];
      for (size_t y = x + 1; y < end; ++y) to.push_back({records[x].doc, records[y].doc});
    }
  }
  return found;
}

// One band round: keys of bands [bands.begin, bands.end) shuffled to their
// owners, grouped, and the candidate pairs sent to the owners of their first
// documents; appended to *mine.
Status ShuffleBandRound(Comm& comm, const DocumentLayout& layout,
                        const std::vector<Fingerprint>& local, uint64_t first_document,
                        const NearDuplicateScheme& scheme, PartRange bands,
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
  for (const std::string& message : outgoing) stats->key_bytes += message.size();
  std::vector<std::string> incoming;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(outgoing), &incoming));
  outgoing.assign(static_cast<size_t>(ranks), std::string());

  NEARDUP_ASSIGN_OR_RETURN(std::vector<KeyedDocument> records, SortRecords(incoming, bands));
  incoming.clear();
  std::vector<std::vector<CandidatePair>> found = GroupCandidates(records, layout, ranks);
  records = {};
  for (size_t r = 0; r < found.size(); ++r) {
    SortUnique(&found[r]);
    ByteWriter writer(&outgoing[r]);
    for (const CandidatePair& pair : found[r]) {
      writer.Put(pair.a);
      writer.Put(pair.b);
    }
    found[r] = {};
  }
  for (const std::string& message : outgoing) stats->candidate_bytes += message.size();
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(outgoing), &incoming));
  for (const std::string& message : incoming) {
    ByteReader reader(message);
    while (!reader.done()) {
      CandidatePair pair;
      NEARDUP_RETURN_IF_ERROR(reader.Get(&pair.a));
      NEARDUP_RETURN_IF_ERROR(reader.Get(&pair.b));
      mine->push_back(pair);
    }
  }
  SortUnique(mine);
  return Status::Ok();
}

// What verification reads of a document: its token count, bottom-k sketch
// and (exact verification) chunk set.
void PutSketch(const Fingerprint& fingerprint, bool with_chunks, ByteWriter* writer) {
  writer->Put(fingerprint.num_tokens);
  writer->Put(fingerprint.minhash.k);
  writer->PutVector(fingerprint.minhash.values);
  if (with_chunks) writer->PutVector(fingerprint.chunks);
}

Status GetSketch(ByteReader* reader, bool with_chunks, Fingerprint* fingerprint) {
  NEARDUP_RETURN_IF_ERROR(reader->Get(&fingerprint->num_tokens));
  NEARDUP_RETURN_IF_ERROR(reader->Get(&fingerprint->minhash.k));
  NEARDUP_RETURN_IF_ERROR(reader->GetVector(&fingerprint->minhash.values));
  if (with_chunks) NEARDUP_RETURN_IF_ERROR(reader->GetVector(&fingerprint->chunks));
  return Status::Ok();
}

// Rank 0 receives every rank's pairs (each sorted) and sorts them together.
Result<std::vector<SimilarPair>> GatherPairs(Comm& comm, const std::vector<SimilarPair>& pairs) {
  std::string message;
  ByteWriter writer(&message);
  for (const SimilarPair& pair : pairs) {
    writer.Put(pair.a);
    writer.Put(pair.b);
    writer.Put(pair.similarity);
    writer.Put<int32_t>(pair.distance);
  }
  std::vector<std::vector<SimilarPair>> lists(1);
  // A record may straddle two pieces of the gather: keep the tail.
  std::string pending;
  NEARDUP_RETURN_IF_ERROR(comm.GatherToRoot(message, [&](std::string_view piece) -> Status {
    pending.append(piece);
    constexpr size_t kRecord = 8 + 8 + 8 + 4;
    const size_t whole = pending.size() / kRecord * kRecord;
    ByteReader reader(std::string_view(pending).substr(0, whole));
    while (!reader.done()) {
      SimilarPair pair;
      int32_t distance = 0;
      NEARDUP_RETURN_IF_ERROR(reader.Get(&pair.a));
      NEARDUP_RETURN_IF_ERROR(reader.Get(&pair.b));
      NEARDUP_RETURN_IF_ERROR(reader.Get(&pair.similarity));
      NEARDUP_RETURN_IF_ERROR(reader.Get(&distance));
      pair.distance = distance;
      lists[0].push_back(pair);
    }
    pending.erase(0, whole);
    return Status::Ok();
  }));
  if (comm.rank() != 0) return std::vector<SimilarPair>{};
  return MergePairs(lists);
}

Result<std::vector<SimilarPair>> MinHashPairs(Comm& comm, const DocumentLayout& layout,
                                              std::vector<Fingerprint> local,
                                              const NearDuplicateScheme& scheme,
                                              const NearDuplicateOptions& options,
                                              uint64_t memory_bytes, NearDuplicateReport* report,
                                              DistributedPairsStats* stats) {
  const int ranks = comm.size();
  const uint64_t first_document = layout.first[static_cast<size_t>(comm.rank())];
  // Bands per round: a band's keys take about 2 x 20 bytes per document of
  // the largest share (sent, then received), plus the sort's copy.
  const uint64_t largest = *std::max_element(layout.count.begin(), layout.count.end());
  const uint64_t per_band = std::max<uint64_t>(1, largest * 64);
  const uint64_t bands_per_round =
      std::clamp<uint64_t>(memory_bytes / per_band, 1, std::max<uint64_t>(1, scheme.num_parts));
  std::vector<CandidatePair> mine;
  Status status;
  for (uint64_t begin = 0; begin < scheme.num_parts; begin += bands_per_round) {
    const PartRange bands{begin, std::min(scheme.num_parts, begin + bands_per_round)};
    status = comm.AgreeOnStatus(
        ShuffleBandRound(comm, layout, local, first_document, scheme, bands, &mine, stats));
    NEARDUP_RETURN_IF_ERROR(status);
    ++stats->band_rounds;
  }
  report->candidates += mine.size();

  // The second documents this rank does not hold, from their owners. Every
  // b > a >= first_document, so they all come after this rank's documents.
  const uint64_t end_of_mine = first_document + local.size();
  std::vector<uint64_t> remote;
  for (const CandidatePair& pair : mine) {
    if (pair.b >= end_of_mine) remote.push_back(pair.b);
  }
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  std::vector<std::string> requests(static_cast<size_t>(ranks));
  for (uint64_t doc : remote) ByteWriter(&requests[layout.OwnerOf(doc)]).Put(doc);
  std::vector<std::string> asked;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(requests), &asked));
  std::vector<std::string> replies(static_cast<size_t>(ranks));
  Status local_status;
  for (size_t r = 0; r < asked.size() && local_status.ok(); ++r) {
    ByteReader reader(asked[r]);
    ByteWriter writer(&replies[r]);
    while (!reader.done() && local_status.ok()) {
      uint64_t doc = 0;
      local_status = reader.Get(&doc);
      if (local_status.ok() && (doc < first_document || doc >= end_of_mine)) {
        local_status = InternalError("asked for document " + std::to_string(doc) +
                                     ", which is not on this rank");
      }
      if (local_status.ok()) PutSketch(local[doc - first_document], options.verify_exact, &writer);
    }
    stats->sketch_bytes += replies[r].size();
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  std::vector<std::string> sketches;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(replies), &sketches));
  replies.clear();

  // The verification set: this rank's documents, then the fetched ones in
  // document order, so local numbers keep the global order (a < b holds).
  const size_t num_mine = local.size();
  local.resize(num_mine + remote.size());
  size_t next = num_mine;
  for (const std::string& message : sketches) {
    ByteReader reader(message);
    while (!reader.done() && local_status.ok()) {
      local_status = GetSketch(&reader, options.verify_exact, &local[next++]);
    }
  }
  if (local_status.ok() && next != local.size()) {
    local_status = InternalError("fetched " + std::to_string(next - num_mine) + " sketches of " +
                                 std::to_string(remote.size()));
  }
  auto local_number = [&](uint64_t doc) -> uint64_t {
    if (doc < end_of_mine) return doc - first_document;
    return num_mine + static_cast<uint64_t>(std::lower_bound(remote.begin(), remote.end(), doc) -
                                            remote.begin());
  };
  std::vector<SimilarPair> pairs;
  if (local_status.ok()) {
    std::vector<CandidatePair> candidates;
    candidates.reserve(mine.size());
    for (const CandidatePair& pair : mine) {
      candidates.push_back({local_number(pair.a), local_number(pair.b)});
    }
    Result<std::vector<SimilarPair>> verified =
        VerifyCandidates(local, scheme, options, candidates, report);
    if (verified.ok()) {
      pairs = *std::move(verified);
      // Back to global numbers: the verified pairs keep the candidates' order.
      size_t c = 0;
      for (SimilarPair& pair : pairs) {
        while (local_number(mine[c].a) != pair.a || local_number(mine[c].b) != pair.b) ++c;
        pair.a = mine[c].a;
        pair.b = mine[c].b;
      }
    } else {
      local_status = verified.status();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  return GatherPairs(comm, pairs);
}

Result<std::vector<SimilarPair>> SimHashPairs(Comm& comm, const DocumentLayout& layout,
                                              const std::vector<Fingerprint>& local,
                                              const NearDuplicateScheme& scheme,
                                              const NearDuplicateOptions& options,
                                              NearDuplicateReport* report) {
  // Every rank gets every SimHash (and whether the document has features).
  std::string message;
  ByteWriter writer(&message);
  for (const Fingerprint& fingerprint : local) {
    writer.Put(fingerprint.simhash);
    writer.Put<uint8_t>(fingerprint.num_tokens != 0);
  }
  std::string all;
  NEARDUP_RETURN_IF_ERROR(comm.GatherToRoot(message, [&](std::string_view piece) -> Status {
    all.append(piece);
    return Status::Ok();
  }));
  comm.Broadcast(&all);
  std::vector<Fingerprint> fingerprints(layout.total);
  ByteReader reader(all);
  Status status;
  for (Fingerprint& fingerprint : fingerprints) {
    uint8_t has_features = 0;
    if (status.ok()) status = reader.Get(&fingerprint.simhash);
    if (status.ok()) status = reader.Get(&has_features);
    fingerprint.num_tokens = has_features;
  }
  all = {};
  // This rank's share of the permuted tables.
  const uint64_t ranks = static_cast<uint64_t>(comm.size());
  const uint64_t me = static_cast<uint64_t>(comm.rank());
  const PartRange tables{scheme.num_parts * me / ranks, scheme.num_parts * (me + 1) / ranks};
  std::vector<SimilarPair> pairs;
  if (status.ok() && tables.begin < tables.end) {
    NearDuplicateReport part;
    Result<std::vector<CandidatePair>> candidates =
        FindCandidates(fingerprints, scheme, tables, &part);
    if (candidates.ok()) {
      report->candidates += candidates->size();
      report->index_bytes = part.index_bytes;
      Result<std::vector<SimilarPair>> verified =
          VerifyCandidates(fingerprints, scheme, options, *candidates, report);
      if (verified.ok()) {
        pairs = *std::move(verified);
      } else {
        status = verified.status();
      }
    } else {
      status = candidates.status();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return GatherPairs(comm, pairs);
}

}  // namespace

DocumentLayout DocumentLayout::FromCounts(const std::vector<uint64_t>& counts) {
  DocumentLayout layout;
  layout.count = counts;
  for (uint64_t count : counts) {
    layout.first.push_back(layout.total);
    layout.total += count;
  }
  return layout;
}

int DocumentLayout::OwnerOf(uint64_t doc) const {
  // The last rank whose first document is <= doc and that holds any.
  size_t r = static_cast<size_t>(std::upper_bound(first.begin(), first.end(), doc) - first.begin());
  while (r > 0 && (first[r - 1] > doc || count[r - 1] == 0)) --r;
  return static_cast<int>(r - 1);
}

Result<std::vector<SimilarPair>> FindPairsDistributed(
    Comm& comm, const DocumentLayout& layout, std::vector<Fingerprint> local,
    const NearDuplicateScheme& scheme, const NearDuplicateOptions& options, uint64_t memory_bytes,
    NearDuplicateReport* report, DistributedPairsStats* stats) {
  if (scheme.method == NearDuplicateMethod::kSimHash) {
    return SimHashPairs(comm, layout, local, scheme, options, report);
  }
  return MinHashPairs(comm, layout, std::move(local), scheme, options, memory_bytes, report, stats);
}

}  // namespace neardup::mpi
