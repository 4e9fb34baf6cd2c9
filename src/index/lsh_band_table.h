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
// the high half; so finding the entry of a slot (Remove), backward-shift
// deletion and growing read keys[slot] (the low half is not needed there).
// SlotTable (lsh_slot_table.h) is the variant that keeps the whole key in its
// caller's array and the home in the entry (the id table).
#ifndef NEARDUP_INDEX_LSH_BAND_TABLE_H_
#define NEARDUP_INDEX_LSH_BAND_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "index/lsh_probe_table.h"
#include "neardup/check.h"

namespace neardup::internal {

class BandTable : private LinearProbeTable {
  // Invariant (beyond LinearProbeTable's): an entry's home is
  // Home(keys[slot]); no two entries have the same (low half, keys[slot]).

  // An entry's home bits are the high half of its key, keys[slot].
  struct HomeBitsFrom {
    const uint32_t* keys;
    uint32_t operator()(uint64_t entry) const { return keys[SlotOf(entry)]; }
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

  void Prefetch(uint64_t key) const { PrefetchHome(HighHalf(key)); }

  // The position of the entry of `key`, or kNotFound.
  // REQUIRES: keys[s] = HighHalf(key of s) for every slot s in the table.
  size_t Find(uint64_t key, const uint32_t* keys) const {
    return FindEntry(HighHalf(key), KeyMatch{LowHalf(key), HighHalf(key), keys});
  }

  // The position of the entry holding `slot`, or kNotFound. Needs no key:
  // the home comes from keys[slot].
  size_t FindSlot(uint32_t slot, const uint32_t* keys) const {
    return FindEntry(keys[slot], [slot](uint64_t entry) { return SlotOf(entry) == slot; });
  }

  // Like Find, but when `key` is absent, stores `slot` at the empty position
  // where it belongs and returns {pos, true}; when present returns {pos,
  // false} and changes nothing.
  // REQUIRES: keys[slot] == HighHalf(key) already; size() < kMaxEntries.
  std::pair<size_t, bool> FindOrInsert(uint64_t key, uint32_t slot, const uint32_t* keys) {
    NEARDUP_DCHECK(slot != kNoSlot && keys[slot] == HighHalf(key));
    GrowForOneMore(HomeBitsFrom{keys});
    return FindOrClaim(HighHalf(key), Pack(LowHalf(key), slot),
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
    uint64_t* const entries = entries_.data();
    const size_t mask = entries_.size() - 1;
    const int shift = shift_;
    size_t added = 0;
    for (uint32_t slot = first; slot != last; ++slot) {
      if (last - slot > prefetch_distance) {
        __builtin_prefetch(&entries[HighHalf(key_of(slot + prefetch_distance)) >> shift]);
      }
      const uint64_t key = key_of(slot);
      const uint32_t high = HighHalf(key);
      const uint32_t low = LowHalf(key);
      keys[slot] = high;
      const KeyMatch matches{low, high, keys};
      for (size_t pos = high >> shift;; pos = (pos + 1) & mask) {
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
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_BAND_TABLE_H_
