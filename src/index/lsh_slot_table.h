// SlotTable: an open-addressing (linear probing) hash table from a 64-bit
// hash to a 32-bit document slot, 8 bytes per entry, used by LshIndex for its
// id -> slot map (each band's key -> chain head map is a BandTable,
// lsh_band_table.h, which keeps the key's high half in the caller's array).
//
// An entry packs the hash's upper 32 bits (the tag) with the slot. The full
// key is not stored: a caller-supplied predicate confirms a tag match against
// the key it keeps elsewhere (one extra memory access, only on a tag match).
// The home position is the tag's top bits, so growing and backward-shift
// deletion never need the full key.
//
// Cost: capacity is a power of two kept at least twice the size (load <= 1/2),
// so 16 to 32 bytes per entry; expected probes ~1.5 (hit) and ~2.5 (miss).
// Thread safety: const methods may run concurrently; mutations need a lock.
#ifndef NEARDUP_INDEX_LSH_SLOT_TABLE_H_
#define NEARDUP_INDEX_LSH_SLOT_TABLE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/lsh_huge_page_allocator.h"
#include "neardup/check.h"

namespace neardup::internal {

class SlotTable {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  static constexpr size_t kNotFound = ~size_t{0};
  // Capacity is at most 2^32 (the home position comes from a 32-bit tag), so
  // at most 2^31 entries.
  static constexpr size_t kMaxEntries = size_t{1} << 31;

  SlotTable() : entries_(kMinCapacity, kEmpty), shift_(32 - std::countr_zero(kMinCapacity)) {}

  size_t size() const { return size_; }
  size_t capacity() const { return entries_.size(); }
  size_t MemoryBytes() const { return entries_.capacity() * sizeof(uint64_t); }

  void Prefetch(uint64_t hash) const { __builtin_prefetch(&entries_[Home(Tag(hash))]); }

  // The position of the first entry whose tag matches `hash` and for whose
  // slot `match(slot)` is true, or kNotFound.
  template <typename Match>
  size_t Find(uint64_t hash, Match&& match) const {
    const uint32_t tag = Tag(hash);
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(tag);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) return kNotFound;
      if (static_cast<uint32_t>(entry >> 32) == tag && match(static_cast<uint32_t>(entry))) {
        return pos;
      }
    }
  }

  // Like Find, but when nothing matches, claims the empty position where
  // `hash` would be inserted, stores `slot` there and returns {pos, true}.
  // On a match returns {pos, false} and changes nothing.
  // REQUIRES: size() < kMaxEntries.
  template <typename Match>
  std::pair<size_t, bool> FindOrInsert(uint64_t hash, uint32_t slot, Match&& match) {
    NEARDUP_DCHECK(slot != kNoSlot);
    if ((size_ + 1) * 2 > entries_.size()) Grow(entries_.size() * 2);
    const uint32_t tag = Tag(hash);
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(tag);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) {
        entries_[pos] = Pack(tag, slot);
        ++size_;
        return {pos, true};
      }
      if (static_cast<uint32_t>(entry >> 32) == tag && match(static_cast<uint32_t>(entry))) {
        return {pos, false};
      }
    }
  }

  uint32_t SlotAt(size_t pos) const { return static_cast<uint32_t>(entries_[pos]); }
  void SetSlotAt(size_t pos, uint32_t slot) {
    entries_[pos] = (entries_[pos] & ~uint64_t{0xFFFFFFFFu}) | slot;
  }

  // Removes the entry at `pos` by backward-shift deletion (Knuth, TAOCP vol.
  // 3, 6.4 Algorithm R): no tombstones, so probe lengths stay those of a
  // table that never saw the removed key.
  void EraseAt(size_t pos) {
    const size_t mask = entries_.size() - 1;
    size_t hole = pos;
    for (size_t next = (hole + 1) & mask;; next = (next + 1) & mask) {
      const uint64_t entry = entries_[next];
      if (entry == kEmpty) break;
      const size_t home = Home(static_cast<uint32_t>(entry >> 32));
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
  void Reserve(size_t num_entries) {
    size_t capacity = entries_.size();
    while (num_entries * 2 > capacity) capacity *= 2;
    if (capacity != entries_.size()) Grow(capacity);
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // tag ~0 with slot kNoSlot
  static constexpr size_t kMinCapacity = 16;

  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  static uint64_t Pack(uint32_t tag, uint32_t slot) { return (uint64_t{tag} << 32) | slot; }
  size_t Home(uint32_t tag) const { return shift_ == 32 ? 0 : size_t{tag} >> shift_; }

  void Grow(size_t new_capacity) {
    NEARDUP_CHECK(new_capacity <= (size_t{1} << 32)) << "SlotTable capacity " << new_capacity;
    HugePageVector<uint64_t> old(new_capacity, kEmpty);
    old.swap(entries_);
    shift_ = 32 - std::countr_zero(new_capacity);
    const size_t mask = new_capacity - 1;
    for (uint64_t entry : old) {
      if (entry == kEmpty) continue;
      size_t pos = Home(static_cast<uint32_t>(entry >> 32));
      while (entries_[pos] != kEmpty) pos = (pos + 1) & mask;
      entries_[pos] = entry;
    }
  }

  // Invariant: entries_.size() is a power of two >= kMinCapacity and
  // >= 2 * size_; every entry lies in the unbroken run starting at its home.
  HugePageVector<uint64_t> entries_;
  size_t size_ = 0;
  int shift_;  // 32 - log2(capacity): home = tag >> shift_
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_SLOT_TABLE_H_
