#include "index/hamming_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace neardup {

uint64_t HammingNumTables(int num_blocks, int max_distance) {
  if (num_blocks < 1 || num_blocks > 64 || max_distance < 0 || max_distance >= num_blocks) {
    return 0;
  }
  // C(m, k) computed incrementally; stays exact while below the limit.
  uint64_t c = 1;
  int k = std::min(max_distance, num_blocks - max_distance);
  for (int i = 1; i <= k; ++i) {
    c = c * static_cast<uint64_t>(num_blocks - k + i) / static_cast<uint64_t>(i);
    if (c > kMaxHammingTables) return 0;
  }
  return c;
}

Status ValidateHammingIndexOptions(const HammingIndexOptions& options) {
  const int m = options.num_blocks;
  const int k = options.max_distance;
  if (m < 1 || m > 64) {
    return InvalidArgumentError("num_blocks (" + std::to_string(m) + ") must be in [1, 64]");
  }
  if (k < 0) {
    return InvalidArgumentError("max_distance (" + std::to_string(k) + ") must be >= 0");
  }
  if (k >= m) {
    return InvalidArgumentError("max_distance (" + std::to_string(k) +
                                ") must be smaller than num_blocks (" + std::to_string(m) + ")");
  }
  if (HammingNumTables(m, k) == 0) {
    return InvalidArgumentError("num_tables C(num_blocks " + std::to_string(m) + ", max_distance " +
                                std::to_string(k) + ") exceeds the limit " +
                                std::to_string(kMaxHammingTables));
  }
  return Status::Ok();
}

Result<HammingRecommendation> RecommendHammingParameters(int max_distance, uint64_t corpus_size,
                                                         uint64_t max_tables) {
  if (max_distance < 0 || max_distance >= 64) {
    return InvalidArgumentError("max_distance (" + std::to_string(max_distance) +
                                ") must be in [0, 63]");
  }
  if (max_tables < 1) return InvalidArgumentError("max_tables (0) must be >= 1");
  std::optional<HammingRecommendation> best;
  double best_cost = std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(corpus_size);
  for (int m = max_distance + 1; m <= 64; ++m) {
    uint64_t tables = HammingNumTables(m, max_distance);
    if (tables == 0 || tables > max_tables) {
      if (m > max_distance + 1 && tables == 0) break;  // C(m, k) only grows with m
      continue;
    }
    internal::HammingLayout layout({.num_blocks = m, .max_distance = max_distance});
    double candidates = 0;
    for (int t = 0; t < layout.num_tables(); ++t) {
      candidates += n * std::ldexp(1.0, -layout.table(t).prefix_bits);
    }
    double probes = static_cast<double>(tables);
    double cost = probes + candidates / 8;
    if (cost < best_cost) {
      best_cost = cost;
      // Directory: a 64-byte line per 10-20 entries, ~4.8 bytes per entry.
      best = HammingRecommendation{.num_blocks = m,
                                   .max_distance = max_distance,
                                   .num_tables = tables,
                                   .bytes_per_entry = 8.0 * probes + 12 + 4.8 * probes,
                                   .expected_probes = probes,
                                   .expected_candidates = candidates};
    }
  }
  if (!best) {
    return InvalidArgumentError("no num_blocks for max_distance (" + std::to_string(max_distance) +
                                ") has at most max_tables (" + std::to_string(max_tables) +
                                ") tables");
  }
  return *best;
}

namespace internal {
namespace {

// Moves each block from `from_lo[b]` to `to_lo[b]` (lowest bit positions).
BitMoves MakeMoves(int num_blocks, const std::array<int, 64>& size,
                   const std::array<int, 64>& from_lo, const std::array<int, 64>& to_lo) {
  BitMoves moves;
  for (int b = 0; b < num_blocks; ++b) {
    uint64_t mask = size[b] == 64 ? ~uint64_t{0} : ((uint64_t{1} << size[b]) - 1) << from_lo[b];
    int shift = to_lo[b] - from_lo[b];
    bool merged = false;
    for (int i = 0; i < moves.num_moves; ++i) {
      if (moves.moves[i].shift == shift) {
        moves.moves[i].mask |= mask;
        merged = true;
        break;
      }
    }
    if (!merged) moves.moves[moves.num_moves++] = {mask, shift};
  }
  return moves;
}

}  // namespace

HammingLayout::HammingLayout(const HammingIndexOptions& options)
    : num_blocks_(options.num_blocks), max_distance_(options.max_distance) {
  NEARDUP_CHECK(ValidateHammingIndexOptions(options).ok());
  const int m = num_blocks_;
  std::array<int, 64> lo{};
  int top = 64;
  for (int b = 0; b < m; ++b) {
    block_size_[b] = 64 / m + (b < 64 % m ? 1 : 0);
    top -= block_size_[b];
    lo[b] = top;
  }
  const int lead = m - max_distance_;
  // Enumerate the lead-subsets of {0..m-1} in lexicographic order.
  std::vector<int> chosen(lead);
  for (int i = 0; i < lead; ++i) chosen[i] = i;
  while (true) {
    HammingTable table;
    std::array<int, 64> to_lo{};
    std::array<bool, 64> is_chosen{};
    for (int b : chosen) is_chosen[b] = true;
    int pos = 64;
    for (int b : chosen) {
      pos -= block_size_[b];
      to_lo[b] = pos;
      table.chosen_blocks |= uint64_t{1} << b;
      table.prefix_bits += block_size_[b];
    }
    for (int b = 0; b < m; ++b) {
      if (is_chosen[b]) continue;
      pos -= block_size_[b];
      to_lo[b] = pos;
    }
    table.blocks_below_last_chosen = (uint64_t{1} << chosen.back()) - 1;
    table.forward = MakeMoves(m, block_size_, lo, to_lo);
    table.inverse = MakeMoves(m, block_size_, to_lo, lo);
    for (int b = 0; b < m; ++b) {
      for (int i = 0; i < block_size_[b]; ++i) {
        table.block_of_bit[to_lo[b] + i] = uint64_t{1} << b;
      }
    }
    tables_.push_back(table);
    // Next combination.
    int i = lead - 1;
    while (i >= 0 && chosen[i] == m - lead + i) --i;
    if (i < 0) break;
    ++chosen[i];
    for (int j = i + 1; j < lead; ++j) chosen[j] = chosen[j - 1] + 1;
  }
  held_end_ = num_tables();
}

HammingLayout::HammingLayout(const HammingIndexOptions& options, int held_begin, int held_end)
    : HammingLayout(options) {
  NEARDUP_CHECK(0 <= held_begin && held_begin <= held_end && held_end <= num_tables());
  held_begin_ = held_begin;
  held_end_ = held_end;
}

}  // namespace internal
}  // namespace neardup
