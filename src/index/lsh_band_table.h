// BandTable: one LSH band's open-addressing (linear probing) hash table from
// a 64-bit band key to the slot of the chain head of the documents with that
// key, 8 bytes per entry.
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
//
// Cost: capacity is a power of two kept at least twice the size (load <= 1/2),
// so 16 to 32 bytes per entry; expected probes ~1.5 (hit) and ~2.5 (miss).
// Thread safety: const methods may run concurrently; mutations need a lock.
#ifndef NEARDUP_INDEX_LSH_BAND_TABLE_H_
#define NEARDUP_INDEX_LSH_BAND_TABLE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "index/lsh_huge_page_allocator.h"
#include "neardup/check.h"

namespace neardup::internal {

class BandTable {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  static constexpr size_t kNotFound = ~size_t{0};
  // Capacity is at most 2^32 (the home position comes from a 32-bit half), so
  // at most 2^31 entries.
  static constexpr size_t kMaxEntries = size_t{1} << 31;

  static uint32_t HighHalf(uint64_t key) { return static_cast<uint32_t>(key >> 32); }
  static uint32_t LowHalf(uint64_t key) { return static_cast<uint32_t>(key); }

  BandTable() : entries_(kMinCapacity, kEmpty), shift_(32 - std::countr_zero(kMinCapacity)) {}

  size_t size() const { return size_; }
  size_t capacity() const { return entries_.size(); }
  size_t MemoryBytes() const { return entries_.capacity() * sizeof(uint64_t); }

  void Prefetch(uint64_t key) const { __builtin_prefetch(&entries_[Home(HighHalf(key))]); }

  // The position of the entry of `key`, or kNotFound.
  // REQUIRES: keys[s] = HighHalf(key of s) for every slot s in the table.
  size_t Find(uint64_t key, const uint32_t* keys) const {
    const uint32_t high = HighHalf(key);
    const uint32_t low = LowHalf(key);
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(high);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) return kNotFound;
      if (LowOf(entry) == low && keys[SlotOf(entry)] == high) return pos;
    }
  }

  // The position of the entry holding `slot`, or kNotFound. Needs no key:
  // the home comes from keys[slot].
  size_t FindSlot(uint32_t slot, const uint32_t* keys) const {
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(keys[slot]);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) return kNotFound;
      if (SlotOf(entry) == slot) return pos;
    }
  }

  // Like Find, but when `key` is absent, stores `slot` at the empty position
  // where it belongs and returns {pos, true}; when present returns {pos,
  // false} and changes nothing.
  // REQUIRES: keys[slot] == HighHalf(key) already; size() < kMaxEntries.
  std::pair<size_t, bool> FindOrInsert(uint64_t key, uint32_t slot, const uint32_t* keys) {
    NEARDUP_DCHECK(slot != kNoSlot && keys[slot] == HighHalf(key));
    if ((size_ + 1) * 2 > entries_.size()) Grow(entries_.size() * 2, keys);
    const uint32_t high = HighHalf(key);
    const uint32_t low = LowHalf(key);
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(high);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) {
        entries_[pos] = Pack(low, slot);
        ++size_;
        return {pos, true};
      }
      if (LowOf(entry) == low && keys[SlotOf(entry)] == high) return {pos, false};
    }
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
      for (size_t pos = high >> shift;; pos = (pos + 1) & mask) {
        const uint64_t entry = entries[pos];
        if (entry == kEmpty) {
          entries[pos] = Pack(low, slot);
          ++added;
          on_insert(slot);
          break;
        }
        if (LowOf(entry) == low && keys[SlotOf(entry)] == high) {
          entries[pos] = Pack(low, on_match(slot, SlotOf(entry)));
          break;
        }
      }
    }
    size_ += added;
  }

  uint32_t SlotAt(size_t pos) const { return SlotOf(entries_[pos]); }
  void SetSlotAt(size_t pos, uint32_t slot) {
    entries_[pos] = (entries_[pos] & ~uint64_t{0xFFFFFFFFu}) | slot;
  }

  // Removes the entry at `pos` by backward-shift deletion (Knuth, TAOCP vol.
  // 3, 6.4 Algorithm R): no tombstones, so probe lengths stay those of a
  // table that never saw the removed key. Reads keys[] of the entries that
  // follow it in its run (their homes).
  void EraseAt(size_t pos, const uint32_t* keys) {
    const size_t mask = entries_.size() - 1;
    size_t hole = pos;
    for (size_t next = (hole + 1) & mask;; next = (next + 1) & mask) {
      const uint64_t entry = entries_[next];
      if (entry == kEmpty) break;
      const size_t home = Home(keys[SlotOf(entry)]);
      // The entry may move back into the hole unless its home lies cyclically
      // in (hole, next].
      const bool home_after_hole = ((next - home) & mask) < ((next - hole) & mask);
      if (!home_after_hole) {
        entries_[hole] = entry;
        hole = next;
      }
    }
    entries_[hole] = kEmpty;
    --size_;
  }

  // Makes room for `num_entries` entries without growing again.
  void Reserve(size_t num_entries, const uint32_t* keys) {
    size_t capacity = entries_.size();
    while (num_entries * 2 > capacity) capacity *= 2;
    if (capacity != entries_.size()) Grow(capacity, keys);
  }

 private:
  // An entry is never kEmpty: its slot is never kNoSlot.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr size_t kMinCapacity = 16;

  static uint32_t LowOf(uint64_t entry) { return static_cast<uint32_t>(entry >> 32); }
  static uint32_t SlotOf(uint64_t entry) { return static_cast<uint32_t>(entry); }
  static uint64_t Pack(uint32_t low, uint32_t slot) { return (uint64_t{low} << 32) | slot; }
  // shift_ <= 28 (capacity >= 16), so the shift is defined.
  size_t Home(uint32_t high) const { return size_t{high} >> shift_; }

  // Reinserts every entry; the homes come from keys[] (a read per entry,
  // into the dense 4-byte array of the band).
  void Grow(size_t new_capacity, const uint32_t* keys) {
    NEARDUP_CHECK(new_capacity <= (size_t{1} << 32)) << "BandTable capacity " << new_capacity;
    HugePageVector<uint64_t> old(new_capacity, kEmpty);
    old.swap(entries_);
    shift_ = 32 - std::countr_zero(new_capacity);
    const size_t mask = new_capacity - 1;
    for (uint64_t entry : old) {
      if (entry == kEmpty) continue;
      size_t pos = Home(keys[SlotOf(entry)]);
      while (entries_[pos] != kEmpty) pos = (pos + 1) & mask;
      entries_[pos] = entry;
    }
  }

  // Invariant: entries_.size() is a power of two >= kMinCapacity and
  // >= 2 * size_; every entry lies in the unbroken run starting at its home
  // Home(keys[slot]); no two entries have the same (low half, keys[slot]).
  HugePageVector<uint64_t> entries_;
  size_t size_ = 0;
  int shift_;  // 32 - log2(capacity): home = high half >> shift_
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_BAND_TABLE_H_
