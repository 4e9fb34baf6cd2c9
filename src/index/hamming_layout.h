// HammingLayout: the blocks and permuted tables of a HammingIndex (private).
//
// Bits are numbered by significance (bit 63 is the most significant). Block 0
// holds the most significant bits; the first 64 % m blocks are one bit longer.
// Table t chooses m - k blocks (combinations in lexicographic order, so table
// 0 chooses blocks 0..m-k-1 and its permutation is the identity); its
// permutation moves the chosen blocks to the top, in block order, followed by
// the others in block order. A permutation maps bits to bits, so it preserves
// Hamming distance.
#ifndef NEARDUP_INDEX_HAMMING_LAYOUT_H_
#define NEARDUP_INDEX_HAMMING_LAYOUT_H_

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "neardup/hamming_index.h"

namespace neardup::internal {

// A bit permutation as a few masked shifts: consecutive blocks that move by
// the same amount form one move.
struct BitMoves {
  struct Move {
    uint64_t mask;
    int shift;  // > 0: left, < 0: right
  };
  int num_moves = 0;
  std::array<Move, 64> moves{};

  // A rotation equals the shift here (the moved bits never wrap), and has no
  // branch on the direction.
  uint64_t Apply(uint64_t x) const {
    uint64_t out = 0;
    for (int i = 0; i < num_moves; ++i) out |= std::rotl(x & moves[i].mask, moves[i].shift);
    return out;
  }
};

struct HammingTable {
  uint64_t chosen_blocks = 0;  // bit b set: block b leads this table
  // Blocks below the largest chosen block: a match is reported from this table
  // only if every such block either differs or is chosen (see IsCanonical).
  uint64_t blocks_below_last_chosen = 0;
  int prefix_bits = 0;  // total width of the chosen blocks
  BitMoves forward;     // fingerprint -> permuted
  BitMoves inverse;     // permuted -> fingerprint
  // For each bit of the permuted value, 1 << (its original block).
  std::array<uint64_t, 64> block_of_bit{};

  // `diff` = permuted(a) ^ permuted(b) with popcount(diff) <= k. True if this
  // table is the first (lexicographically smallest choice of blocks) whose
  // chosen blocks are all equal in a and b: the table that reports the pair.
  bool IsCanonical(uint64_t diff) const {
    uint64_t differing = 0;
    while (diff != 0) {
      differing |= block_of_bit[std::countr_zero(diff)];
      diff &= diff - 1;
    }
    if ((differing & chosen_blocks) != 0) return false;
    return ((differing | chosen_blocks) & blocks_below_last_chosen) == blocks_below_last_chosen;
  }
};

// A layout also names the tables an index holds, [held_begin, held_end) (all
// of them unless built for a range: HammingIndex::Build with a table range).
// A run of a partial layout builds and stores only those tables (table 0's
// directory always, since it also finds a fingerprint's ids), its scans probe
// only those, and its joins and clusters cover only the pairs whose canonical
// table is among them.
class HammingLayout {
 public:
  // REQUIRES: ValidateHammingIndexOptions(options).ok().
  explicit HammingLayout(const HammingIndexOptions& options);
  // REQUIRES: that, and held_begin <= held_end <= the number of tables.
  HammingLayout(const HammingIndexOptions& options, int held_begin, int held_end);

  int num_blocks() const { return num_blocks_; }
  int max_distance() const { return max_distance_; }
  int num_tables() const { return static_cast<int>(tables_.size()); }
  const HammingTable& table(int t) const { return tables_[t]; }
  int block_size(int b) const { return block_size_[b]; }

  int held_begin() const { return held_begin_; }
  int held_end() const { return held_end_; }
  bool holds_all() const { return held_begin_ == 0 && held_end_ == num_tables(); }
  bool Holds(int t) const { return held_begin_ <= t && t < held_end_; }
  // Whether the pair of two fingerprints that differ in `diff` (unpermuted,
  // popcount <= max_distance) has its canonical table among the held ones
  // (equal fingerprints: table 0). True for every pair when holds_all().
  bool HoldsPair(uint64_t diff) const {
    if (holds_all()) return true;
    for (int t = held_begin_; t < held_end_; ++t) {
      if (tables_[t].IsCanonical(tables_[t].forward.Apply(diff))) return true;
    }
    return false;
  }

 private:
  int num_blocks_;
  int max_distance_;
  std::array<int, 64> block_size_{};
  std::vector<HammingTable> tables_;
  int held_begin_ = 0;
  int held_end_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_HAMMING_LAYOUT_H_
