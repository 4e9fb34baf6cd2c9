// StreamState: the in-memory part of a NearDuplicateStream (neardup/stream.h):
// the documents in the window, the index of the kept ones, the leader-rule
// decision and the window's evictions. Durability lives in stream.cc.
// Every mutation is deterministic given the records applied, so replaying a
// log rebuilds the same state.
// Thread safety: none; the stream serialises access.
#ifndef NEARDUP_STREAM_STREAM_STATE_H_
#define NEARDUP_STREAM_STREAM_STATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "neardup/hamming_index.h"
#include "neardup/lsh_index.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/recipe.h"
#include "neardup/stream.h"
#include "stream/stream_id_index.h"
#include "stream/stream_record.h"

namespace neardup::internal {

struct StreamDecision {
  StreamStatus status = StreamStatus::kNew;
  std::string of;
  double similarity = 0;
};

// The memo behind StreamSchemeMemo: ChooseNearDuplicateScheme per config.
// Get chooses outside the lock, so two concurrent first Gets of one config
// both choose (the first kept); the server opens streams one at a time.
class StreamSchemes {
 public:
  // The scheme of `config` (whose recipe and options follow from it).
  Result<NearDuplicateScheme> Get(const StreamConfig& config, const Recipe& recipe,
                                  const NearDuplicateOptions& options);
  size_t size() const;
  // How many times Get chose a scheme (ChooseNearDuplicateScheme succeeded),
  // for the tests.
  uint64_t choices() const;

 private:
  using Key = std::tuple<std::string, int, double, int>;
  mutable std::mutex mutex_;
  std::map<Key, NearDuplicateScheme> schemes_;
  uint64_t choices_ = 0;
};

// Declared in neardup/stream.h (StreamSchemeMemo's friend).
StreamSchemes& SchemesOf(StreamSchemeMemo& memo);

class StreamState {
 public:
  // InvalidArgument for a bad config. The index scheme comes from `schemes`
  // when given, else `scheme` when given (a reload keeps its stream's),
  // else it is chosen.
  static Result<StreamState> Create(const StreamConfig& config, StreamSchemes* schemes = nullptr,
                                    const NearDuplicateScheme* scheme = nullptr);
  // The index scheme the state was created with.
  const NearDuplicateScheme& scheme() const { return scheme_; }

  const StreamConfig& config() const { return config_; }
  const Recipe& recipe() const { return recipe_; }
  const NearDuplicateOptions& options() const { return options_; }

  // The stored document `id`, or null.
  const StreamDoc* Find(std::string_view id) const;
  // The hash of `id` in the id index, for the *Hashed calls: a new
  // document's id is hashed once for its lookup and its insert. The same
  // for every StreamState of the process (ProcessSipKey), so it stays valid
  // across a reload.
  uint64_t IdHash(std::string_view id) const { return seq_of_id_.Hash(id); }
  // REQUIRES: id_hash == IdHash(id).
  const StreamDoc* FindHashed(std::string_view id, uint64_t id_hash) const;

  // The leader-rule decision for a document of `fingerprint` at `time`
  // against the kept documents that are in the window once `time` is seen:
  // the smallest-numbered kept document it is verified similar to. With
  // band_keys (MinHash), the sketch's LSH keys are left there (empty when it
  // has none), for ApplyAddHashed to index the document without hashing
  // them again.
  StreamDecision Decide(const Fingerprint& fingerprint, int64_t time,
                        std::vector<uint64_t>* band_keys = nullptr) const;

  // Makes the StreamDoc that Add stores: the next seq, and the sketches only
  // when kept.
  StreamDoc MakeDoc(std::string_view id, int64_t time, const StreamDecision& decision,
                    Fingerprint fingerprint) const;

  // Applies an add (from Add or from a log): evicts by time, stores `doc`
  // (indexing it when kept), then evicts past max_documents.
  // DataLoss when doc.seq is not the next one or its id is present (a log that
  // does not follow its snapshot); ResourceExhausted when memory runs out.
  // On any error the state is unchanged (session 18: it does not throw).
  Status ApplyAdd(StreamDoc doc);
  // REQUIRES: id_hash == IdHash(doc.id); band_keys empty or Decide's keys
  // of doc's fingerprint.
  Status ApplyAddHashed(StreamDoc doc, uint64_t id_hash, std::span<const uint64_t> band_keys = {});
  // Removes `id`; NotFound when absent.
  Status ApplyRemove(std::string_view id);

  // A snapshot's header and its documents in seq order, and loading them back
  // (no eviction, no counting).
  StreamHeader Header() const;
  void RestoreHeader(const StreamHeader& header);
  Status LoadDoc(StreamDoc doc);

  // A snapshot written a piece at a time while adds go on (stream.cc): it
  // holds the documents stored when BeginSnapshot was called (its header is
  // Header() at that moment), in seq order. A document of it that is erased
  // (window, cap, remove) before the snapshot reached it is kept aside until
  // then, so the pieces add up to exactly the state of that moment, while
  // the index, the counters and every answer move on. Memory: the documents
  // erased meanwhile, until written.
  void BeginSnapshot();
  // Appends the framed add records of the snapshot's next documents to *out
  // until it grew by at least min_bytes; true once every document is written.
  // REQUIRES: a snapshot begun.
  bool AppendSnapshotRecords(size_t min_bytes, std::string* out);
  // Ends (or abandons) the snapshot and frees what was kept aside for it.
  void EndSnapshot();

  void FillStats(StreamStats* stats) const;

  // The bytes of the stored documents' framed add records (payload plus the
  // log's frame, kLogRecordHeaderBytes): what a snapshot of this moment
  // holds besides its header record. The rotation policy compares what
  // recovery would read with it (stream_rotation.cc, MaybeRotateLocked).
  uint64_t RecordBytes() const { return record_bytes_; }

  // A position in the list of near-duplicates: (time, seq).
  using ListKey = std::pair<int64_t, uint64_t>;
  // Appends to `out` the near-duplicates after `after` (none: from the
  // start) in `options`' order and time range for which accept(doc) holds,
  // until options.limit are found or options.max_scanned looked at. Returns
  // where a next page starts, or nullopt when the range holds no more.
  std::optional<ListKey> ListNearDuplicates(const StreamListOptions& options,
                                            const std::optional<ListKey>& after,
                                            const std::function<bool(const StreamDoc&)>& accept,
                                            std::vector<const StreamDoc*>* out,
                                            uint64_t* scanned) const;

 private:
  StreamState(StreamConfig config, Recipe recipe, NearDuplicateOptions options);
  Status Store(StreamDoc doc, uint64_t id_hash, std::span<const uint64_t> band_keys);
  void Erase(std::map<uint64_t, StreamDoc>::iterator it);
  void EvictOlderThan(int64_t cutoff);
  int64_t CutoffFor(int64_t time) const;
  static uint64_t DocBytes(const StreamDoc& doc);

  // The snapshot in progress: its next document and the end of its seqs.
  struct SnapshotRange {
    uint64_t next_seq = 0;
    uint64_t end_seq = 0;
  };

  StreamConfig config_;
  Recipe recipe_;
  NearDuplicateOptions options_;
  NearDuplicateScheme scheme_;
  double lower_bound_ = 0;  // MinHash: the estimate that earns an exact check
  std::optional<LshIndex> lsh_;
  std::optional<HammingIndex> hamming_;

  std::map<uint64_t, StreamDoc> docs_;  // by seq
  std::optional<SnapshotRange> snapshot_;
  // Erased documents the snapshot has yet to write (seq in its range), by seq.
  std::map<uint64_t, StreamDoc> snapshot_pending_;
  StreamIdIndex seq_of_id_;
  std::set<std::pair<int64_t, uint64_t>> by_time_;  // (time, seq): eviction order
  // The near-duplicates only, for List: (time, seq). Derived from docs_, so
  // a replay rebuilds it.
  std::set<ListKey> near_by_time_;
  uint64_t next_seq_ = 0;
  std::optional<int64_t> newest_time_;
  uint64_t kept_ = 0;
  uint64_t added_ = 0;
  uint64_t evicted_ = 0;
  uint64_t removed_ = 0;
  uint64_t doc_bytes_ = 0;
  uint64_t record_bytes_ = 0;  // RecordBytes()
};

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_STATE_H_
