// StreamIdIndex: a stream's document ids -> arrival numbers (seq), as 64
// hash tables chosen by the id's hash rather than one.
//
// Why: a std::unordered_map rehashes (relinks every node, a cache miss each)
// when it outgrows its buckets, inside the add that crosses the threshold,
// under the stream's writer lock: one table of every id paused an add ~10 ms
// at 42k ids, and the pause grows with the window. 64 tables of 1/64 of the
// ids each cross their thresholds at different adds (their sizes differ by
// chance), so one add rehashes at most about 1/64 of the ids.
// Cost: the id is hashed twice per call (once to choose the table, once by
// the table: std::unordered_map takes no precomputed hash); lookups by
// string_view, without building a std::string. Memory: a node
// per id (id, seq, cached hash, next pointer) plus the buckets, as one map.
// Thread safety: none; the stream serialises access.
#ifndef NEARDUP_STREAM_STREAM_ID_INDEX_H_
#define NEARDUP_STREAM_STREAM_ID_INDEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace neardup::internal {

class StreamIdIndex {
 public:
  // The seq of `id`, or null.
  const uint64_t* Find(std::string_view id) const {
    const size_t hash = Hash{}(id);
    const Map& shard = shards_[ShardOf(hash)];
    auto it = shard.find(id);
    return it == shard.end() ? nullptr : &it->second;
  }

  // False (and nothing changed) when `id` is present.
  bool Insert(const std::string& id, uint64_t seq) {
    return shards_[ShardOf(Hash{}(id))].emplace(id, seq).second;
  }

  // False when `id` is absent.
  bool Erase(std::string_view id) {
    Map& shard = shards_[ShardOf(Hash{}(id))];
    auto it = shard.find(id);
    if (it == shard.end()) return false;
    shard.erase(it);
    return true;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  using Map = std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>>;
  static constexpr int kShardBits = 6;
  // The top bits choose the table; the table's buckets use the hash modulo
  // a prime, so the two are not correlated.
  static size_t ShardOf(size_t hash) { return hash >> (8 * sizeof(size_t) - kShardBits); }

  std::array<Map, size_t{1} << kShardBits> shards_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_ID_INDEX_H_
