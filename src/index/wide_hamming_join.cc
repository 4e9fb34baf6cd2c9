#include "index/wide_hamming_join.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using Mask = std::array<uint64_t, 4>;

// The bits [first, last) of a WideSimHash (bit 0 the MSB of word 0).
Mask BlockMask(int first, int last) {
  Mask mask{};
  for (int i = first; i < last; ++i) mask[i / 64] |= uint64_t{1} << (63 - i % 64);
  return mask;
}

bool AgreeOn(const WideSimHash& x, const WideSimHash& y, const Mask& mask) {
  uint64_t differ = 0;
  for (size_t w = 0; w < mask.size(); ++w) differ |= (x.words[w] ^ y.words[w]) & mask[w];
  return differ == 0;
}

// A 64-bit key of a block's bits: equal blocks give equal keys; unequal
// blocks rarely collide, and a collision only adds a candidate that the
// exact check of AgreeOn rejects.
uint64_t BlockKey(const WideSimHash& x, const Mask& mask) {
  uint64_t key = 0;
  for (size_t w = 0; w < mask.size(); ++w) key = Mix64(key ^ (x.words[w] & mask[w]));
  return key;
}

}  // namespace

Result<std::vector<WideHammingMatch>> WideHammingSelfJoin(std::span<const WideSimHash> values,
                                                          int max_distance, int num_blocks,
                                                          WideHammingJoinStats* stats) {
  if (values.empty()) return std::vector<WideHammingMatch>();
  if (values.size() > std::numeric_limits<uint32_t>::max()) {
    return ResourceExhaustedError("too many values (" + std::to_string(values.size()) +
                                  ") for one join; the limit is 2^32 - 1");
  }
  const int bits = values[0].bits;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].bits != bits || bits <= 0 || bits > 256) {
      return InvalidArgumentError("value " + std::to_string(i) + " has " +
                                  std::to_string(values[i].bits) + " bits; value 0 has " +
                                  std::to_string(bits) + " (all must have the same, 1 to 256)");
    }
  }
  if (num_blocks == 0) num_blocks = max_distance + 1;
  if (max_distance < 0 || max_distance >= num_blocks || num_blocks > bits) {
    return InvalidArgumentError("max_distance (" + std::to_string(max_distance) +
                                ") must be >= 0 and smaller than num_blocks (" +
                                std::to_string(num_blocks) + "), which must be at most the " +
                                std::to_string(bits) + " bits");
  }

  std::vector<Mask> masks;
  for (int b = 0; b < num_blocks; ++b) {
    masks.push_back(BlockMask(b * bits / num_blocks, (b + 1) * bits / num_blocks));
  }

  struct Local {
    std::vector<WideHammingMatch> matches;
    uint64_t candidates = 0;
  };
  tbb::enumerable_thread_specific<Local> locals;
  std::vector<std::pair<uint64_t, uint32_t>> table(values.size());
  for (int block = 0; block < num_blocks; ++block) {
    const Mask& mask = masks[static_cast<size_t>(block)];
    for (size_t i = 0; i < values.size(); ++i) {
      table[i] = {BlockKey(values[i], mask), static_cast<uint32_t>(i)};
    }
    tbb::parallel_sort(table.begin(), table.end());
    // Runs of equal keys, checked in parallel (a run is never split).
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t start = 0; start < table.size();) {
      size_t end = start + 1;
      while (end < table.size() && table[end].first == table[start].first) ++end;
      if (end - start > 1) runs.emplace_back(start, end);
      start = end;
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, runs.size()),
                      [&](const tbb::blocked_range<size_t>& range) {
                        Local& local = locals.local();
                        for (size_t r = range.begin(); r != range.end(); ++r) {
                          const auto [start, end] = runs[r];
                          for (size_t i = start; i < end; ++i) {
                            const WideSimHash& x = values[table[i].second];
                            for (size_t j = i + 1; j < end; ++j) {
                              const WideSimHash& y = values[table[j].second];
                              ++local.candidates;
                              if (!AgreeOn(x, y, mask)) continue;  // a key collision
                              const int distance = HammingDistance(x, y);
                              if (distance > max_distance) continue;
                              // Reported from the first block the two agree on.
                              bool earlier = false;
                              for (int e = 0; e < block && !earlier; ++e) {
                                earlier = AgreeOn(x, y, masks[static_cast<size_t>(e)]);
                              }
                              if (earlier) continue;
                              const uint32_t a = std::min(table[i].second, table[j].second);
                              const uint32_t b = std::max(table[i].second, table[j].second);
                              local.matches.push_back(WideHammingMatch{a, b, distance});
                            }
                          }
                        }
                      });
  }
  std::vector<WideHammingMatch> matches;
  uint64_t candidates = 0;
  for (Local& local : locals) {
    matches.insert(matches.end(), local.matches.begin(), local.matches.end());
    candidates += local.candidates;
  }
  tbb::parallel_sort(matches.begin(), matches.end(),
                     [](const WideHammingMatch& x, const WideHammingMatch& y) {
                       return x.a != y.a ? x.a < y.a : x.b < y.b;
                     });
  if (stats != nullptr) stats->candidates = candidates;
  return matches;
}

}  // namespace neardup::internal
