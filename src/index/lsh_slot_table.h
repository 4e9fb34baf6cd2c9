// SlotTable: an open-addressing (linear probing) hash table from a 64-bit
// hash to a 32-bit document slot, 8 bytes per entry, used by LshIndex for its
// id -> slot map (each band's key -> chain head map is a BandTable,
// lsh_band_table.h, which keeps the key's high half in the caller's array).
// The storage, deletion and growth are LinearProbeTable's (lsh_probe_table.h,
// also for cost and thread safety); this class adds how a hash finds and
// matches its entry.
//
// An entry packs the hash's upper 32 bits (the tag) with the slot. The full
// key is not stored: a caller-supplied predicate confirms a tag match against
// the key it keeps elsewhere (one extra memory access, only on a tag match).
// The home position is the tag's top bits, so growing and backward-shift
// deletion never need the full key.
#ifndef NEARDUP_INDEX_LSH_SLOT_TABLE_H_
#define NEARDUP_INDEX_LSH_SLOT_TABLE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "index/lsh_probe_table.h"
#include "neardup/check.h"

namespace neardup::internal {

class SlotTable : private LinearProbeTable {
  // Invariant (beyond LinearProbeTable's): an entry's upper half is its tag
  // and its home is Home(tag), so the entry alone gives its home (growing and
  // deletion read nothing else).
  struct TagOf {
    uint32_t operator()(uint64_t entry) const { return UpperOf(entry); }
  };

 public:
  using LinearProbeTable::kMaxEntries;
  using LinearProbeTable::kNoSlot;
  using LinearProbeTable::kNotFound;

  using LinearProbeTable::capacity;
  using LinearProbeTable::MemoryBytes;
  using LinearProbeTable::SetSlotAt;
  using LinearProbeTable::size;
  using LinearProbeTable::SlotAt;

  void Prefetch(uint64_t hash) const { PrefetchHome(Tag(hash)); }

  // The position of the first entry whose tag matches `hash` and for whose
  // slot `match(slot)` is true, or kNotFound.
  template <typename Match>
  size_t Find(uint64_t hash, Match&& match) const {
    return FindEntry(Tag(hash), TagMatch(Tag(hash), match));
  }

  // Like Find, but when nothing matches, claims the empty position where
  // `hash` would be inserted, stores `slot` there and returns {pos, true}.
  // On a match returns {pos, false} and changes nothing.
  // REQUIRES: size() < kMaxEntries.
  template <typename Match>
  std::pair<size_t, bool> FindOrInsert(uint64_t hash, uint32_t slot, Match&& match) {
    NEARDUP_DCHECK(slot != kNoSlot);
    GrowForOneMore(TagOf{});
    return FindOrClaim(Tag(hash), Pack(Tag(hash), slot), TagMatch(Tag(hash), match));
  }

  // FindOrInsert that grows by LinearProbeTable::GrowForOneMoreStaggered
  // (at a load of 1/2 + step / (16 steps) from 2^12 entries on).
  // REQUIRES: step < steps < 2^35; as FindOrInsert.
  template <typename Match>
  std::pair<size_t, bool> FindOrInsertStaggered(uint64_t hash, uint32_t slot, Match&& match,
                                                size_t step, size_t steps) {
    NEARDUP_DCHECK(slot != kNoSlot);
    GrowForOneMoreStaggered(step, steps, TagOf{});
    return FindOrClaim(Tag(hash), Pack(Tag(hash), slot), TagMatch(Tag(hash), match));
  }

  // Removes the entry at `pos` (LinearProbeTable::EraseAt).
  void EraseAt(size_t pos) { LinearProbeTable::EraseAt(pos, TagOf{}); }

  // Makes room for `num_entries` entries without growing again.
  void Reserve(size_t num_entries) { LinearProbeTable::Reserve(num_entries, TagOf{}); }

 private:
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

  // Whether an entry holds `tag` and a slot that `match` accepts.
  template <typename Match>
  static auto TagMatch(uint32_t tag, Match& match) {
    return [tag, &match](uint64_t entry) { return UpperOf(entry) == tag && match(SlotOf(entry)); };
  }
};

// ShardedSlotTable: SlotTable's interface over 8 SlotTables chosen by the
// hash's top 3 bits, so that each grows (rehashes) on its own insert, 1/8 of
// the table at a time (session 12: as one table the id table of a
// 1M-document index rehashed 16 MB at one add, under a stream's writer
// lock). 8 shards keep a shard of a 1M-document index at 2 MiB, in huge
// pages (ShardedBandTable, lsh_band_table.h, says why not more). A shard's
// SlotTable gets the hash rotated left by the shard bits, so its tag (home
// and match bits) is the hash's next 32 bits, not ones that every entry of
// the shard shares.
//
// A position names its shard in bits 32.. (a shard's positions are below
// 2^32), so Find/SlotAt/EraseAt/SetSlotAt chain as on a SlotTable.
// Cost: 8 minimum tables (1 KiB) for an empty index; Reserve gives each
// shard its expected share plus slack (a shard that draws more grows alone).
// Where twice the count falls just below a power of two (within the slack,
// ~4/sqrt(share) of it), the slack rounds every shard up to the next one:
// twice the unsharded table (e.g. 130,000 ids: 4 MiB instead of 2 MiB).
class ShardedSlotTable {
 public:
  static constexpr int kShardBits = LshShards<SlotTable>::kShardBits;
  static constexpr size_t kNumShards = LshShards<SlotTable>::kNumShards;
  static constexpr uint32_t kNoSlot = SlotTable::kNoSlot;
  static constexpr size_t kNotFound = SlotTable::kNotFound;
  static constexpr size_t kMaxEntries = SlotTable::kMaxEntries;

  size_t size() const { return shards_.TotalSize(); }
  size_t capacity() const { return shards_.TotalCapacity(); }
  size_t MemoryBytes() const { return shards_.TotalMemoryBytes(); }

  void Prefetch(uint64_t hash) const { shards_[ShardOf(hash)].Prefetch(InShard(hash)); }

  uint32_t SlotAt(size_t pos) const {
    return shards_[Shards::ShardOfPosition(pos)].SlotAt(Shards::InShardPosition(pos));
  }
  void SetSlotAt(size_t pos, uint32_t slot) {
    shards_[Shards::ShardOfPosition(pos)].SetSlotAt(Shards::InShardPosition(pos), slot);
  }

  template <typename Match>
  size_t Find(uint64_t hash, Match&& match) const {
    const size_t shard = ShardOf(hash);
    return Shards::Position(shard, shards_[shard].Find(InShard(hash), match));
  }

  // REQUIRES: size() < kMaxEntries.
  template <typename Match>
  std::pair<size_t, bool> FindOrInsert(uint64_t hash, uint32_t slot, Match&& match) {
    const size_t shard = ShardOf(hash);
    const auto [pos, inserted] = shards_[shard].FindOrInsert(InShard(hash), slot, match);
    return {Shards::Position(shard, pos), inserted};
  }

  // FindOrInsert with staggered growth (session 18), for inserts one id at
  // a time beyond a Reserve (LshIndex::Insert): shard s grows at a load of
  // 1/2 + s / 128 (SlotTable::FindOrInsertStaggered, step s of 8) from 2^12
  // entries on. The 8 shards hold about equal shares of the ids (a standard
  // deviation of ~0.4% of a share at 2^19 ids), so at load 1/2 they all
  // doubled within a few thousand inserts, in the cluster of the band
  // tables' steps at the same document counts before session 17 staggered
  // those; now they spread over the 1/16 of a doubling's ids after the
  // load-1/2 point, among the band shards' steps (1/2 .. 9/16). Later, not
  // earlier: no shard is bigger than at load 1/2.
  // REQUIRES: as FindOrInsert.
  template <typename Match>
  std::pair<size_t, bool> FindOrInsertStaggered(uint64_t hash, uint32_t slot, Match&& match) {
    const size_t shard = ShardOf(hash);
    const auto [pos, inserted] =
        shards_[shard].FindOrInsertStaggered(InShard(hash), slot, match, shard, kNumShards);
    return {Shards::Position(shard, pos), inserted};
  }

  void EraseAt(size_t pos) {
    shards_[Shards::ShardOfPosition(pos)].EraseAt(Shards::InShardPosition(pos));
  }

  // Makes room for `num_entries` entries spread by their hashes
  // (each shard gets LshShards::ReserveShare of them).
  void Reserve(size_t num_entries) {
    for (SlotTable& shard : shards_) shard.Reserve(Shards::ReserveShare(num_entries));
  }

 private:
  using Shards = LshShards<SlotTable>;
  static size_t ShardOf(uint64_t hash) { return hash >> (64 - kShardBits); }
  static uint64_t InShard(uint64_t hash) { return std::rotl(hash, kShardBits); }

  Shards shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_SLOT_TABLE_H_
