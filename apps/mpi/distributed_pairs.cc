#include "distributed_pairs.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "band_groups.h"
#include "document_set.h"
#include "grouped_pairs.h"
#include "neardup/hamming_shards.h"
#include "sketch_handover.h"
#include "verification_split.h"

namespace neardup::mpi {
namespace {

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

constexpr size_t kPairRecordBytes = 8 + 8 + 8 + 4;

// A pair's record written at `out` (kPairRecordBytes): a, b, similarity,
// distance (int32), native byte order; GetPairs reads it.
void StorePair(const SimilarPair& pair, char* out) {
  const int32_t distance = pair.distance;
  std::memcpy(out, &pair.a, 8);
  std::memcpy(out + 8, &pair.b, 8);
  std::memcpy(out + 16, &pair.similarity, 8);
  std::memcpy(out + 24, &distance, 4);
}

// Appends the whole records of `bytes` to *pairs; returns the bytes used.
size_t GetPairs(std::string_view bytes, std::vector<SimilarPair>* pairs) {
  const size_t records = bytes.size() / kPairRecordBytes;
  const size_t at = pairs->size();
  pairs->resize(at + records);
  for (size_t i = 0; i < records; ++i) {
    const char* in = bytes.data() + i * kPairRecordBytes;
    SimilarPair& pair = (*pairs)[at + i];
    int32_t distance = 0;
    std::memcpy(&pair.a, in, 8);
    std::memcpy(&pair.b, in + 8, 8);
    std::memcpy(&pair.similarity, in + 16, 8);
    std::memcpy(&distance, in + 24, 4);
    pair.distance = distance;
  }
  return records * kPairRecordBytes;
}

// Sorts *pairs by (a, b), given that it is a concatenation of sorted runs
// (one per rank): merges the runs rather than sorting them all.
void MergeSortedRuns(std::vector<SimilarPair>* pairs) {
  std::vector<SimilarPair>& all = *pairs;
  const auto before = [](const SimilarPair& x, const SimilarPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  };
  std::vector<size_t> runs{0};
  for (size_t i = 1; i < all.size(); ++i) {
    if (before(all[i], all[i - 1])) runs.push_back(i);
  }
  runs.push_back(all.size());
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 2 < runs.size(); r += 2) {
      std::inplace_merge(all.begin() + static_cast<ptrdiff_t>(runs[r]),
                         all.begin() + static_cast<ptrdiff_t>(runs[r + 1]),
                         all.begin() + static_cast<ptrdiff_t>(runs[r + 2]), before);
      merged.push_back(runs[r + 2]);
    }
    if (runs.size() % 2 == 0) merged.push_back(runs.back());
    runs = std::move(merged);
  }
}

// The pairs (sorted) that join two components not yet joined by an earlier
// pair, in order: a spanning forest of the pairs' graph, the same connected
// components, at most one pair per document. Union-find with path halving
// and union by size over the documents of the pairs: indexed by document
// number when the corpus (`total`) has at most twice as many documents as
// there are pair ends (parent and size, 12 B a corpus document: at that
// bound 48 B a pair, 1.5x the 32 B pairs themselves; it saves sorting the
// ends: 23M pairs of the 1M corpus, ~5 CPU s a rank before), else over the
// pairs' documents compressed to 0..m-1 (sorted ends, 16 B a pair, then
// 12 B a distinct document; binary search). Which
// root wins a union does not change which pairs are kept, so both give the
// same forest.
std::vector<SimilarPair> SpanningForest(const std::vector<SimilarPair>& pairs, uint64_t total) {
  bool dense = total / 4 <= pairs.size();
  for (size_t i = 0; dense && i < pairs.size(); ++i)
    dense = pairs[i].b < total && pairs[i].a < total;
  std::vector<uint64_t> docs;
  if (!dense) {
    docs.reserve(2 * pairs.size());
    for (const SimilarPair& pair : pairs) {
      docs.push_back(pair.a);
      docs.push_back(pair.b);
    }
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  }
  auto index = [&](uint64_t doc) {
    if (dense) return static_cast<size_t>(doc);
    return static_cast<size_t>(std::lower_bound(docs.begin(), docs.end(), doc) - docs.begin());
  };
  std::vector<size_t> parent(dense ? static_cast<size_t>(total) : docs.size());
  std::vector<uint32_t> size(parent.size(), 1);
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<SimilarPair> forest;
  for (const SimilarPair& pair : pairs) {
    size_t x = find(index(pair.a));
    size_t y = find(index(pair.b));
    if (x == y) continue;
    if (size[x] < size[y]) std::swap(x, y);
    parent[y] = x;
    size[x] += size[y];
    forest.push_back(pair);
  }
  return forest;
}

// Each rank's verified pairs (sorted) to where `placement` puts them,
// sorted there. *verified: this rank's verified pairs, before a forest
// was taken. Collective (but for kVerifiers and kForests, which move
// nothing).
Result<std::vector<SimilarPair>> PlacePairs(Comm& comm, const DocumentLayout& layout,
                                            std::vector<SimilarPair> pairs, PairPlacement placement,
                                            uint64_t* verified) {
  *verified = pairs.size();
  if (placement == PairPlacement::kVerifiers) return pairs;
  // kForests: each rank's forest stays where it is.
  if (placement == PairPlacement::kForests) return SpanningForest(pairs, layout.total);
  // One rank: its list, sorted, is the result (no encoding round trip).
  if (comm.size() == 1) return pairs;
  // kOwners.
  std::vector<SimilarPair> placed;
  const size_t me = static_cast<size_t>(comm.rank());
  // Each message sized first and filled in place (a record appended
  // field by field, growing its string, took as long as verifying).
  const auto owner_of = [&](const SimilarPair& pair) {
    return static_cast<size_t>(layout.OwnerOf(pair.a));
  };
  std::vector<uint64_t> records(static_cast<size_t>(comm.size()), 0);
  for (const SimilarPair& pair : pairs) ++records[owner_of(pair)];
  std::vector<std::string> send(records.size());
  std::vector<char*> next(records.size(), nullptr);
  for (size_t r = 0; r < records.size(); ++r) {
    if (r == me) continue;
    send[r].resize(records[r] * kPairRecordBytes);
    next[r] = send[r].data();
  }
  // The pairs that stay here are kept as they are (a sorted run), not
  // encoded and decoded.
  size_t kept = 0;
  for (const SimilarPair& pair : pairs) {
    const size_t owner = owner_of(pair);
    if (owner == me) {
      pairs[kept++] = pair;
    } else {
      StorePair(pair, next[owner]);
      next[owner] += kPairRecordBytes;
    }
  }
  pairs.resize(kept);
  placed = std::move(pairs);
  pairs = {};
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(send), &received));
  Status status;
  size_t incoming = placed.size();
  for (const Message& message : received) incoming += message.size() / kPairRecordBytes;
  placed.reserve(incoming);
  for (Message& message : received) {
    if (GetPairs(message, &placed) != message.size() && status.ok()) {
      status = DataLossError("a message of pairs is not whole records");
    }
    message = {};
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  MergeSortedRuns(&placed);
  return placed;
}

Result<std::vector<SimilarPair>> MinHashPairs(
    Comm& comm, const DocumentLayout& layout, std::vector<Fingerprint> local,
    const NearDuplicateScheme& scheme, const NearDuplicateOptions& options, uint64_t memory_bytes,
    PairPlacement placement, const DeferredSketches& deferred_sketches, NearDuplicateReport* report,
    DistributedPairsStats* stats, std::vector<Fingerprint>* verification_set) {
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
  StageTimer timer;
  for (uint64_t begin = 0; begin < scheme.num_parts; begin += bands_per_round) {
    const PartRange bands{begin, std::min(scheme.num_parts, begin + bands_per_round)};
    // The round's records, key lists and received candidates, one after
    // another; a block per round, so that none is held through the next
    // round's key exchange (per_band above counts one round's lists only).
    StageBlock scratch;
    status = comm.AgreeOnStatus(ShuffleBandRound(comm, layout, local, first_document, scheme, bands,
                                                 &scratch, &mine, stats));
    NEARDUP_RETURN_IF_ERROR(status);
    ++stats->band_rounds;
  }
  report->candidates += mine.size();
  stats->stages.push_back({"band keys", timer.Lap(), comm.in_mpi()});

  // The documents of the candidates this rank does not hold, from their
  // owners.
  const uint64_t end_of_mine = first_document + local.size();
  auto is_mine = [&](uint64_t doc) { return doc >= first_document && doc < end_of_mine; };
  // A bit per document of the corpus (DocumentSet: the list of one entry
  // per candidate, radix-sorted, was 96 MB on rank 0 of two on the 1M
  // corpus), then the list of them, ascending.
  DocumentSet fetched(layout.total);
  for (const CandidatePair& pair : mine) {
    if (!is_mine(pair.a)) fetched.Add(pair.a);
    if (!is_mine(pair.b)) fetched.Add(pair.b);
  }
  const std::vector<uint64_t> remote = fetched.Finish();
  std::vector<std::string> requests(static_cast<size_t>(ranks));
  for (uint64_t doc : remote) ByteWriter(&requests[layout.OwnerOf(doc)]).Put(doc);
  std::vector<Message> asked;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(requests), &asked));
  // The documents each rank asked for, in its order.
  std::vector<std::vector<uint64_t>> asked_docs(asked.size());
  Status local_status;
  for (size_t r = 0; r < asked.size() && local_status.ok(); ++r) {
    ByteReader reader(asked[r]);
    while (!reader.done() && local_status.ok()) {
      uint64_t doc = 0;
      local_status = reader.Get(&doc);
      if (local_status.ok() && (doc < first_document || doc >= end_of_mine)) {
        local_status = InternalError("asked for document " + std::to_string(doc) +
                                     ", which is not on this rank");
      }
      if (local_status.ok()) asked_docs[r].push_back(doc);
    }
    asked[r] = {};
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  // The deferred verification sketches of the documents read here or
  // asked for, computed once, before any is sent or read; some of them
  // handed, as records, to another rank to sketch.
  SketchWork work;
  NEARDUP_RETURN_IF_ERROR(HandOverSketching(comm, layout, deferred_sketches, mine, asked_docs,
                                            fetched, local, &work, stats));
  stats->sketched_documents += work.deferred.size();
  if (!work.deferred.empty()) {
    local_status = deferred_sketches.again
                       ? deferred_sketches.again(work.deferred, &local)
                       : InternalError("documents without verification sketches");
  }
  // Each reply: the sketches asked for, in the order asked (less those
  // whose records were handed to the asker), then those of the records the
  // asker handed here and needs back, in document order.
  std::vector<std::string> replies(static_cast<size_t>(ranks));
  for (size_t r = 0; r < asked_docs.size() && local_status.ok(); ++r) {
    ByteWriter writer(&replies[r]);
    for (uint64_t doc : asked_docs[r]) {
      if (work.handed_out[doc - first_document] != 0) continue;
      PutSketch(local[doc - first_document], options.verify_exact, &writer);
    }
    for (size_t i = 0; i < work.in_docs.size(); ++i) {
      if (work.in_from[i] == r && work.in_back[i] != 0) {
        PutSketch(work.in_sketches[i], options.verify_exact, &writer);
      }
    }
    stats->sketch_bytes += replies[r].size();
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  std::vector<Message> sketches;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(replies), &sketches));
  replies.clear();

  // The verification set in document order, so that local numbers keep
  // the global order (a < b holds): the fetched documents before this
  // rank's, this rank's, the fetched ones after. The replies come in rank
  // order, each in the order asked: document order.
  const size_t num_mine = local.size();
  const size_t num_before = static_cast<size_t>(
      std::lower_bound(remote.begin(), remote.end(), first_document) - remote.begin());
  const LocalNumbering numbering{.remote = remote,
                                 .fetched = fetched,
                                 .num_before = num_before,
                                 .num_mine = num_mine,
                                 .first_document = first_document,
                                 .total = layout.total};
  std::vector<Fingerprint> verifying(num_mine + remote.size());
  std::move(local.begin(), local.end(), verifying.begin() + static_cast<ptrdiff_t>(num_before));
  local = {};
  // Rank r's reply: the sketches of the documents fetched from it, in
  // order, but for those whose records it handed here (sketched here,
  // work.in_*, in document order); then, if this rank handed records to r,
  // the sketches of those it needs back (work.coming_back), for its own
  // documents.
  size_t next = 0;
  size_t next_in = 0;
  for (size_t r = 0; r < sketches.size() && local_status.ok(); ++r) {
    ByteReader reader(sketches[r]);
    const uint64_t end_of_r = layout.first[r] + layout.count[r];
    for (; next < remote.size() && remote[next] < end_of_r && local_status.ok(); ++next) {
      Fingerprint& to = verifying[numbering.OfRemote(next)];
      while (next_in < work.in_docs.size() && work.in_docs[next_in] < remote[next]) ++next_in;
      if (next_in < work.in_docs.size() && work.in_docs[next_in] == remote[next]) {
        // Moved: the replies, which may hold a copy, are sent already.
        Fingerprint& from = work.in_sketches[next_in];
        to.num_tokens = from.num_tokens;
        to.minhash = std::move(from.minhash);
        if (options.verify_exact) to.chunks = std::move(from.chunks);
      } else {
        local_status = GetSketch(&reader, options.verify_exact, &to);
      }
    }
    if (r == work.receiver) {
      for (size_t i = 0; i < work.coming_back.size() && local_status.ok(); ++i) {
        local_status = GetSketch(&reader, options.verify_exact,
                                 &verifying[numbering.num_before + work.coming_back[i]]);
      }
    }
    if (local_status.ok() && !reader.done()) {
      local_status = InternalError("rank " + std::to_string(r) + " sent more sketches than asked");
    }
  }
  work = {};
  if (local_status.ok() && next != remote.size()) {
    local_status = InternalError("fetched " + std::to_string(next) + " sketches of " +
                                 std::to_string(remote.size()));
  }
  sketches.clear();
  stats->stages.push_back({"sketches", timer.Lap(), comm.in_mpi()});
  // Renumbered in place (a second list was hundreds of MB of fresh pages).
  // The candidates are sorted by (a, b): a's local number is looked up once
  // per run of equal a. A fetched document's local number is its rank in
  // `fetched` (O(1): it was a galloping search in `remote` from the last one
  // found, tens of steps for each of rank 0's second documents, spread over
  // the later rank). The cost of each check (VerificationCost) is summed on
  // the way.
  std::vector<CandidatePair>& candidates = mine;
  uint64_t cost = 0;
  const std::vector<uint32_t> sizes = ChunkSizes(verifying);
  if (local_status.ok()) {
    uint64_t last_a = 0;
    uint64_t local_a = 0;
    size_t renumbered = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i == 0 || candidates[i].a != last_a) {
        last_a = candidates[i].a;
        if (!numbering.Local(last_a, &local_a)) break;
      }
      uint64_t local_b = 0;
      if (!numbering.Local(candidates[i].b, &local_b)) break;
      candidates[i] = {local_a, local_b};
      cost += VerificationCost(sizes, candidates[i]);
      ++renumbered;
    }
    if (renumbered != candidates.size()) {
      local_status = InternalError("candidate " + std::to_string(renumbered) + " of " +
                                   std::to_string(candidates.size()) +
                                   " names a document this rank neither owns nor fetched");
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  // Verification split by cost, not count: see BalanceVerification.
  std::vector<CandidatePair> moved_in;
  NEARDUP_RETURN_IF_ERROR(BalanceVerification(comm, layout, cost, asked_docs, sizes, numbering,
                                              &candidates, &moved_in, &stats->moved_candidates));
  asked_docs.clear();
  report->candidates = report->candidates + moved_in.size() - stats->moved_candidates;
  if (!moved_in.empty()) {
    // Both sorted: merged from the back, in place (a receiver gave none
    // away, and a fresh list would be hundreds of MB of fresh pages). In
    // place only where the list's capacity (the last band round's spare
    // quarter, ShuffleBandRound) holds the pairs received; else the resize
    // copies it into a fresh block once.
    size_t i = candidates.size();
    size_t j = moved_in.size();
    candidates.resize(i + j);
    for (size_t k = candidates.size(); j > 0;) {
      if (i > 0 && moved_in[j - 1] < candidates[i - 1]) {
        candidates[--k] = candidates[--i];
      } else {
        candidates[--k] = moved_in[--j];
      }
    }
    moved_in = {};
  }
  std::vector<SimilarPair> pairs;
  if (local_status.ok()) {
    Result<std::vector<SimilarPair>> verified =
        VerifyCandidates(verifying, scheme, options, candidates, report);
    mine = {};
    if (verified.ok()) {
      pairs = *std::move(verified);
      for (SimilarPair& pair : pairs) {
        pair.a = numbering.Global(pair.a);
        pair.b = numbering.Global(pair.b);
      }
    } else {
      local_status = verified.status();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(local_status));
  stats->stages.push_back({"verify", timer.Lap(), comm.in_mpi()});
  const uint64_t sent_before_placing = comm.bytes_sent();
  Result<std::vector<SimilarPair>> gathered =
      PlacePairs(comm, layout, std::move(pairs), placement, &stats->verified_pairs);
  stats->pair_bytes = comm.bytes_sent() - sent_before_placing;
  stats->stages.push_back({"gather pairs", timer.Lap(), comm.in_mpi()});
  // The caller decides when the verification set goes (freeing it is a
  // free() per document's vectors).
  *verification_set = std::move(verifying);
  return gathered;
}

Result<std::vector<SimilarPair>> SimHashPairs(Comm& comm, const DocumentLayout& layout,
                                              const std::vector<Fingerprint>& local,
                                              const NearDuplicateScheme& scheme,
                                              PairPlacement placement, NearDuplicateReport* report,
                                              DistributedPairsStats* stats) {
  StageTimer timer;
  const uint64_t ranks = static_cast<uint64_t>(comm.size());
  const uint64_t me = static_cast<uint64_t>(comm.rank());
  // Rank r holds shard r of every permuted table (the tables' values whose
  // key prefix falls in its range; HammingShards): a document's SimHash and
  // number (16 bytes) go once to each rank owning one of its table keys.
  // Documents without features are in no pair and go nowhere.
  Result<HammingShards> shards = HammingShards::Create(scheme.hamming, ranks);
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(shards.status()));
  const uint64_t first_document = layout.first[me];
  std::vector<std::string> outgoing(ranks);
  {
    std::vector<ByteWriter> writers;
    writers.reserve(ranks);
    for (std::string& message : outgoing) writers.emplace_back(&message);
    std::vector<uint64_t> owners;
    for (size_t i = 0; i < local.size(); ++i) {
      if (local[i].num_tokens == 0) continue;
      shards->ShardsOf(local[i].simhash, &owners);
      for (uint64_t owner : owners) {
        writers[owner].Put(local[i].simhash);
        writers[owner].Put(uint64_t{first_document + i});
      }
    }
  }
  for (uint64_t r = 0; r < ranks; ++r) {
    if (r != me) stats->key_bytes += outgoing[r].size();
  }
  std::vector<Message> received;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(outgoing), &received));
  std::vector<HammingEntry> entries;
  Status status;
  {
    size_t total = 0;
    for (const Message& message : received) total += message.size();
    entries.reserve(total / 16);
    for (Message& message : received) {
      ByteReader reader(message);
      while (status.ok() && !reader.done()) {
        HammingEntry entry;
        status = reader.Get(&entry.fingerprint);
        if (status.ok()) status = reader.Get(&entry.id);
        if (status.ok()) entries.push_back(entry);
      }
      message = {};
    }
  }
  stats->stages.push_back({"simhash exchange", timer.Lap(), comm.in_mpi()});
  // Clusters (kForests, kVerifiers) need not every pair of a group of copies:
  // each rank joins the first copy of each SimHash and lists the groups'
  // pairs instead (grouped_pairs.h, with the argument).
  const bool grouped = placement != PairPlacement::kOwners;
  CopyGroups groups;  // grouped: every entry, by SimHash
  if (grouped && status.ok()) groups = GroupCopies(std::move(entries));
  // This rank's pairs: those whose canonical table holds them in its shard
  // (each pair on exactly one rank). The join reports only pairs within the
  // distance: they are verified.
  std::vector<SimilarPair> pairs;
  // Grouped: the pairs of the full graph these stand for (this rank's
  // share of report->pairs, as without groups).
  uint64_t expanded = 0;
  if (status.ok()) {
    HammingShardJoinStats join;
    Result<std::vector<HammingPair>> joined =
        shards->SelfJoin(grouped ? groups.first : entries, me, &join);
    if (joined.ok()) {
      entries = {};
      report->index_bytes = join.bytes;
      if (grouped) {
        GroupedPairs listed = ListGroupedSimHashPairs(groups, *joined, [&](uint64_t fingerprint) {
          // ShardOf cannot fail here: table 0 always exists.
          return *shards->ShardOf(0, fingerprint) == me;
        });
        groups = {};
        pairs = std::move(listed.pairs);
        expanded = listed.expanded;
      } else {
        pairs.reserve(joined->size());
        for (const HammingPair& pair : *joined) {
          pairs.push_back(SimilarPair{
              pair.a.id, pair.b.id, 1.0 - static_cast<double>(pair.distance) / 64, pair.distance});
        }
      }
      report->candidates += grouped ? expanded : joined->size();
    } else {
      status = joined.status();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  stats->stages.push_back({"simhash join", timer.Lap(), comm.in_mpi()});
  // A pair lies on the rank of its shard, which may own neither of its
  // documents: the leader rule's pairs go to their first documents' owners
  // (sorted there, 28 bytes a pair), not left where they were found.
  if (placement == PairPlacement::kVerifiers) placement = PairPlacement::kOwners;
  const uint64_t sent_before_placing = comm.bytes_sent();
  Result<std::vector<SimilarPair>> placed =
      PlacePairs(comm, layout, std::move(pairs), placement, &stats->verified_pairs);
  if (grouped) stats->verified_pairs = expanded;
  stats->pair_bytes = comm.bytes_sent() - sent_before_placing;
  stats->stages.push_back({"gather pairs", timer.Lap(), comm.in_mpi()});
  return placed;
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
    PairPlacement placement, const DeferredSketches& deferred, NearDuplicateReport* report,
    DistributedPairsStats* stats, std::vector<Fingerprint>* verification_set) {
  verification_set->clear();
  if (scheme.method == NearDuplicateMethod::kSimHash) {
    return SimHashPairs(comm, layout, local, scheme, placement, report, stats);
  }
  return MinHashPairs(comm, layout, std::move(local), scheme, options, memory_bytes, placement,
                      deferred, report, stats, verification_set);
}

}  // namespace neardup::mpi
