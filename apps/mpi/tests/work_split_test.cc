// work_split.h against oracles: HandoverOf against a direct statement of
// the pairing rule (heaviest with lightest, a 2% gap, half the gap) over
// random costs and rank counts, ranks without documents, ties.
#include "work_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace neardup::mpi {
namespace {

TEST(MpiWorkSplitTest, TwoRanksHalfTheGap) {
  const std::vector<uint64_t> costs = {1000, 600};
  const std::vector<bool> all(2, true);
  const Handover heavy = HandoverOf(costs, all, 0);
  EXPECT_EQ(heavy.receiver, 1u);
  EXPECT_EQ(heavy.amount, 200u);
  const Handover light = HandoverOf(costs, all, 1);
  EXPECT_EQ(light.receiver, 2u);  // gives nothing
  EXPECT_EQ(light.amount, 0u);
  // The later rank heavier: it gives to rank 0.
  const std::vector<uint64_t> reversed = {600, 1000};
  EXPECT_EQ(HandoverOf(reversed, all, 1).receiver, 0u);
  EXPECT_EQ(HandoverOf(reversed, all, 1).amount, 200u);
}

TEST(MpiWorkSplitTest, SmallGapsAndEmptyRanksGiveNothing) {
  const std::vector<bool> all(2, true);
  // A gap of 2% of the heavier or less: nothing moves.
  EXPECT_EQ(HandoverOf(std::vector<uint64_t>{1000, 980}, all, 0).amount, 0u);
  EXPECT_EQ(HandoverOf(std::vector<uint64_t>{1000, 979}, all, 0).amount, 10u);
  EXPECT_EQ(HandoverOf(std::vector<uint64_t>{0, 0}, all, 0).amount, 0u);
  // A rank without documents takes nothing, however light.
  const std::vector<uint64_t> costs = {1000, 0, 400};
  const std::vector<bool> eligible = {true, false, true};
  EXPECT_EQ(HandoverOf(costs, eligible, 0).receiver, 2u);
  EXPECT_EQ(HandoverOf(costs, eligible, 0).amount, 300u);
  EXPECT_EQ(HandoverOf(costs, eligible, 1).amount, 0u);
  // One rank: nothing.
  EXPECT_EQ(HandoverOf(std::vector<uint64_t>{5}, std::vector<bool>{true}, 0).amount, 0u);
}

TEST(MpiWorkSplitTest, RandomCostsAgainstThePairingRule) {
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t ranks = 1 + rng() % 9;
    std::vector<uint64_t> costs(ranks);
    std::vector<bool> eligible(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      // Small values make ties likely.
      costs[r] = trial % 2 == 0 ? rng() % 5 : rng() % 100000;
      eligible[r] = rng() % 5 != 0;
    }
    // The oracle: eligible ranks by cost descending, ties by rank.
    std::vector<size_t> order;
    for (size_t r = 0; r < ranks; ++r) {
      if (eligible[r]) order.push_back(r);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return costs[x] > costs[y]; });
    std::vector<size_t> receiver_of(ranks, ranks);
    std::vector<uint64_t> amount_of(ranks, 0);
    for (size_t i = 0; i < order.size() / 2; ++i) {
      const size_t heavy = order[i];
      const size_t light = order[order.size() - 1 - i];
      const uint64_t gap = costs[heavy] - costs[light];
      if (gap > costs[heavy] / 50) {  // more than 2% of the heavier
        receiver_of[heavy] = light;
        amount_of[heavy] = gap / 2;
      }
    }
    std::vector<int> receives(ranks, 0);
    for (size_t r = 0; r < ranks; ++r) {
      const Handover handover = HandoverOf(costs, eligible, r);
      ASSERT_EQ(handover.receiver, receiver_of[r]) << "trial " << trial << " rank " << r;
      ASSERT_EQ(handover.amount, amount_of[r]) << "trial " << trial << " rank " << r;
      if (handover.receiver < ranks) {
        // Gives only to a lighter, eligible rank that itself gives nothing.
        ASSERT_TRUE(eligible[handover.receiver]);
        ASSERT_LT(costs[handover.receiver], costs[r]);
        ASSERT_EQ(HandoverOf(costs, eligible, handover.receiver).amount, 0u);
        ++receives[handover.receiver];
      }
    }
    // Each rank receives from one giver at most.
    for (int count : receives) ASSERT_LE(count, 1);
  }
}

}  // namespace
}  // namespace neardup::mpi
