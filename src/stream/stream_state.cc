#include "stream/stream_state.h"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "neardup/near_duplicate_stages.h"
#include "neardup/simhash.h"
#include "neardup/similarity.h"
#include "neardup/write_ahead_log.h"
#include "util/status_fallback.h"

namespace neardup::internal {
namespace {

// The corpus size the SimHash tables are chosen for: num_blocks changes the
// speed and memory of the index, never its answers.
constexpr uint64_t kSimHashPlannedDocuments = uint64_t{1} << 20;

// Approximate heap bytes of one node of std::map / std::set (libstdc++:
// three pointers and a colour, plus malloc's header).
constexpr uint64_t kTreeNodeOverhead = 48;

}  // namespace

Result<NearDuplicateScheme> StreamSchemes::Get(const StreamConfig& config, const Recipe& recipe,
                                               const NearDuplicateOptions& options) {
  const Key key{config.preset, static_cast<int>(config.method), config.threshold,
                config.max_distance};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = schemes_.find(key);
    if (found != schemes_.end()) return found->second;
  }
  NEARDUP_ASSIGN_OR_RETURN(NearDuplicateScheme scheme,
                           ChooseNearDuplicateScheme(recipe, options, kSimHashPlannedDocuments));
  std::lock_guard<std::mutex> lock(mutex_);
  ++choices_;
  if (schemes_.size() >= 64) schemes_.clear();
  schemes_.emplace(key, scheme);
  return scheme;
}

size_t StreamSchemes::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return schemes_.size();
}

uint64_t StreamSchemes::choices() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return choices_;
}

StreamSchemes& SchemesOf(StreamSchemeMemo& memo) { return *memo.schemes_; }

Result<StreamState> StreamState::Create(const StreamConfig& config, StreamSchemes* schemes,
                                        const NearDuplicateScheme* scheme_given) {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamConfig(config));
  NEARDUP_ASSIGN_OR_RETURN(Recipe preset, PresetRecipe(config.preset));
  NearDuplicateOptions options;
  options.method = config.method;
  options.threshold = config.threshold;
  options.max_distance = config.max_distance;
  Recipe recipe = RecipeForNearDuplicates(std::move(preset), options);
  NEARDUP_RETURN_IF_ERROR(ValidateRecipe(recipe));
  // The scheme depends only on the preset, the method, the threshold and
  // max_distance (the recipe follows from them). For MinHash choosing it
  // integrates LSH shapes (~2 ms of CPU): a server shares a memo across its
  // opens (StreamSchemeMemo), a reload keeps its stream's.
  NearDuplicateScheme scheme;
  if (schemes != nullptr) {
    NEARDUP_ASSIGN_OR_RETURN(scheme, schemes->Get(config, recipe, options));
  } else if (scheme_given != nullptr) {
    scheme = *scheme_given;
  } else {
    NEARDUP_ASSIGN_OR_RETURN(scheme,
                             ChooseNearDuplicateScheme(recipe, options, kSimHashPlannedDocuments));
  }
  StreamState state(config, std::move(recipe), options);
  state.scheme_ = scheme;
  if (config.method == NearDuplicateMethod::kMinHash) {
    NEARDUP_ASSIGN_OR_RETURN(LshIndex lsh, LshIndex::Create(scheme.lsh.params, scheme.num_hashes));
    state.lsh_.emplace(std::move(lsh));
    // The same bound as the batch verification (near_duplicate_stages.cc):
    // estimates down to 3 standard errors below the threshold get an exact
    // check, so the two agree pair for pair.
    const double threshold = options.threshold;
    const int num_hashes = scheme.num_hashes;
    state.lower_bound_ =
        threshold - 3.0 * std::sqrt(threshold * (1.0 - threshold) / num_hashes) - 1.0 / num_hashes;
  } else {
    NEARDUP_ASSIGN_OR_RETURN(HammingIndex hamming, HammingIndex::Create(scheme.hamming));
    state.hamming_.emplace(std::move(hamming));
  }
  return state;
}

StreamState::StreamState(StreamConfig config, Recipe recipe, NearDuplicateOptions options)
    : config_(std::move(config)), recipe_(std::move(recipe)), options_(options) {}

const StreamDoc* StreamState::Find(std::string_view id) const {
  return FindHashed(id, seq_of_id_.Hash(id));
}

const StreamDoc* StreamState::FindHashed(std::string_view id, uint64_t id_hash) const {
  const uint64_t* seq = seq_of_id_.FindHashed(id, id_hash);
  return seq == nullptr ? nullptr : &docs_.at(*seq);
}

int64_t StreamState::CutoffFor(int64_t time) const {
  if (config_.window_seconds <= 0) return std::numeric_limits<int64_t>::min();
  const int64_t newest = newest_time_ ? std::max(*newest_time_, time) : time;
  // Saturating: a window longer than the time since the minimum keeps all.
  if (newest < std::numeric_limits<int64_t>::min() + config_.window_seconds) {
    return std::numeric_limits<int64_t>::min();
  }
  return newest - config_.window_seconds;
}

StreamDecision StreamState::Decide(const Fingerprint& fp, int64_t time,
                                   std::vector<uint64_t>* band_keys) const {
  StreamDecision decision;
  if (band_keys != nullptr) band_keys->clear();
  if (fp.num_tokens == 0) return decision;  // no features: never matched
  const int64_t cutoff = CutoffFor(time);
  if (lsh_) {
    if (fp.kvalue_minhash.empty) return decision;
    // Query returns the candidates sorted by seq: the first verified one is
    // the earliest, which is the leader rule's choice.
    // The sketches come from the stream's own fingerprinter, whose k is the
    // index's: an error here is a broken invariant, not caller input.
    Result<std::vector<uint64_t>> candidates = std::vector<uint64_t>();
    if (band_keys != nullptr) {
      Status hashed = lsh_->BandKeysOf(fp.kvalue_minhash.values, band_keys);
      NEARDUP_CHECK(hashed.ok()) << hashed;
      candidates = lsh_->QueryBandKeys(*band_keys);
    } else {
      candidates = lsh_->Query(fp.kvalue_minhash.values);
    }
    NEARDUP_CHECK(candidates.ok()) << candidates.status();
    for (uint64_t seq : *candidates) {
      const StreamDoc& leader = docs_.at(seq);
      if (leader.time < cutoff) continue;  // leaves the window with this add
      Result<bool> close =
          JaccardAtLeast(leader.fingerprint.minhash, fp.minhash, lower_bound_, nullptr);
      NEARDUP_CHECK(close.ok()) << close.status();
      if (!*close) continue;
      const double exact = ExactJaccard(leader.fingerprint.chunks, fp.chunks);
      if (exact < options_.threshold) continue;
      decision.status = StreamStatus::kNearDuplicate;
      decision.of = leader.id;
      decision.similarity = exact;
      return decision;
    }
    return decision;
  }
  const StreamDoc* best = nullptr;
  int best_distance = 0;
  for (const HammingMatch& match : hamming_->FindAll(fp.simhash)) {
    if (match.distance > options_.max_distance) continue;
    const StreamDoc& leader = docs_.at(match.id);
    if (leader.time < cutoff) continue;
    if (best == nullptr || leader.seq < best->seq) {
      best = &leader;
      best_distance = match.distance;
    }
  }
  if (best != nullptr) {
    decision.status = StreamStatus::kNearDuplicate;
    decision.of = best->id;
    decision.similarity = 1.0 - static_cast<double>(best_distance) / 64;
  }
  return decision;
}

StreamDoc StreamState::MakeDoc(std::string_view id, int64_t time, const StreamDecision& decision,
                               Fingerprint fingerprint) const {
  StreamDoc doc;
  doc.seq = next_seq_;
  doc.time = time;
  doc.id = std::string(id);
  doc.status = decision.status;
  doc.of = decision.of;
  doc.similarity = decision.similarity;
  doc.kept = decision.status == StreamStatus::kNew;
  if (doc.kept) {
    // Only what matching reads: the sketches of the method.
    Fingerprint& fp = doc.fingerprint;
    fp.num_tokens = fingerprint.num_tokens;
    if (lsh_) {
      fp.minhash = std::move(fingerprint.minhash);
      fp.kvalue_minhash = std::move(fingerprint.kvalue_minhash);
      fp.chunks = std::move(fingerprint.chunks);
      fp.minhash.values.shrink_to_fit();
      fp.kvalue_minhash.values.shrink_to_fit();
      fp.chunks.shrink_to_fit();
    } else {
      fp.simhash = fingerprint.simhash;
    }
  }
  return doc;
}

uint64_t StreamState::DocBytes(const StreamDoc& doc) {
  uint64_t bytes = sizeof(StreamDoc) + kTreeNodeOverhead;             // docs_
  bytes += StreamIdIndex::kBytesPerId;                                // seq_of_id_
  bytes += sizeof(std::pair<int64_t, uint64_t>) + kTreeNodeOverhead;  // by_time_
  if (!doc.kept) bytes += sizeof(ListKey) + kTreeNodeOverhead;        // near_by_time_
  // Strings past the small-string buffer, twice for the id (doc and map key).
  auto heap = [](const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; };
  bytes += 2 * heap(doc.id) + heap(doc.of) + heap(doc.text);
  const Fingerprint& fp = doc.fingerprint;
  bytes += fp.minhash.values.capacity() * sizeof(uint64_t) +
           fp.kvalue_minhash.values.capacity() * sizeof(uint64_t) +
           fp.chunks.capacity() * sizeof(uint32_t);
  return bytes;
}

namespace {

// A node of a map or set of type C holding value(args...), allocated alone:
// C::insert(node) allocates nothing. The empty container allocates nothing
// with libstdc++ and libc++ (its head node is a member), so Store makes no
// more allocations than an emplace; MSVC's allocates a head node each.
template <typename C, typename... Args>
typename C::node_type NodeOf(Args&&... args) {
  C one;
  one.emplace(std::forward<Args>(args)...);
  return one.extract(one.begin());
}

}  // namespace

// The strong guarantee (session 18): everything that allocates (the errors'
// messages, the three map nodes, the id table's growth, the index insert)
// comes before the first change or undoes it, so an error or a bad_alloc
// leaves the state as it was. What follows the index insert allocates
// nothing: the nodes were made before it.
Status StreamState::Store(StreamDoc doc, uint64_t id_hash, std::span<const uint64_t> band_keys) {
  const bool index_it = doc.kept && doc.fingerprint.num_tokens != 0;
  const bool minhash = index_it && lsh_ && !doc.fingerprint.kvalue_minhash.empty;
  if (minhash &&
      (doc.fingerprint.kvalue_minhash.values.size() != static_cast<size_t>(lsh_->num_hashes()) ||
       doc.fingerprint.minhash.values.empty())) {
    return DataLossError("stream record of id \"" + doc.id + "\" has sketches of the wrong size");
  }
  const uint64_t seq = doc.seq;
  std::set<ListKey>::node_type time_node = NodeOf<std::set<ListKey>>(doc.time, seq);
  std::set<ListKey>::node_type near_node;
  if (!doc.kept) near_node = NodeOf<std::set<ListKey>>(doc.time, seq);
  std::map<uint64_t, StreamDoc>::node_type doc_node =
      NodeOf<std::map<uint64_t, StreamDoc>>(seq, std::move(doc));
  const StreamDoc& stored = doc_node.mapped();
  // One id-table operation, not a lookup and then an insert (the id table
  // was ~5% of a batch's CPU); undone below if the index refuses the
  // document.
  if (!seq_of_id_.InsertHashed(stored.id, id_hash, seq)) {
    return DataLossError("stream record adds id \"" + stored.id + "\" twice");
  }
  if (index_it) {
    // Returns errors (ResourceExhausted) with the index unchanged.
    Status indexed;
    if (minhash) {
      // Decide's keys when given (hashed once per added document).
      indexed = band_keys.empty() ? lsh_->Insert(seq, stored.fingerprint.kvalue_minhash.values)
                                  : lsh_->InsertBandKeys(seq, band_keys);
    } else if (hamming_) {
      indexed = hamming_->Insert({stored.fingerprint.simhash, seq}).status();
    }
    if (!indexed.ok()) {
      seq_of_id_.Erase(stored.id);
      return indexed;
    }
  }
  kept_ += stored.kept;
  doc_bytes_ += DocBytes(stored);
  record_bytes_ += kLogRecordHeaderBytes + EncodedAddBytes(stored);
  by_time_.insert(std::move(time_node));
  if (near_node) near_by_time_.insert(std::move(near_node));
  docs_.insert(std::move(doc_node));
  return Status::Ok();
}

void StreamState::Erase(std::map<uint64_t, StreamDoc>::iterator it) {
  const StreamDoc& doc = it->second;
  if (doc.kept && doc.fingerprint.num_tokens != 0) {
    if (lsh_) {
      lsh_->Remove(doc.seq);
    } else {
      hamming_->Remove({doc.fingerprint.simhash, doc.seq});
    }
  }
  kept_ -= doc.kept;
  doc_bytes_ -= DocBytes(doc);
  record_bytes_ -= kLogRecordHeaderBytes + EncodedAddBytes(doc);
  seq_of_id_.Erase(doc.id);
  by_time_.erase({doc.time, doc.seq});
  if (!doc.kept) near_by_time_.erase({doc.time, doc.seq});
  if (snapshot_ && doc.seq >= snapshot_->next_seq && doc.seq < snapshot_->end_seq) {
    // The node moves: no copy of the sketches.
    snapshot_pending_.insert(docs_.extract(it));
  } else {
    docs_.erase(it);
  }
}

void StreamState::BeginSnapshot() {
  snapshot_pending_.clear();
  snapshot_.emplace(SnapshotRange{0, next_seq_});
}

bool StreamState::AppendSnapshotRecords(size_t min_bytes, std::string* out) {
  NEARDUP_CHECK(snapshot_.has_value());
  SnapshotRange& range = *snapshot_;
  const size_t start = out->size();
  auto live = docs_.lower_bound(range.next_seq);
  while (out->size() - start < min_bytes) {
    // The smaller seq of the next stored and the next erased document.
    const bool live_left = live != docs_.end() && live->first < range.end_seq;
    auto pending = snapshot_pending_.begin();
    const bool pending_left = pending != snapshot_pending_.end();
    if (!live_left && !pending_left) break;
    if (pending_left && (!live_left || pending->first < live->first)) {
      AppendFramedAdd(pending->second, out);
      range.next_seq = pending->first + 1;
      snapshot_pending_.erase(pending);
    } else {
      AppendFramedAdd(live->second, out);
      range.next_seq = live->first + 1;
      ++live;
    }
  }
  return (live == docs_.end() || live->first >= range.end_seq) && snapshot_pending_.empty();
}

void StreamState::EndSnapshot() {
  snapshot_.reset();
  snapshot_pending_.clear();
}

void StreamState::EvictOlderThan(int64_t cutoff) {
  while (!by_time_.empty() && by_time_.begin()->first < cutoff) {
    Erase(docs_.find(by_time_.begin()->second));
    ++evicted_;
  }
}

Status StreamState::ApplyAdd(StreamDoc doc) {
  const uint64_t id_hash = seq_of_id_.Hash(doc.id);
  return ApplyAddHashed(std::move(doc), id_hash);
}

Status StreamState::ApplyAddHashed(StreamDoc doc, uint64_t id_hash,
                                   std::span<const uint64_t> band_keys) {
  if (doc.seq != next_seq_) {
    return DataLossError("stream record has document number " + std::to_string(doc.seq) +
                         "; the next is " + std::to_string(next_seq_));
  }
  const int64_t cutoff = CutoffFor(doc.time);
  const int64_t time = doc.time;
  try {
    NEARDUP_RETURN_IF_ERROR(Store(std::move(doc), id_hash, band_keys));
  } catch (const std::bad_alloc&) {
    // Store changed nothing (its strong guarantee).
    return internal::OutOfMemoryStatus();
  }
  // Nothing below allocates: eviction's index removes cannot fail
  // (HammingIndex::Remove on runs Insert built, LshIndex::Remove).
  ++next_seq_;
  ++added_;
  newest_time_ = newest_time_ ? std::max(*newest_time_, time) : time;
  EvictOlderThan(cutoff);
  if (config_.max_documents != 0) {
    while (docs_.size() > config_.max_documents) {
      Erase(docs_.find(by_time_.begin()->second));
      ++evicted_;
    }
  }
  return Status::Ok();
}

Status StreamState::ApplyRemove(std::string_view id) {
  const uint64_t* seq = seq_of_id_.Find(id);
  if (seq == nullptr) return NotFoundError("no document \"" + std::string(id) + "\"");
  Erase(docs_.find(*seq));
  ++removed_;
  return Status::Ok();
}

StreamHeader StreamState::Header() const {
  StreamHeader header;
  header.config = config_;
  header.next_seq = next_seq_;
  header.newest_time = newest_time_;
  header.added = added_;
  header.evicted = evicted_;
  header.removed = removed_;
  return header;
}

void StreamState::RestoreHeader(const StreamHeader& header) {
  next_seq_ = header.next_seq;
  newest_time_ = header.newest_time;
  added_ = header.added;
  evicted_ = header.evicted;
  removed_ = header.removed;
}

Status StreamState::LoadDoc(StreamDoc doc) {
  if (doc.seq >= next_seq_) {
    return DataLossError("snapshot document number " + std::to_string(doc.seq) +
                         " is not below the next, " + std::to_string(next_seq_));
  }
  const uint64_t id_hash = seq_of_id_.Hash(doc.id);
  return Store(std::move(doc), id_hash, {});
}

void StreamState::FillStats(StreamStats* stats) const {
  stats->documents = docs_.size();
  stats->kept = kept_;
  stats->added = added_;
  stats->evicted = evicted_;
  stats->removed = removed_;
  if (!by_time_.empty()) stats->oldest_time = by_time_.begin()->first;
  stats->newest_time = newest_time_;
  stats->memory_bytes = doc_bytes_ + (lsh_ ? lsh_->MemoryBytes() : hamming_->MemoryBytes());
}

std::optional<StreamState::ListKey> StreamState::ListNearDuplicates(
    const StreamListOptions& options, const std::optional<ListKey>& after,
    const std::function<bool(const StreamDoc&)>& accept, std::vector<const StreamDoc*>* out,
    uint64_t* scanned) const {
  constexpr uint64_t kLastSeq = std::numeric_limits<uint64_t>::max();
  const ListKey low{options.from_time.value_or(std::numeric_limits<int64_t>::min()), 0};
  const ListKey high{options.to_time.value_or(std::numeric_limits<int64_t>::max()), kLastSeq};
  if (low > high) return std::nullopt;
  size_t found = 0;
  // Visits `key`; true to go on.
  auto visit = [&](const ListKey& key) {
    ++*scanned;
    const StreamDoc& doc = docs_.at(key.second);
    if (accept(doc)) {
      out->push_back(&doc);
      ++found;
    }
    return found < options.limit && *scanned < options.max_scanned;
  };
  if (options.oldest_first) {
    // From the first key past `after` (or from `low`) up to `high`.
    auto it =
        after && *after >= low ? near_by_time_.upper_bound(*after) : near_by_time_.lower_bound(low);
    for (; it != near_by_time_.end() && *it <= high; ++it) {
      if (!visit(*it)) {
        auto next = std::next(it);
        if (next == near_by_time_.end() || *next > high) return std::nullopt;
        return *it;
      }
    }
    return std::nullopt;
  }
  // Newest first: from the last key before `after` (or at most `high`) down
  // to `low`.
  auto it =
      after && *after <= high ? near_by_time_.lower_bound(*after) : near_by_time_.upper_bound(high);
  while (it != near_by_time_.begin()) {
    --it;
    if (*it < low) return std::nullopt;
    if (!visit(*it)) {
      if (it == near_by_time_.begin() || *std::prev(it) < low) return std::nullopt;
      return *it;
    }
  }
  return std::nullopt;
}

}  // namespace neardup::internal

namespace neardup {
StreamSchemeMemo::StreamSchemeMemo() : schemes_(std::make_unique<internal::StreamSchemes>()) {}
StreamSchemeMemo::~StreamSchemeMemo() = default;
size_t StreamSchemeMemo::size() const { return schemes_->size(); }
}  // namespace neardup
