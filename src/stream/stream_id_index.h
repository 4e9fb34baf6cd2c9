// StreamIdIndex: a stream's document ids -> arrival numbers (seq), as 64
// open-addressing hash tables chosen by the id's hash rather than one.
//
// Why 64 tables: a table rehashes when it outgrows its capacity, inside the
// add that crosses the threshold, under the stream's writer lock: one table
// of every id paused an add ~10 ms at 42k ids (session 9), and the pause
// grows with the window. 64 tables of 1/64 of the ids each cross their
// thresholds at different adds (their sizes differ by chance), so one add
// rehashes at most about 1/64 of the ids.
// Why open addressing (session 11): as 64 std::unordered_maps the lookups
// were 4.5% and the rehashes 1.8% of a 100-document POST's CPU (a bucket,
// then a node per probe, each a cache miss; every new document is looked up
// twice). Here an entry holds the id's full hash, its seq and the id itself
// (ids up to 15 bytes inside the entry: std::string's own buffer), so a
// lookup reads one run of adjacent entries and compares an id only on an
// equal 64-bit hash. Linear probing, at most 3/4 full, deletion by backward
// shift (no tombstones: a window that turns over for ever keeps its
// high-water size). Memory: a 48-byte entry per id at 3/8 to 3/4 full
// (64-128 bytes an id), plus an id's heap buffer past 15 bytes.
// Why a keyed hash (session 12): ids are chosen by clients. With an
// unkeyed hash (std::hash) a client could compute ids that all fall in one
// table, next to each other, and make every add probe a run as long as the
// window (hash flooding). SipHash-1-3 under a key drawn once per process
// (hash/siphash.h) cannot be steered without the key. The key never leaves
// the process: nothing here is iterated or stored, so what a snapshot or
// the write-ahead log holds, and what a restart rebuilds from them, does
// not depend on it. Cost: bench/stream_id_index_bench.cc.
// Why incremental growth (session 21): at a million ids a table's
// doubling still moved ~12,000 entries at one add (~0.5-1 ms on the loaded
// VM). From kMinIncrementalEntries on, a growth allocates the doubled table
// and the inserts after it move the old table's entries, those of
// kMovePositionsPerInsert positions each (as the LSH index's tables,
// src/index/lsh_probe_table.h "Incremental growth"); lookups and erases
// consult both tables until the old one is empty.
// Thread safety: none; the stream serialises access.
#ifndef NEARDUP_STREAM_STREAM_ID_INDEX_H_
#define NEARDUP_STREAM_STREAM_ID_INDEX_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hash/siphash.h"
#include "neardup/check.h"

namespace neardup::internal {

class StreamIdIndex {
  struct Entry {
    uint64_t hash = 0;  // 0: an empty entry (HashOf never returns 0)
    uint64_t seq = 0;
    std::string id;
  };

 public:
  // The estimate of memory per id StreamState reports (an entry at 9/16
  // full, the middle of the load range).
  static constexpr uint64_t kBytesPerId = sizeof(Entry) * 16 / 9;

  // Hashes ids under the process's key (ProcessSipKey).
  StreamIdIndex() : StreamIdIndex(ProcessSipKey()) {}
  // Under `key` (tests: two keys, the same answers).
  explicit StreamIdIndex(const SipKey& key) : key_(key) {}

  // The hash that places `id` (under this index's key): the *Hashed calls
  // take it, so that a caller that looks an id up and then inserts it (a
  // stream's add: present? then stored) hashes it once (session 13).
  uint64_t Hash(std::string_view id) const { return HashOf(id); }

  // The seq of `id`, or null (valid until the next Insert or Erase).
  const uint64_t* Find(std::string_view id) const { return FindHashed(id, HashOf(id)); }
  // REQUIRES: hash == Hash(id).
  const uint64_t* FindHashed(std::string_view id, uint64_t hash) const {
    NEARDUP_DCHECK(hash == HashOf(id));
    const Shard& shard = shards_[ShardOf(hash)];
    size_t pos = Shard::Find(shard.entries, hash, id);
    if (pos != kNotFound) return &shard.entries[pos].seq;
    if (shard.old.empty()) return nullptr;
    pos = Shard::Find(shard.old, hash, id);
    return pos == kNotFound ? nullptr : &shard.old[pos].seq;
  }

  // False (and nothing changed) when `id` is present. Throws bad_alloc
  // with the ids unchanged (a grown table holds the same ids).
  bool Insert(std::string_view id, uint64_t seq) { return InsertHashed(id, HashOf(id), seq); }
  // REQUIRES: hash == Hash(id).
  bool InsertHashed(std::string_view id, uint64_t hash, uint64_t seq) {
    NEARDUP_DCHECK(hash == HashOf(id));
    Shard& shard = shards_[ShardOf(hash)];
    if (Shard::Find(shard.entries, hash, id) != kNotFound) return false;
    if (!shard.old.empty()) [[unlikely]] {
      if (Shard::Find(shard.old, hash, id) != kNotFound) return false;
      shard.MoveSome(kMovePositionsPerInsert);
    }
    if ((shard.size + 1) * 4 > shard.entries.size() * 3) shard.Grow();
    Entry& entry = shard.entries[Shard::EmptyPositionFor(shard.entries, hash)];
    entry.id.assign(id);  // first: the entry stays empty if this throws
    entry.hash = hash;
    entry.seq = seq;
    ++shard.size;
    return true;
  }

  // False when `id` is absent.
  bool Erase(std::string_view id) {
    const uint64_t hash = HashOf(id);
    Shard& shard = shards_[ShardOf(hash)];
    size_t pos = Shard::Find(shard.entries, hash, id);
    if (pos != kNotFound) {
      Shard::EraseAt(shard.entries, pos);
    } else {
      if (shard.old.empty()) return false;
      pos = Shard::Find(shard.old, hash, id);
      if (pos == kNotFound) return false;
      Shard::EraseAt(shard.old, pos);
    }
    --shard.size;
    return true;
  }

  size_t size() const {
    size_t n = 0;
    for (const Shard& shard : shards_) n += shard.size;
    return n;
  }

  // Tests only: how many tables are between the two halves of a growth
  // (the doubled table allocated, entries still being moved into it).
  size_t GrowthsInProgressForTest() const {
    size_t n = 0;
    for (const Shard& shard : shards_) n += shard.old.empty() ? 0 : 1;
    return n;
  }

  // Tests only: the longest run of adjacent occupied entries in any table
  // (the most entries a lookup can probe), to show that ids chosen to
  // collide under one key pile up under it and not under another.
  size_t LongestRunForTest() const {
    size_t longest = 0;
    for (const Shard& shard : shards_) {
      for (const std::vector<Entry>* table : {&shard.entries, &shard.old}) {
        const size_t n = table->size();
        if (n == 0) continue;
        size_t start = 0;  // an empty entry, so that no run wraps past it
        while (start < n && (*table)[start].hash != 0) ++start;
        if (start == n) return n;  // (never: a table is at most 3/4 full)
        size_t run = 0;
        for (size_t i = 1; i <= n; ++i) {
          run = (*table)[(start + i) % n].hash != 0 ? run + 1 : 0;
          longest = std::max(longest, run);
        }
      }
    }
    return longest;
  }

  // From this many entries on, a table's growth moves its entries a few per
  // insert (below, a growth moves at most 384 entries, a few us).
  static constexpr size_t kMinIncrementalEntries = 512;
  // The old table's positions each insert into a growing table scans; the
  // growth ends within capacity / 32 of its inserts (capacity: the new
  // table's), long before the next one (3/8 capacity inserts later).
  static constexpr size_t kMovePositionsPerInsert = 16;

 private:
  static constexpr size_t kNotFound = static_cast<size_t>(-1);
  static constexpr int kShardBits = 6;
  static constexpr size_t kMinEntries = 16;

  uint64_t HashOf(std::string_view id) const {
    const uint64_t hash = SipHash13(key_, id);
    return hash == 0 ? 1 : hash;
  }
  // The top bits choose the table, the low bits the home position in it.
  static size_t ShardOf(uint64_t hash) { return hash >> (64 - kShardBits); }

  struct Shard {
    std::vector<Entry> entries;  // a power of two of them, or none
    size_t size = 0;             // ids in entries and old
    // While a growth moves entries: the table before it, half the size of
    // `entries`; empty otherwise. Invariant (as LinearProbeTable's, src/
    // index/lsh_probe_table.h): a key is in at most one of the two tables;
    // old[move_start] is empty, and so are the move_scanned positions after
    // it, the last of which (when any) was empty before the scan moved
    // anything, so every run of `old` lies in the positions not yet
    // scanned; no insert goes to `old`.
    std::vector<Entry> old;
    size_t move_start = 0;
    size_t move_scanned = 0;

    static size_t Find(const std::vector<Entry>& table, uint64_t hash, std::string_view id) {
      if (table.empty()) return kNotFound;
      const size_t mask = table.size() - 1;
      for (size_t pos = hash & mask;; pos = (pos + 1) & mask) {
        const Entry& entry = table[pos];
        if (entry.hash == 0) return kNotFound;
        if (entry.hash == hash && entry.id == id) return pos;
      }
    }

    // REQUIRES: an empty entry exists.
    static size_t EmptyPositionFor(const std::vector<Entry>& table, uint64_t hash) {
      const size_t mask = table.size() - 1;
      size_t pos = hash & mask;
      while (table[pos].hash != 0) pos = (pos + 1) & mask;
      return pos;
    }

    // Doubles the entries (kMinEntries at first): whole below
    // kMinIncrementalEntries, else by allocating the doubled table and
    // leaving the entries to MoveSome. Throws bad_alloc with nothing changed.
    void Grow() {
      if (!old.empty()) MoveSome(~size_t{0});  // (ends long before)
      if (entries.size() < kMinIncrementalEntries) {
        std::vector<Entry> previous = std::exchange(
            entries, std::vector<Entry>(entries.empty() ? kMinEntries : 2 * entries.size()));
        for (Entry& entry : previous) {
          if (entry.hash != 0) entries[EmptyPositionFor(entries, entry.hash)] = std::move(entry);
        }
        return;
      }
      std::vector<Entry> doubled(2 * entries.size());
      old.swap(entries);
      entries.swap(doubled);
      size_t start = 0;  // an empty position exists: at most 3/4 full
      while (old[start].hash != 0) ++start;
      move_start = start;
      move_scanned = 0;
    }

    // Scans old positions after move_start + move_scanned, moving the
    // entries found into `entries`, until it has scanned at least
    // `positions` and the last one scanned is empty, or all of `old`,
    // which it then frees. Moves strings, allocates nothing.
    [[gnu::noinline]] void MoveSome(size_t positions) {
      const size_t old_mask = old.size() - 1;
      size_t scanned = 0;
      while (move_scanned < old.size()) {
        Entry& entry = old[(move_start + 1 + move_scanned) & old_mask];
        ++move_scanned;
        ++scanned;
        if (entry.hash == 0) {
          if (scanned >= positions && move_scanned < old.size()) return;
          continue;
        }
        entries[EmptyPositionFor(entries, entry.hash)] = std::move(entry);
        entry.hash = 0;
      }
      std::vector<Entry>().swap(old);
    }

    // Backward-shift deletion: each later entry of the run that may move
    // into the hole (its home is not cyclically in (hole, its position])
    // does, so that every entry stays reachable from its home.
    static void EraseAt(std::vector<Entry>& table, size_t hole) {
      const size_t mask = table.size() - 1;
      for (size_t pos = (hole + 1) & mask; table[pos].hash != 0; pos = (pos + 1) & mask) {
        const size_t home = table[pos].hash & mask;
        if (((pos - home) & mask) >= ((pos - hole) & mask)) {
          table[hole] = std::move(table[pos]);
          hole = pos;
        }
      }
      table[hole].hash = 0;
      table[hole].id.clear();
      table[hole].id.shrink_to_fit();
    }
  };

  SipKey key_;
  std::array<Shard, size_t{1} << kShardBits> shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_ID_INDEX_H_
