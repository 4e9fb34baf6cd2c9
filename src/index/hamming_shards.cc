// HammingShards: the self-join of one key-prefix shard of every permuted
// table (see hamming_shards.h). Unlike a HammingIndex it keeps no directory
// and no table beyond the join: each table's slice is permuted, sorted,
// joined within runs of equal leading blocks and freed.
#include <algorithm>
#include <atomic>
#include <string>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "index/hamming_cpu.h"
#include "index/hamming_join.h"
#include "index/hamming_layout.h"
#include "index/hamming_run.h"
#include "neardup/check.h"
#include "neardup/hamming_shards.h"

namespace neardup {
namespace {

using internal::FpPair;
using internal::HammingLayout;
using internal::HammingTable;
using internal::MakePair;

// The key prefix's width: the table's leading blocks, 32 bits at most (so
// that prefix * num_shards fits 64 bits).
int KeyBits(const HammingTable& table) { return std::min(table.prefix_bits, 32); }

uint64_t ShardOfPermuted(uint64_t permuted, int key_bits, uint64_t num_shards) {
  return ((permuted >> (64 - key_bits)) * num_shards) >> key_bits;
}

// The shard's slice of table `t` over the distinct fingerprints `fps`,
// sorted; appends its canonical pairs to `out`, adds the slice's size to
// `table_values` and returns the number of value pairs compared.
NEARDUP_POPCNT_CLONES
uint64_t JoinTableSlice(const HammingLayout& layout, int t, std::span<const uint64_t> fps,
                        uint64_t shard, uint64_t num_shards, std::atomic<uint64_t>* table_values,
                        std::vector<FpPair>* out) {
  const HammingTable& table = layout.table(t);
  const int key_bits = KeyBits(table);
  std::vector<uint64_t> values;
  for (uint64_t fp : fps) {
    const uint64_t value = table.forward.Apply(fp);
    if (ShardOfPermuted(value, key_bits, num_shards) == shard) values.push_back(value);
  }
  std::sort(values.begin(), values.end());
  *table_values += values.size();
  return internal::JoinSortedRuns(table, layout.max_distance(), values, 0, values.size(),
                                  [&](uint64_t a, uint64_t b, int distance) {
                                    out->push_back({a, b, distance});
                                  });
}

}  // namespace

HammingShards::HammingShards(std::unique_ptr<internal::HammingLayout> layout,
                             const HammingIndexOptions& options, uint64_t num_shards)
    : layout_(std::move(layout)), options_(options), num_shards_(num_shards) {}
HammingShards::HammingShards(HammingShards&& other) noexcept = default;
HammingShards& HammingShards::operator=(HammingShards&& other) noexcept = default;
HammingShards::~HammingShards() = default;

Result<HammingShards> HammingShards::Create(const HammingIndexOptions& options,
                                            uint64_t num_shards) {
  NEARDUP_RETURN_IF_ERROR(ValidateHammingIndexOptions(options));
  if (num_shards == 0 || num_shards > (uint64_t{1} << 32)) {
    return InvalidArgumentError("num_shards (" + std::to_string(num_shards) +
                                ") must be in [1, 2^32]");
  }
  return HammingShards(std::make_unique<HammingLayout>(options), options, num_shards);
}

const HammingIndexOptions& HammingShards::options() const { return options_; }

uint64_t HammingShards::num_tables() const { return static_cast<uint64_t>(layout_->num_tables()); }

uint64_t HammingShards::ShardOfTable(int table, uint64_t fingerprint) const {
  NEARDUP_DCHECK(table >= 0 && table < layout_->num_tables());
  const HammingTable& t = layout_->table(table);
  return ShardOfPermuted(t.forward.Apply(fingerprint), KeyBits(t), num_shards_);
}

Result<uint64_t> HammingShards::ShardOf(uint64_t table, uint64_t fingerprint) const {
  if (table >= num_tables()) {
    return InvalidArgumentError("table (" + std::to_string(table) + ") must be below num_tables (" +
                                std::to_string(num_tables()) + ")");
  }
  return ShardOfTable(static_cast<int>(table), fingerprint);
}

void HammingShards::ShardsOf(uint64_t fingerprint, std::vector<uint64_t>* shards) const {
  shards->clear();
  for (int t = 0; t < layout_->num_tables(); ++t) shards->push_back(ShardOfTable(t, fingerprint));
  std::sort(shards->begin(), shards->end());
  shards->erase(std::unique(shards->begin(), shards->end()), shards->end());
}

Result<std::vector<HammingPair>> HammingShards::SelfJoin(std::span<const HammingEntry> entries,
                                                         uint64_t shard,
                                                         HammingShardJoinStats* stats) const {
  if (shard >= num_shards_) {
    return InvalidArgumentError("shard " + std::to_string(shard) + " must be below num_shards (" +
                                std::to_string(num_shards_) + ")");
  }
  if (entries.size() > kMaxHammingEntries) {
    return ResourceExhaustedError("a shard holds at most " + std::to_string(kMaxHammingEntries) +
                                  " entries; given " + std::to_string(entries.size()));
  }
  // Sorted by (fingerprint, id), unique: the ids of fingerprint fps[i] are
  // sorted[id_begin[i], id_begin[i + 1]).
  std::vector<HammingEntry> sorted;
  internal::SortEntries(entries, &sorted);
  std::vector<uint64_t> fps;
  std::vector<uint32_t> id_begin;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0 || sorted[i].fingerprint != sorted[i - 1].fingerprint) {
      fps.push_back(sorted[i].fingerprint);
      id_begin.push_back(static_cast<uint32_t>(i));
    }
  }
  id_begin.push_back(static_cast<uint32_t>(sorted.size()));

  const int num_tables = layout_->num_tables();
  std::vector<std::vector<FpPair>> found(static_cast<size_t>(num_tables));
  std::atomic<uint64_t> compared{0};
  std::atomic<uint64_t> table_values{0};  // the slices' values, all tables
  tbb::parallel_for(0, num_tables, [&](int t) {
    compared += JoinTableSlice(*layout_, t, fps, shard, num_shards_, &table_values,
                               &found[static_cast<size_t>(t)]);
  });

  std::vector<HammingPair> pairs;
  // Entries sharing a fingerprint: distance 0, in no table's join. Every
  // shard of ShardsOf(fp) holds all of them (they share their keys), so
  // their pairs are dealt out over those shards, row by row (row i: the i
  // pairs of the fingerprint's i-th id with the ones before it, to
  // owners[i % owners.size()]), not all left to one shard: a fingerprint of
  // c copies has c (c - 1) / 2 pairs (the benchmark corpus: one of ~9,700
  // copies, 47M pairs).
  std::vector<uint64_t> owners;
  for (size_t slot = 0; slot < fps.size(); ++slot) {
    const size_t begin = id_begin[slot];
    const size_t end = id_begin[slot + 1];
    if (end - begin < 2) continue;
    ShardsOf(fps[slot], &owners);
    const auto mine = std::find(owners.begin(), owners.end(), shard);
    if (mine == owners.end()) continue;
    const size_t owner_index = static_cast<size_t>(mine - owners.begin());
    for (size_t i = owner_index == 0 ? owners.size() : owner_index; begin + i < end;
         i += owners.size()) {
      for (size_t p = begin; p < begin + i; ++p) {
        pairs.push_back(MakePair(sorted[p], sorted[begin + i], 0));
      }
    }
  }
  auto slot_of = [&](uint64_t fp) {
    return static_cast<size_t>(std::lower_bound(fps.begin(), fps.end(), fp) - fps.begin());
  };
  for (const std::vector<FpPair>& table_pairs : found) {
    for (const FpPair& fp_pair : table_pairs) {
      const size_t sa = slot_of(fp_pair.a);
      const size_t sb = slot_of(fp_pair.b);
      for (size_t p = id_begin[sa]; p < id_begin[sa + 1]; ++p) {
        for (size_t q = id_begin[sb]; q < id_begin[sb + 1]; ++q) {
          pairs.push_back(MakePair(sorted[p], sorted[q], fp_pair.distance));
        }
      }
    }
  }
  tbb::parallel_sort(pairs.begin(), pairs.end(), internal::PairLess);
  if (stats != nullptr) {
    stats->entries = sorted.size();
    stats->table_values = table_values.load();
    stats->candidates = compared.load();
    stats->bytes = sorted.size() * sizeof(HammingEntry) + fps.size() * sizeof(uint64_t) +
                   id_begin.size() * sizeof(uint32_t) + stats->table_values * sizeof(uint64_t);
  }
  return pairs;
}

}  // namespace neardup
