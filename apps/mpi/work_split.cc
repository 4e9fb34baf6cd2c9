#include "work_split.h"

#include <algorithm>

namespace neardup::mpi {

Handover HandoverOf(std::span<const uint64_t> costs, const std::vector<bool>& eligible, size_t me) {
  const size_t ranks = costs.size();
  std::vector<size_t> order;
  for (size_t r = 0; r < ranks; ++r) {
    if (eligible[r]) order.push_back(r);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return costs[x] != costs[y] ? costs[x] > costs[y] : x < y; });
  Handover handover{.receiver = ranks, .amount = 0};
  for (size_t i = 0; i < order.size() / 2; ++i) {
    const size_t heavy = order[i];
    const size_t light = order[order.size() - 1 - i];
    if (heavy != me || costs[heavy] - costs[light] <= costs[heavy] / 50) continue;
    handover = {.receiver = light, .amount = (costs[heavy] - costs[light]) / 2};
  }
  return handover;
}

std::vector<uint64_t> RecordsToHand(std::span<const uint64_t> deferred,
                                    std::span<const uint64_t> bytes, std::span<const uint8_t> needs,
                                    uint64_t amount) {
  std::vector<uint64_t> handed;
  uint64_t moved = 0;
  // First those only the receiver needs (nothing comes back), then those
  // this rank needs too.
  for (const bool receivers_only : {true, false}) {
    for (size_t i = 0; i < deferred.size() && moved < amount; ++i) {
      const uint8_t why = needs[deferred[i]];
      const bool eligible = receivers_only
                                ? why == kAskedByReceiver
                                : why == kNeededHere || why == (kNeededHere | kAskedByReceiver);
      if (!eligible || bytes[i] == 0) continue;
      handed.push_back(deferred[i]);
      moved += bytes[i];
    }
  }
  std::sort(handed.begin(), handed.end());
  return handed;
}

}  // namespace neardup::mpi
