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
    const size_t pos = shard.Find(hash, id);
    return pos == kNotFound ? nullptr : &shard.entries[pos].seq;
  }

  // False (and nothing changed) when `id` is present. Throws bad_alloc
  // with the ids unchanged (a grown table holds the same ids).
  bool Insert(std::string_view id, uint64_t seq) { return InsertHashed(id, HashOf(id), seq); }
  // REQUIRES: hash == Hash(id).
  bool InsertHashed(std::string_view id, uint64_t hash, uint64_t seq) {
    NEARDUP_DCHECK(hash == HashOf(id));
    Shard& shard = shards_[ShardOf(hash)];
    if (shard.Find(hash, id) != kNotFound) return false;
    if ((shard.size + 1) * 4 > shard.entries.size() * 3) shard.Grow();
    Entry& entry = shard.entries[shard.EmptyPositionFor(hash)];
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
    const size_t pos = shard.Find(hash, id);
    if (pos == kNotFound) return false;
    shard.EraseAt(pos);
    return true;
  }

  size_t size() const {
    size_t n = 0;
    for (const Shard& shard : shards_) n += shard.size;
    return n;
  }

  // Tests only: the longest run of adjacent occupied entries in any table
  // (the most entries a lookup can probe), to show that ids chosen to
  // collide under one key pile up under it and not under another.
  size_t LongestRunForTest() const {
    size_t longest = 0;
    for (const Shard& shard : shards_) {
      const size_t n = shard.entries.size();
      if (n == 0) continue;
      size_t start = 0;  // an empty entry, so that no run wraps past it
      while (start < n && shard.entries[start].hash != 0) ++start;
      if (start == n) return n;  // (never: a table is at most 3/4 full)
      size_t run = 0;
      for (size_t i = 1; i <= n; ++i) {
        run = shard.entries[(start + i) % n].hash != 0 ? run + 1 : 0;
        longest = std::max(longest, run);
      }
    }
    return longest;
  }

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
    size_t size = 0;

    size_t Mask() const { return entries.size() - 1; }

    size_t Find(uint64_t hash, std::string_view id) const {
      if (entries.empty()) return kNotFound;
      const size_t mask = Mask();
      for (size_t pos = hash & mask;; pos = (pos + 1) & mask) {
        const Entry& entry = entries[pos];
        if (entry.hash == 0) return kNotFound;
        if (entry.hash == hash && entry.id == id) return pos;
      }
    }

    // REQUIRES: an empty entry exists.
    size_t EmptyPositionFor(uint64_t hash) const {
      const size_t mask = Mask();
      size_t pos = hash & mask;
      while (entries[pos].hash != 0) pos = (pos + 1) & mask;
      return pos;
    }

    // Doubles the entries (kMinEntries at first), moving every id.
    void Grow() {
      std::vector<Entry> old = std::exchange(
          entries, std::vector<Entry>(entries.empty() ? kMinEntries : 2 * entries.size()));
      for (Entry& entry : old) {
        if (entry.hash != 0) entries[EmptyPositionFor(entry.hash)] = std::move(entry);
      }
    }

    // Backward-shift deletion: each later entry of the run that may move
    // into the hole (its home is not cyclically in (hole, its position])
    // does, so that every entry stays reachable from its home.
    void EraseAt(size_t hole) {
      const size_t mask = Mask();
      for (size_t pos = (hole + 1) & mask; entries[pos].hash != 0; pos = (pos + 1) & mask) {
        const size_t home = entries[pos].hash & mask;
        if (((pos - home) & mask) >= ((pos - hole) & mask)) {
          entries[hole] = std::move(entries[pos]);
          hole = pos;
        }
      }
      entries[hole].hash = 0;
      entries[hole].id.clear();
      entries[hole].id.shrink_to_fit();
      --size;
    }
  };

  SipKey key_;
  std::array<Shard, size_t{1} << kShardBits> shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_ID_INDEX_H_
