// HammingRun: one immutable, sorted batch of entries with its permuted tables
// (private to the index module). A HammingIndex is a few runs of
// geometrically decreasing size plus a small unsorted buffer; runs are merged
// linearly (never re-sorted) and carry tombstones until compacted.
#ifndef NEARDUP_INDEX_HAMMING_RUN_H_
#define NEARDUP_INDEX_HAMMING_RUN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "index/hamming_layout.h"
#include "neardup/hamming_index.h"

namespace neardup::internal {

// Views of a run's arrays (owned vectors or a mapped file).
// Invariant (for runs this library built): fps is sorted and unique;
// id_begin has fps.size() + 1 non-decreasing entries ending at ids.size();
// the ids of each fingerprint are sorted and unique; tables[t] holds
// table(t).forward(fp) for every fp, sorted; tables[0] is fps (identity
// permutation); dirs[t][h] is the first slot of tables[t] whose top
// dir_bits[t] bits are >= h, and dirs[t] has 2^dir_bits[t] + 1 entries. A
// mapped file may break any of these but the sizes: readers clamp every index
// they take from the data, so a corrupt body gives wrong answers, never an
// out-of-bounds read.
struct RunArrays {
  std::span<const uint64_t> fps;
  std::span<const uint32_t> id_begin;
  std::span<const uint64_t> ids;
  std::vector<std::span<const uint64_t>> tables;
  std::vector<std::span<const uint32_t>> dirs;
  std::vector<int> dir_bits;
};

// Directory bits for a run of `num_fps` fingerprints: ~4-8 per bucket.
int RunDirectoryBits(size_t num_fps);

// min(run_bits, prefix bits of table t): a bucket then always holds every
// entry that shares the table's leading blocks.
inline int TableDirectoryBits(const HammingLayout& layout, int run_bits, int t) {
  return run_bits < layout.table(t).prefix_bits ? run_bits : layout.table(t).prefix_bits;
}

// Bytes of the directory of one table.
inline size_t DirectoryEntries(int bits) { return (size_t{1} << bits) + 1; }

struct ScanHit {
  uint64_t fingerprint;
  int distance;
};

// A hit of ScanBatch: queries[query] is within `distance` of `fingerprint`.
struct BatchHit {
  uint32_t query;
  int distance;
  uint64_t fingerprint;
};

// Queries ScanBatch takes at once: enough independent probes in flight to
// hide memory latency, few enough that their state stays in L1.
inline constexpr size_t kScanBatch = 16;

class HammingRun {
 public:
  // REQUIRES: `entries` sorted and unique, size <= kMaxHammingEntries.
  static std::unique_ptr<HammingRun> FromSortedEntries(const HammingLayout& layout,
                                                       std::span<const HammingEntry> entries);
  // A run over arrays whose memory `backing` keeps alive.
  static std::unique_ptr<HammingRun> FromArrays(RunArrays arrays,
                                                std::shared_ptr<const void> backing);
  // The live entries of `a` and `b` as one run (tombstones dropped).
  // REQUIRES: no entry is live in both.
  static std::unique_ptr<HammingRun> Merge(const HammingLayout& layout, const HammingRun& a,
                                           const HammingRun* b);

  const RunArrays& arrays() const { return arrays_; }
  size_t num_fps() const { return arrays_.fps.size(); }
  size_t num_ids() const { return arrays_.ids.size(); }
  size_t num_dead() const { return num_dead_; }
  size_t num_live() const { return num_ids() - num_dead_; }
  size_t MemoryBytes() const;

  // The slot of `fingerprint` in fps, or nullopt.
  std::optional<size_t> FindFingerprint(uint64_t fingerprint) const;
  // The position of `entry` in ids (live or dead), or nullopt.
  std::optional<size_t> FindEntry(HammingEntry entry) const;
  // [begin, end) in ids of the fingerprint at `slot`, clamped to ids.
  std::pair<size_t, size_t> IdRange(size_t slot) const;

  bool IsDead(size_t pos) const {
    return !dead_.empty() && ((dead_[pos / 64] >> (pos % 64)) & 1) != 0;
  }
  void MarkDead(size_t pos);
  void Revive(size_t pos);

  // Appends every fingerprint within max_distance of `query`, each once.
  void Scan(const HammingLayout& layout, uint64_t query, std::vector<ScanHit>* hits) const;
  // The same for up to kScanBatch queries at once, with the directory and
  // table reads of all of them prefetched before any is used.
  void ScanBatch(const HammingLayout& layout, std::span<const uint64_t> queries,
                 std::vector<BatchHit>* hits) const;

 private:
  RunArrays arrays_;
  std::shared_ptr<const void> backing_;
  std::vector<uint64_t> dead_;  // tombstone bits over ids, empty while none
  size_t num_dead_ = 0;
};

// `in` sorted and without duplicates (a counting sort on the top bits, then
// small sorts: linear for hashed fingerprints).
void SortEntries(std::span<const HammingEntry> in, std::vector<HammingEntry>* out);

// Builds the directory of a sorted table.
void BuildDirectory(std::span<const uint64_t> table, int bits, std::vector<uint32_t>* dir);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_HAMMING_RUN_H_
