// BandTable: one LSH band's open-addressing (linear probing) hash table from
// a 64-bit band key to the slot of the chain head of the documents with that
// key, 8 bytes per entry. The storage, deletion and growth are
// LinearProbeTable's (lsh_probe_table.h, also for cost and thread safety);
// this class adds how a band key finds and matches its entry.
//
// The band key is split in two halves, stored in two places so that no byte
// of it is kept twice: the caller keeps the high half of every document's key
// in its dense array `keys` (keys[slot] = HighHalf(key of slot), 4 bytes per
// document), and the table entry packs the low half with the slot. Two keys
// are equal iff the entry's low half and keys[slot] both agree, so the table
// answers exactly for full 64-bit keys. The home position is the top bits of
// the high half (after the shard bits, for ShardedBandTable); so finding the entry of a slot
// (Remove), backward-shift deletion and growing read keys[slot] (the low half is not needed there).
// SlotTable (lsh_slot_table.h) is the variant that keeps the whole key in its
// caller's array and the home in the entry (the id table).
#ifndef NEARDUP_INDEX_LSH_BAND_TABLE_H_
#define NEARDUP_INDEX_LSH_BAND_TABLE_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "index/lsh_probe_table.h"
#include "neardup/check.h"

namespace neardup::internal {

// kHomeShift: the home comes from the high half shifted left by this many
// bits (0 for a whole table; ShardedBandTable's shards skip the bits that
// chose the shard, which all their keys share).
template <int kHomeShift>
class BandTableT : private LinearProbeTable {
  static_assert(kHomeShift >= 0 && kHomeShift < 16);
  // Invariant (beyond LinearProbeTable's): an entry's home is
  // Home(HomeBits(keys[slot])); no two entries have the same (low half,
  // keys[slot]).

  static uint32_t HomeBits(uint32_t high) { return high << kHomeShift; }

  // An entry's home bits come from the high half of its key, keys[slot].
  struct HomeBitsFrom {
    const uint32_t* keys;
    uint32_t operator()(uint64_t entry) const { return HomeBits(keys[SlotOf(entry)]); }
  };
  // Whether an entry holds a key: its low half and keys[slot] both agree.
  struct KeyMatch {
    uint32_t low;
    uint32_t high;
    const uint32_t* keys;
    bool operator()(uint64_t entry) const {
      return UpperOf(entry) == low && keys[SlotOf(entry)] == high;
    }
  };

 public:
  using LinearProbeTable::kMaxEntries;
  using LinearProbeTable::kNoSlot;
  using LinearProbeTable::kNotFound;

  static uint32_t HighHalf(uint64_t key) { return static_cast<uint32_t>(key >> 32); }
  static uint32_t LowHalf(uint64_t key) { return static_cast<uint32_t>(key); }

  using LinearProbeTable::capacity;
  using LinearProbeTable::MemoryBytes;
  using LinearProbeTable::SetSlotAt;
  using LinearProbeTable::size;
  using LinearProbeTable::SlotAt;

  void Prefetch(uint64_t key) const { PrefetchHome(HomeBits(HighHalf(key))); }

  // The position of the entry of `key`, or kNotFound.
  // REQUIRES: keys[s] = HighHalf(key of s) for every slot s in the table.
  size_t Find(uint64_t key, const uint32_t* keys) const {
    return FindEntry(HomeBits(HighHalf(key)), KeyMatch{LowHalf(key), HighHalf(key), keys});
  }

  // The position of the entry holding `slot`, or kNotFound. Needs no key:
  // the home comes from keys[slot].
  size_t FindSlot(uint32_t slot, const uint32_t* keys) const {
    return FindEntry(HomeBits(keys[slot]),
                     [slot](uint64_t entry) { return SlotOf(entry) == slot; });
  }

  // Like Find, but when `key` is absent, stores `slot` at the empty position
  // where it belongs and returns {pos, true}; when present returns {pos,
  // false} and changes nothing.
  // REQUIRES: keys[slot] == HighHalf(key) already; size() < kMaxEntries.
  std::pair<size_t, bool> FindOrInsert(uint64_t key, uint32_t slot, const uint32_t* keys) {
    NEARDUP_DCHECK(slot != kNoSlot && keys[slot] == HighHalf(key));
    GrowForOneMore(HomeBitsFrom{keys});
    return FindOrClaim(HomeBits(HighHalf(key)), Pack(LowHalf(key), slot),
                       KeyMatch{LowHalf(key), HighHalf(key), keys});
  }

  // FindOrInsert that grows by LinearProbeTable::GrowForOneMoreStaggered
  // (at a load of 1/2 + step / (16 steps) from 2^12 entries on).
  // REQUIRES: step < steps < 2^35; as FindOrInsert.
  std::pair<size_t, bool> FindOrInsertStaggered(uint64_t key, uint32_t slot, const uint32_t* keys,
                                                size_t step, size_t steps) {
    NEARDUP_DCHECK(slot != kNoSlot && keys[slot] == HighHalf(key));
    GrowForOneMoreStaggered(step, steps, HomeBitsFrom{keys});
    return FindOrClaim(HomeBits(HighHalf(key)), Pack(LowHalf(key), slot),
                       KeyMatch{LowHalf(key), HighHalf(key), keys});
  }

  // For every slot in [first, last), in order: stores keys[slot] =
  // HighHalf(key_of(slot)), then where the key is absent inserts `slot` and
  // calls on_insert(slot); where the entry of slot `old` has the key,
  // replaces its slot by on_match(slot, old). The same result as
  // FindOrInsert slot by slot, but it grows at most once, up front, prefetches
  // the home of the slot `prefetch_distance` ahead, and keeps the table's
  // fields in registers (stores into the table, into `keys` and by the
  // callbacks could otherwise alias them and force reloads on every probe).
  // REQUIRES: keys has room for slot last - 1; every slot below `first` in
  // the table has its keys entry; size() + (last - first) <= kMaxEntries.
  template <typename KeyOf, typename OnInsert, typename OnMatch>
  void FindOrInsertRange(uint32_t first, uint32_t last, uint32_t prefetch_distance, KeyOf&& key_of,
                         uint32_t* keys, OnInsert&& on_insert, OnMatch&& on_match) {
    Reserve(size_ + (last - first), keys);
    FindOrInsertEach(
        last - first, prefetch_distance,
        [first](size_t i) { return static_cast<uint32_t>(first + i); }, key_of, keys, on_insert,
        on_match);
  }

  // FindOrInsertRange over the slots slots[0..count) (in that order) instead
  // of a range, with the table reserved for them already (ShardedBandTable
  // passes each shard its slots of a range).
  // REQUIRES: size() + count <= capacity() / 2; as FindOrInsertRange.
  template <typename KeyOf, typename OnInsert, typename OnMatch>
  void FindOrInsertSlots(const uint32_t* slots, size_t count, uint32_t prefetch_distance,
                         KeyOf&& key_of, uint32_t* keys, OnInsert&& on_insert, OnMatch&& on_match) {
    NEARDUP_DCHECK((size_ + count) * 2 <= entries_.size());
    FindOrInsertEach(
        count, prefetch_distance, [slots](size_t i) { return slots[i]; }, key_of, keys, on_insert,
        on_match);
  }

  // Removes the entry at `pos` (LinearProbeTable::EraseAt). Reads keys[] of
  // the entries that follow it in its run (their homes).
  void EraseAt(size_t pos, const uint32_t* keys) {
    LinearProbeTable::EraseAt(pos, HomeBitsFrom{keys});
  }

  // Makes room for `num_entries` entries without growing again; growing reads
  // keys[] once per entry (the dense 4-byte array of the band).
  void Reserve(size_t num_entries, const uint32_t* keys) {
    LinearProbeTable::Reserve(num_entries, HomeBitsFrom{keys});
  }

 private:
  // The loop of FindOrInsertRange/FindOrInsertSlots over slot_at(0..count).
  template <typename SlotAt, typename KeyOf, typename OnInsert, typename OnMatch>
  void FindOrInsertEach(size_t count, uint32_t prefetch_distance, SlotAt&& slot_at, KeyOf&& key_of,
                        uint32_t* keys, OnInsert&& on_insert, OnMatch&& on_match) {
    uint64_t* const entries = entries_.data();
    const size_t mask = entries_.size() - 1;
    const int shift = shift_;
    size_t added = 0;
    for (size_t i = 0; i != count; ++i) {
      if (count - i > prefetch_distance) {
        __builtin_prefetch(
            &entries[HomeBits(HighHalf(key_of(slot_at(i + prefetch_distance)))) >> shift]);
      }
      const uint32_t slot = slot_at(i);
      const uint64_t key = key_of(slot);
      const uint32_t high = HighHalf(key);
      const uint32_t low = LowHalf(key);
      keys[slot] = high;
      const KeyMatch matches{low, high, keys};
      for (size_t pos = HomeBits(high) >> shift;; pos = (pos + 1) & mask) {
        const uint64_t entry = entries[pos];
        if (entry == kEmpty) {
          entries[pos] = Pack(low, slot);
          ++added;
          on_insert(slot);
          break;
        }
        if (matches(entry)) {
          entries[pos] = Pack(low, on_match(slot, SlotOf(entry)));
          break;
        }
      }
    }
    size_ += added;
  }
};

using BandTable = BandTableT<0>;

// ShardedBandTable: BandTable's interface over 8 tables chosen by the top 3
// bits of the key's high half, so that each grows (rehashes) on its own
// insert, 1/8 of the band's table at a time (session 12: a band's table of
// a 1M-document index rehashed 16 MB at one add, 45-80 ms of CPU on the
// loaded VM, under a stream's writer lock; the bands' steps were staggered
// but each was still whole). 8, not more: a shard of a 1M-document band is
// then 2 MiB, still in transparent huge pages (64 shards of 256 KiB in 4 KiB
// pages made queries 40-55% and reserved bulk inserts 2x slower: a TLB miss
// per probe). A position names its shard in bits 32.. (a shard's positions
// are below 2^32).
// Cost: 8 minimum tables (1 KiB) per band for an empty index; one more
// load per probe (the shard's header, from the band's 8). Reserve's slack
// can double the tables as ShardedSlotTable's (its "Cost").
class ShardedBandTable {
 public:
  static constexpr int kShardBits = kLshShardBits;
  using Shard = BandTableT<kShardBits>;
  static constexpr size_t kNumShards = LshShards<Shard>::kNumShards;
  static constexpr uint32_t kNoSlot = Shard::kNoSlot;
  static constexpr size_t kNotFound = Shard::kNotFound;
  static constexpr size_t kMaxEntries = Shard::kMaxEntries;

  static uint32_t HighHalf(uint64_t key) { return Shard::HighHalf(key); }
  static uint32_t LowHalf(uint64_t key) { return Shard::LowHalf(key); }

  size_t size() const { return shards_.TotalSize(); }
  size_t capacity() const { return shards_.TotalCapacity(); }
  size_t MemoryBytes() const { return shards_.TotalMemoryBytes(); }

  void Prefetch(uint64_t key) const { shards_[ShardOf(HighHalf(key))].Prefetch(key); }

  uint32_t SlotAt(size_t pos) const {
    return shards_[Shards::ShardOfPosition(pos)].SlotAt(Shards::InShardPosition(pos));
  }
  void SetSlotAt(size_t pos, uint32_t slot) {
    shards_[Shards::ShardOfPosition(pos)].SetSlotAt(Shards::InShardPosition(pos), slot);
  }

  // As BandTable's.
  size_t Find(uint64_t key, const uint32_t* keys) const {
    const size_t shard = ShardOf(HighHalf(key));
    return Position(shard, shards_[shard].Find(key, keys));
  }
  size_t FindSlot(uint32_t slot, const uint32_t* keys) const {
    const size_t shard = ShardOf(keys[slot]);
    return Position(shard, shards_[shard].FindSlot(slot, keys));
  }
  std::pair<size_t, bool> FindOrInsert(uint64_t key, uint32_t slot, const uint32_t* keys) {
    const size_t shard = ShardOf(HighHalf(key));
    const auto [pos, inserted] = shards_[shard].FindOrInsert(key, slot, keys);
    return {Position(shard, pos), inserted};
  }

  // As BandTable::FindOrInsertRange (the same table and chains as
  // FindOrInsert slot by slot): the range's slots are sorted by shard
  // (stable: a key's slots stay in order, so its chain head is the same).
  // on_insert/on_match are therefore called in shard order, which is slot
  // order only among one key's slots (FillBand does not rely on more), each shard reserved for its
  // count, then filled by its own prefetching loop (FindOrInsertSlots).
  // Scratch: 4 bytes per slot of the range.
  template <typename KeyOf, typename OnInsert, typename OnMatch>
  void FindOrInsertRange(uint32_t first, uint32_t last, uint32_t prefetch_distance, KeyOf&& key_of,
                         uint32_t* keys, OnInsert&& on_insert, OnMatch&& on_match) {
    std::array<size_t, kNumShards + 1> start{};
    for (uint32_t slot = first; slot != last; ++slot) {
      ++start[ShardOf(HighHalf(key_of(slot))) + 1];
    }
    for (size_t shard = 0; shard < kNumShards; ++shard) start[shard + 1] += start[shard];
    std::vector<uint32_t> slots(last - first);
    std::array<size_t, kNumShards> next{};
    std::copy(start.begin(), start.end() - 1, next.begin());
    for (uint32_t slot = first; slot != last; ++slot) {
      slots[next[ShardOf(HighHalf(key_of(slot)))]++] = slot;
    }
    for (size_t shard = 0; shard < kNumShards; ++shard) {
      const size_t count = start[shard + 1] - start[shard];
      if (count == 0) continue;
      shards_[shard].Reserve(shards_[shard].size() + count, keys);
      shards_[shard].FindOrInsertSlots(slots.data() + start[shard], count, prefetch_distance,
                                       key_of, keys, on_insert, on_match);
    }
  }

  void EraseAt(size_t pos, const uint32_t* keys) {
    shards_[Shards::ShardOfPosition(pos)].EraseAt(Shards::InShardPosition(pos), keys);
  }

  // FindOrInsert with staggered growth (session 17), for a caller that
  // fills `num_bands` tables together one key at a time (LshIndex::Insert:
  // every band holds one key per document): the shard of `key` in band
  // `band` grows at a load of 1/2 + step / (16 steps), step = shard *
  // num_bands + band of steps = 8 num_bands (Shard::FindOrInsertStaggered),
  // so the 8 num_bands shards double at different inserts, spread over
  // 1/8 of the documents of a doubling. At load 1/2 they all doubled within
  // a few thousand inserts of each other (a shard's size varies by a
  // standard deviation, ~0.4% at 2^19 documents), some at the same insert.
  // REQUIRES: band < num_bands (any int); as FindOrInsert.
  std::pair<size_t, bool> FindOrInsertStaggered(uint64_t key, uint32_t slot, const uint32_t* keys,
                                                size_t band, size_t num_bands) {
    const size_t shard = ShardOf(HighHalf(key));
    const auto [pos, inserted] = shards_[shard].FindOrInsertStaggered(
        key, slot, keys, shard * num_bands + band, kNumShards * num_bands);
    return {Position(shard, pos), inserted};
  }

  // Room for `num_entries` keys spread by their high halves: each shard for
  // LshShards::ReserveShare (as ShardedSlotTable).
  void Reserve(size_t num_entries, const uint32_t* keys) {
    for (Shard& shard : shards_) shard.Reserve(Shards::ReserveShare(num_entries), keys);
  }

 private:
  using Shards = LshShards<Shard>;
  static size_t ShardOf(uint32_t high) { return high >> (32 - kShardBits); }
  static size_t Position(size_t shard, size_t pos) { return Shards::Position(shard, pos); }

  Shards shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_BAND_TABLE_H_
