// work_split.h against oracles: HandoverOf against a direct statement of
// the pairing rule (heaviest with lightest, a 2% gap, half the gap) over
// random costs and rank counts, ranks without documents, ties; and
// RecordsToHand against a filter of the deferred documents.
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

TEST(MpiWorkSplitTest, RecordsToHandReceiversOnlyFirstThenThoseNeededHere) {
  // Local documents 0..10; the deferred ones with their record bytes.
  const std::vector<uint64_t> deferred = {0, 2, 3, 5, 6, 8, 9, 10};
  const std::vector<uint64_t> bytes = {10, 20, 30, 40, 0, 60, 70, 5};
  std::vector<uint8_t> needs(11, 0);
  needs[0] = kNeededHere | kAskedByReceiver;          // second pass (comes back)
  needs[2] = kAskedByReceiver;                        // first pass
  needs[3] = kAskedByReceiver | kAskedByAnotherRank;  // another rank waits for it: stays
  needs[5] = kAskedByReceiver;                        // first pass
  needs[6] = kAskedByReceiver;                        // no record: stays
  needs[8] = kNeededHere;                             // second pass (comes back)
  needs[9] = kAskedByReceiver;                        // first pass
  needs[10] = kNeededHere | kAskedByAnotherRank;      // stays
  EXPECT_EQ(RecordsToHand(deferred, bytes, needs, 1000), (std::vector<uint64_t>{0, 2, 5, 8, 9}));
  // Until the bytes reach the amount, the receiver's own first: 20 < 50,
  // 20 + 40 >= 50.
  EXPECT_EQ(RecordsToHand(deferred, bytes, needs, 50), (std::vector<uint64_t>{2, 5}));
  EXPECT_EQ(RecordsToHand(deferred, bytes, needs, 20), (std::vector<uint64_t>{2}));
  // 20 + 40 + 70 = 130 < 135: then document 0 (10 bytes) from the second pass.
  EXPECT_EQ(RecordsToHand(deferred, bytes, needs, 135), (std::vector<uint64_t>{0, 2, 5, 9}));
  EXPECT_EQ(RecordsToHand(deferred, bytes, needs, 0), (std::vector<uint64_t>{}));
  EXPECT_EQ(RecordsToHand({}, {}, needs, 1000), (std::vector<uint64_t>{}));
}

TEST(MpiWorkSplitTest, RecordsToHandRandomAgainstAFilter) {
  std::mt19937_64 rng(16);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 200;
    std::vector<uint8_t> needs(n);
    std::vector<uint64_t> deferred;
    std::vector<uint64_t> bytes;
    for (size_t doc = 0; doc < n; ++doc) {
      needs[doc] = static_cast<uint8_t>(rng() % 8);
      if (rng() % 3 != 0) {
        deferred.push_back(doc);
        bytes.push_back(rng() % 4 == 0 ? 0 : rng() % 1000);
      }
    }
    const uint64_t amount = rng() % 40000;
    // The oracle: the receiver-only documents in order, then the others no
    // third rank asked for, while under the amount; then sorted.
    std::vector<uint64_t> expected;
    uint64_t moved = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < deferred.size(); ++i) {
        if (moved >= amount) break;
        const uint8_t why = needs[deferred[i]];
        const bool no_third = (why & kAskedByAnotherRank) == 0;
        const bool wanted =
            pass == 0 ? why == kAskedByReceiver : no_third && (why & kNeededHere) != 0;
        if (wanted && bytes[i] > 0) {
          expected.push_back(deferred[i]);
          moved += bytes[i];
        }
      }
    }
    std::sort(expected.begin(), expected.end());
    const std::vector<uint64_t> handed = RecordsToHand(deferred, bytes, needs, amount);
    ASSERT_EQ(handed, expected) << "trial " << trial;
    for (uint64_t doc : handed) ASSERT_EQ(needs[doc] & kAskedByAnotherRank, 0) << doc;
  }
}

}  // namespace
}  // namespace neardup::mpi
