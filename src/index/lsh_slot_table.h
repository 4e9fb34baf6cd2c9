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

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_SLOT_TABLE_H_
