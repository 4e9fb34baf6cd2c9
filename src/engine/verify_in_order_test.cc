// VerifyInOrder keeps at most 4 blocks a thread in flight, by the --threads
// limit (tbb::global_control), not by the host's cores, and appends each
// block's pairs in block order whatever slot it was verified in.
#include "engine/verify_in_order.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "io/effective_threads.h"

namespace neardup::internal {
namespace {

TEST(VerifyInOrderTest, SlotsFollowTheThreadLimitAndPairsKeepBlockOrder) {
  constexpr size_t kBlocks = 100;
  for (int threads : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::mutex mutex;
    std::set<const std::vector<SimilarPair>*> slots_used;
    // Slots being verified into now, and the most blocks verified at once:
    // two blocks in flight must never share a slot.
    std::set<const std::vector<SimilarPair>*> slots_busy;
    size_t in_flight = 0;
    size_t peak_in_flight = 0;
    bool slot_shared = false;
    std::vector<SimilarPair> pairs;
    VerifyInOrder(kBlocks, &pairs, [&](size_t block, std::vector<SimilarPair>& out) {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        slots_used.insert(&out);
        slot_shared |= !slots_busy.insert(&out).second;
        peak_in_flight = std::max(peak_in_flight, ++in_flight);
      }
      // Block b gives b % 3 pairs (some none).
      for (size_t i = 0; i < block % 3; ++i)
        out.push_back(SimilarPair{block, block + 1 + i, 1, -1});
      const std::lock_guard<std::mutex> lock(mutex);
      slots_busy.erase(&out);
      --in_flight;
    });
    EXPECT_FALSE(slot_shared) << threads << " threads";
    EXPECT_LE(peak_in_flight, 4u * static_cast<size_t>(threads)) << threads << " threads";
    // Every slot is used (kBlocks is far more than the slots), and there are
    // 4 a thread of the limit, not 4 a core of the host.
    EXPECT_EQ(slots_used.size(), 4 * EffectiveThreads()) << threads << " threads";
    EXPECT_LE(slots_used.size(), 4u * static_cast<size_t>(threads)) << threads << " threads";
    std::vector<SimilarPair> expected;
    for (uint64_t block = 0; block < kBlocks; ++block) {
      for (uint64_t i = 0; i < block % 3; ++i)
        expected.push_back(SimilarPair{block, block + 1 + i, 1, -1});
    }
    EXPECT_EQ(pairs, expected) << threads << " threads";
  }
}

TEST(VerifyInOrderTest, NoBlocksLeavesThePairsAlone) {
  std::vector<SimilarPair> pairs = {SimilarPair{0, 1, 1, -1}};
  VerifyInOrder(0, &pairs, [](size_t, std::vector<SimilarPair>&) { FAIL(); });
  EXPECT_EQ(pairs.size(), 1u);
}

}  // namespace
}  // namespace neardup::internal
