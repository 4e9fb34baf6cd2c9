// LinearProbeTable: the storage and the key-independent operations of LSH's
// open-addressing (linear probing) tables of 8-byte entries, SlotTable
// (lsh_slot_table.h, the id table) and BandTable (lsh_band_table.h, one per
// band). An entry packs a 32-bit word (its upper half, UpperOf) with a 32-bit
// slot (its lower half, SlotOf). The two tables differ only in where the
// 32-bit value that gives an entry's home comes from and in how a key matches
// an entry, so every operation here that needs either takes a callable,
// inlined at the call site (this is the LSH insert hot path):
// `home_bits_of(entry)` returns the uint32_t whose top log2(capacity) bits
// are the entry's home, and `match(entry)` says whether the entry holds the
// key looked for.
//
// Cost: capacity is a power of two kept at least twice the size (load <= 1/2;
// <= 9/16 for the staggered inserts), so 14 to 32 bytes per entry; expected
// probes up to ~1.5 (hit) and ~2.5 (miss) at load 1/2, ~1.6 and ~3.1 at 9/16.
// Thread safety: const methods may run concurrently; mutations need a lock.
#ifndef NEARDUP_INDEX_LSH_PROBE_TABLE_H_
#define NEARDUP_INDEX_LSH_PROBE_TABLE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "index/lsh_huge_page_allocator.h"
#include "neardup/check.h"

namespace neardup::internal {

class LinearProbeTable {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  static constexpr size_t kNotFound = ~size_t{0};
  // Capacity is at most 2^32 (the home position comes from a 32-bit value),
  // so at most 2^31 entries.
  static constexpr size_t kMaxEntries = size_t{1} << 31;

  LinearProbeTable()
      : entries_(kMinCapacity, kEmpty), shift_(32 - std::countr_zero(kMinCapacity)) {}

  size_t size() const { return size_; }
  size_t capacity() const { return entries_.size(); }
  size_t MemoryBytes() const { return ReservedBytes(entries_); }

  uint32_t SlotAt(size_t pos) const { return SlotOf(entries_[pos]); }
  void SetSlotAt(size_t pos, uint32_t slot) {
    entries_[pos] = (entries_[pos] & ~uint64_t{0xFFFFFFFFu}) | slot;
  }

 protected:
  // An entry is never kEmpty: its slot is never kNoSlot.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr size_t kMinCapacity = 16;

  static uint32_t UpperOf(uint64_t entry) { return static_cast<uint32_t>(entry >> 32); }
  static uint32_t SlotOf(uint64_t entry) { return static_cast<uint32_t>(entry); }
  static uint64_t Pack(uint32_t upper, uint32_t slot) { return (uint64_t{upper} << 32) | slot; }
  // shift_ <= 28 (capacity >= 16), so the shift is defined.
  size_t Home(uint32_t home_bits) const { return size_t{home_bits} >> shift_; }

  void PrefetchHome(uint32_t home_bits) const { __builtin_prefetch(&entries_[Home(home_bits)]); }

  // The position of the first entry in the run from Home(home_bits) for which
  // match(entry) is true, or kNotFound.
  template <typename Match>
  size_t FindEntry(uint32_t home_bits, Match&& match) const {
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(home_bits);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) return kNotFound;
      if (match(entry)) return pos;
    }
  }

  // Like FindEntry, but when nothing matches, stores `new_entry` at the empty
  // position that ends the run and returns {pos, true}; on a match returns
  // {pos, false} and changes nothing.
  // REQUIRES: size() + 1 < capacity() (GrowForOneMore or its staggered
  // form first);
  // new_entry is not kEmpty and lies in the run from Home(home_bits).
  template <typename Match>
  std::pair<size_t, bool> FindOrClaim(uint32_t home_bits, uint64_t new_entry, Match&& match) {
    const size_t mask = entries_.size() - 1;
    for (size_t pos = Home(home_bits);; pos = (pos + 1) & mask) {
      const uint64_t entry = entries_[pos];
      if (entry == kEmpty) {
        entries_[pos] = new_entry;
        ++size_;
        return {pos, true};
      }
      if (match(entry)) return {pos, false};
    }
  }

  // Removes the entry at `pos` by backward-shift deletion (Knuth, TAOCP vol.
  // 3, 6.4 Algorithm R): no tombstones, so probe lengths stay those of a
  // table that never saw the removed key. Calls home_bits_of on the entries
  // that follow it in its run.
  template <typename HomeBitsOf>
  void EraseAt(size_t pos, HomeBitsOf&& home_bits_of) {
    const size_t mask = entries_.size() - 1;
    size_t hole = pos;
    for (size_t next = (hole + 1) & mask;; next = (next + 1) & mask) {
      const uint64_t entry = entries_[next];
      if (entry == kEmpty) break;
      const size_t home = Home(home_bits_of(entry));
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
  template <typename HomeBitsOf>
  void Reserve(size_t num_entries, HomeBitsOf&& home_bits_of) {
    size_t capacity = entries_.size();
    while (num_entries * 2 > capacity) capacity *= 2;
    if (capacity != entries_.size()) Grow(capacity, home_bits_of);
  }

  // Makes room for one more entry (Reserve(size() + 1), without its loop).
  template <typename HomeBitsOf>
  void GrowForOneMore(HomeBitsOf&& home_bits_of) {
    if ((size_ + 1) * 2 > entries_.size()) Grow(entries_.size() * 2, home_bits_of);
  }

  // Below this capacity (32 KiB) a growth costs little: left at load 1/2.
  static constexpr size_t kStaggerMinCapacity = size_t{1} << 12;

  // GrowForOneMore for tables that fill together (session 17): from
  // kStaggerMinCapacity entries on, doubles only when one more entry would
  // pass a load of 1/2 + step / (16 steps) (step < steps), not 1/2. A
  // caller that fills many tables at once gives each a different step, so
  // that they grow at different inserts (ShardedBandTable::
  // FindOrInsertStaggered). Later, not earlier, than 1/2: no table is ever
  // bigger than it would be without the stagger; a table between 1/2 and
  // 9/16 full probes a little longer (a miss ~3.1 entries expected, 2.5 at
  // 1/2).
  // REQUIRES: step < steps < 2^35 (ShardedBandTable's steps = 8 num_bands
  // < 2^34 for any int num_bands). The test has no product of size_ and
  // steps: capacity / 16 (exact from kStaggerMinCapacity on, at most 2^28)
  // times step stays below 2^63, and with x = capacity step / (16 steps),
  // size_ + 1 > capacity / 2 + floor(x) iff size_ + 1 > capacity / 2 + x.
  template <typename HomeBitsOf>
  void GrowForOneMoreStaggered(size_t step, size_t steps, HomeBitsOf&& home_bits_of) {
    NEARDUP_DCHECK(step < steps);
    const size_t capacity = entries_.size();
    if (capacity < kStaggerMinCapacity) {
      GrowForOneMore(home_bits_of);
    } else if (size_ + 1 > capacity / 2 + capacity / 16 * step / steps) {
      Grow(capacity * 2, home_bits_of);
    }
  }

  // Invariant: entries_.size() is a power of two >= kMinCapacity and
  // >= 2 * size_ (> 16/9 size_ after GrowForOneMoreStaggered); every entry
  // lies in the unbroken run starting at its home.
  HugePageVector<uint64_t> entries_;
  size_t size_ = 0;
  int shift_;  // 32 - log2(capacity): home = home bits >> shift_

 private:
  // Reinserts every entry at its home. Out of line: it runs once per doubling,
  // and inlined into the insert loops (GrowForOneMore) it made them bigger
  // and InsertBulk measurably slower.
  template <typename HomeBitsOf>
  [[gnu::noinline]] void Grow(size_t new_capacity, HomeBitsOf&& home_bits_of) {
    NEARDUP_CHECK(new_capacity <= (size_t{1} << 32))
        << "LinearProbeTable capacity " << new_capacity;
    HugePageVector<uint64_t> old(new_capacity, kEmpty);
    old.swap(entries_);
    shift_ = 32 - std::countr_zero(new_capacity);
    const size_t mask = new_capacity - 1;
    for (uint64_t entry : old) {
      if (entry == kEmpty) continue;
      size_t pos = Home(home_bits_of(entry));
      while (entries_[pos] != kEmpty) pos = (pos + 1) & mask;
      entries_[pos] = entry;
    }
  }
};

// What ShardedSlotTable and ShardedBandTable share (session 12): 8 shards
// of a table type and positions that name their shard.
// Invariant: every entry of shard s has ShardOf(its key) == s (each class
// defines ShardOf on its key); a position is (s << 32) | pos with pos < 2^32,
// and kNotFound stays kNotFound.
inline constexpr int kLshShardBits = 3;

template <typename Shard>
class LshShards {
 public:
  static constexpr int kShardBits = kLshShardBits;
  static constexpr size_t kNumShards = size_t{1} << kShardBits;

  Shard& operator[](size_t s) { return shards_[s]; }
  const Shard& operator[](size_t s) const { return shards_[s]; }
  auto begin() { return shards_.begin(); }
  auto end() { return shards_.end(); }
  auto begin() const { return shards_.begin(); }
  auto end() const { return shards_.end(); }

  size_t TotalSize() const {
    size_t total = 0;
    for (const Shard& shard : shards_) total += shard.size();
    return total;
  }
  size_t TotalCapacity() const {
    size_t total = 0;
    for (const Shard& shard : shards_) total += shard.capacity();
    return total;
  }
  size_t TotalMemoryBytes() const {
    size_t total = 0;
    for (const Shard& shard : shards_) total += shard.MemoryBytes();
    return total;
  }

  static size_t Position(size_t shard, size_t pos) {
    return pos == Shard::kNotFound ? Shard::kNotFound : (shard << 32) | pos;
  }
  static size_t ShardOfPosition(size_t pos) { return pos >> 32; }
  static size_t InShardPosition(size_t pos) { return pos & 0xFFFFFFFFu; }

  // What Reserve gives each shard for `num_entries` entries spread by their
  // hashes: its share plus four standard deviations and 16, so that inserting
  // that many grows no shard unless the hashes are far from uniform.
  static size_t ReserveShare(size_t num_entries) {
    const size_t share = num_entries / kNumShards;
    const auto slack = static_cast<size_t>(4 * std::sqrt(static_cast<double>(share))) + 16;
    return std::min(num_entries, share + slack);
  }

 private:
  std::array<Shard, kNumShards> shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_PROBE_TABLE_H_
