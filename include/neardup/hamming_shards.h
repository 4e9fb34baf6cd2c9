// HammingShards: key-prefix shards of every permuted table of a HammingIndex
// layout (see hamming_index.h), so that a self-join can be spread over
// `num_shards` workers (neardup-mpi's ranks) with its pairs spread too.
//
// Table t's values (the fingerprint permuted so that its chosen blocks lead)
// are cut by their key prefix, the table's leading blocks (their top 32 bits
// when longer), into num_shards ranges of equal width: shard s holds the
// values whose prefix p (of b bits) has floor(p * num_shards / 2^b) == s.
//
// Invariant: fingerprints that agree on a table's leading blocks fall in one
// shard of it, and a pair within max_distance is reported only from its
// canonical table (hamming_index.h's pigeonhole argument), so each pair
// belongs to exactly one shard: the one holding its key in its canonical
// table. Entries of one fingerprint (pairs at distance 0) share all their
// keys, so every shard of ShardsOf(fp) holds them all: their pairs are dealt
// out over those shards, row by row (the i-th id's pairs with the ids before
// it to the (i mod |ShardsOf(fp)|)-th of them), so that a fingerprint of many
// copies does not put all its pairs on one shard. When num_shards exceeds 2^b
// some shards of the table hold no value (never wrong, only idle).
//
// A worker gives SelfJoin every entry whose fingerprint lies in its shard in
// some table (ShardsOf), and gets the pairs whose shard is its own; the
// shards' pairs together are HammingIndex::SelfJoin() of all the entries,
// each once.
//
// How far it spreads: a table's key leads with its first chosen block, one of
// blocks 0..k (k = max_distance), and for num_shards a power of two up to
// 2^(that block's bits) the shard depends on that block alone, so ShardsOf
// has at most k + 1 shards whatever the number of tables (a few more for
// other shard counts: 4.7 on average at k = 3 and 1,000 shards;
// bench/simhash_shard_model.py). A worker thus receives about (k + 1) /
// num_shards of the fingerprints when num_shards >> k + 1 (15/16 of them at 2
// shards), and the copies of one fingerprint are dealt over at most ~k + 1
// shards, however many there are.
//
// Cost (E = entries given to SelfJoin, U = their distinct fingerprints, T =
// tables): ShardsOf O(T). SelfJoin sorts the entries (a copy, 16 bytes an
// entry, plus a transient radix-sort scratch of 16 bytes an entry), keeps the
// distinct fingerprints and their id offsets (12 bytes each), then per table
// (a table per thread, in parallel) permutes the U fingerprints, keeps its
// slice (8 bytes a value, ~1/num_shards of the table), sorts and joins it
// within runs of equal leading blocks, and frees it: O(T U log U) time, and no
// directory or whole-table index (a HammingIndex holds ~13 bytes an entry in
// every table).
//
// Thread safety: const methods may run concurrently with each other; a move
// needs exclusive access. SelfJoin uses all cores through oneTBB.
#ifndef NEARDUP_HAMMING_SHARDS_H_
#define NEARDUP_HAMMING_SHARDS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "neardup/hamming_index.h"
#include "neardup/status.h"

namespace neardup {

namespace internal {
class HammingLayout;
}  // namespace internal

// What one shard's HammingShards::SelfJoin held and compared.
struct HammingShardJoinStats {
  uint64_t entries = 0;       // distinct (fingerprint, id) entries given
  uint64_t table_values = 0;  // the shard's values summed over the tables
  uint64_t candidates = 0;    // pairs of values compared (equal leading blocks)
  // The sorted entries, the distinct fingerprints and their id offsets, plus
  // every table's slice summed (the slices are built a table per thread and
  // each freed after its join, so fewer are alive at once). Not counted: the
  // caller's entries, the sort's transient scratch (16 bytes an entry) and
  // the pairs.
  uint64_t bytes = 0;
};

class HammingShards {
 public:
  // InvalidArgument if the options are invalid or num_shards is 0 or above
  // 2^32.
  static Result<HammingShards> Create(const HammingIndexOptions& options, uint64_t num_shards);

  HammingShards(HammingShards&& other) noexcept;
  HammingShards& operator=(HammingShards&& other) noexcept;
  ~HammingShards();

  const HammingIndexOptions& options() const;
  uint64_t num_tables() const;
  uint64_t num_shards() const { return num_shards_; }

  // The shard holding `fingerprint` in table `table`. InvalidArgument unless
  // table < num_tables().
  Result<uint64_t> ShardOf(uint64_t table, uint64_t fingerprint) const;
  // The distinct shards holding `fingerprint` in some table, ascending
  // (replaces *shards).
  void ShardsOf(uint64_t fingerprint, std::vector<uint64_t>* shards) const;

  // The pairs of `entries` (duplicates count once) within max_distance whose
  // canonical table holds them in shard `shard`, in SelfJoin's order and
  // form. InvalidArgument unless shard < num_shards(); ResourceExhausted
  // past kMaxHammingEntries.
  Result<std::vector<HammingPair>> SelfJoin(std::span<const HammingEntry> entries, uint64_t shard,
                                            HammingShardJoinStats* stats = nullptr) const;

 private:
  HammingShards(std::unique_ptr<internal::HammingLayout> layout, const HammingIndexOptions& options,
                uint64_t num_shards);
  // ShardOf without the check (ShardsOf's loop). REQUIRES: 0 <= table <
  // num_tables().
  uint64_t ShardOfTable(int table, uint64_t fingerprint) const;

  std::unique_ptr<internal::HammingLayout> layout_;
  HammingIndexOptions options_;
  uint64_t num_shards_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_HAMMING_SHARDS_H_
