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

// One cache line of a table's directory (Manku et al.'s "prefix" lookup made
// direct-mapped): the entries of the table whose top `line_bits` bits equal
// the line's index start at slot `begin`, and `fragment[i]` holds the 16 bits
// just below the line bits of entry begin + i. A probe reads this one line
// and compares the query's fragment with every stored one at once (the
// fragments cover the table's leading blocks, or their first 16 bits beyond
// the line bits), so for a query with no entry under its leading blocks --
// nearly every probe of a random query -- a table costs one cache miss and
// the table values are never touched.
inline constexpr int kLineFragments = 29;
struct alignas(64) HammingLine {
  // Slots past the line's entries repeat the last fragment (zero when the
  // line is empty), so that a line's bytes follow from the table alone.
  uint16_t fragment[kLineFragments];
  // Entries of the line, saturated at kLineFragments + 1: past that, the end
  // is the next line's `begin` and entries past the fragments are compared
  // directly.
  uint16_t count;
  uint32_t begin;
};
static_assert(sizeof(HammingLine) == 64);

// Views of a run's arrays (owned vectors or a mapped file).
// Invariant (for runs this library built): fps is sorted and unique;
// id_begin has fps.size() + 1 non-decreasing entries ending at ids.size();
// the ids of each fingerprint are sorted and unique; tables[t] holds
// table(t).forward(fp) for every fp, sorted; tables[0] is fps (identity
// permutation); lines[t] has 2^line_bits[t] lines as BuildLines makes
// them from tables[t] (line h ends where line h + 1 begins, the last one at
// the end of the table). A run of a partial layout (HammingLayout::Holds)
// leaves tables[t] and lines[t] empty for each table t > 0 it does not hold
// (lines[0] is always built: FindFingerprint reads it). A mapped file may
// break any of these but the sizes: readers clamp every index they take from
// the data, so a corrupt body gives wrong answers, never an out-of-bounds
// read.
struct RunArrays {
  std::span<const uint64_t> fps;
  std::span<const uint32_t> id_begin;
  std::span<const uint64_t> ids;
  std::vector<std::span<const uint64_t>> tables;
  std::vector<std::span<const HammingLine>> lines;
  std::vector<int> line_bits;
};

// Line bits for a run of `num_fps` fingerprints: the fewest with at most 20
// entries per line on average (10-20: a line overflows its 29 fragments
// rarely, and costs 3.2-6.4 bytes per entry).
int RunLineBits(size_t num_fps);

// min(run_bits, prefix bits of table t): a line then always holds every
// entry that shares the table's leading blocks.
inline int TableLineBits(const HammingLayout& layout, int run_bits, int t) {
  return run_bits < layout.table(t).prefix_bits ? run_bits : layout.table(t).prefix_bits;
}

// Lines of one table's directory (exactly 2^bits: no end marker, so that a
// directory of 4 MiB stays on two huge pages rather than three).
inline size_t NumLines(int bits) { return size_t{1} << bits; }

// The slot where line h ends, clamped to the table (a corrupt mapped file).
inline size_t LineEnd(std::span<const HammingLine> lines, size_t h, size_t table_size) {
  return h + 1 < lines.size() && lines[h + 1].begin < table_size ? lines[h + 1].begin : table_size;
}

// The 16 bits of `value` just below its top `bits` bits. REQUIRES: bits <= 48.
inline uint16_t LineFragment(uint64_t value, int bits) {
  return static_cast<uint16_t>(value >> (48 - bits));
}

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

// Queries ScanBatch takes at once: enough probes to keep a steady stream of
// prefetches ahead of the probe being read, few enough that their state
// stays in L1.
inline constexpr size_t kScanBatch = 32;

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
  // Allocates the tombstone bits now (strong: throws bad_alloc with the run
  // unchanged), so that a later MarkDead allocates nothing and cannot fail.
  // MarkDead allocates them on the first death otherwise (a mapped run).
  void ReserveTombstones();
  void MarkDead(size_t pos);
  void Revive(size_t pos);

  // Appends every fingerprint within max_distance of `query`, each once.
  void Scan(const HammingLayout& layout, uint64_t query, std::vector<ScanHit>* hits) const;
  // The same for up to kScanBatch queries at once, each directory line
  // prefetched a few probes before it is read.
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

// Fills `lines` (NumLines(bits) of them) with the directory of a sorted
// table. REQUIRES: table.size() <= kMaxHammingEntries, bits <= 28.
void BuildLines(std::span<const uint64_t> table, int bits, std::span<HammingLine> lines);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_HAMMING_RUN_H_
