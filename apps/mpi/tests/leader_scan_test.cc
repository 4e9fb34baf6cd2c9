// The leader rule's steps over ranks (leader_scan.h) run over simulated
// ranks, as LeaderClusters runs them between its collectives, against the
// oracle: ClusterDocuments(kLeader) of all the pairs in one process. Cases:
// a leader on another rank (one or two ranks back, and on the document's
// own rank beside one elsewhere), ties (one document with leader
// neighbours on several ranks, the smaller wins), documents with no pairs,
// ranks with no documents, random graphs of cliques and random pairs with
// random verifiers, each rank's pairs sorted or shuffled; groups of SimHash
// copies (pairs at distance 0) in each list a checkpoint may hold; and
// ApplySmallestLeaders' and ApplyCopyRecords' refusals of records the ranks
// cannot have sent.
#include "leader_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "neardup/clustering.h"

namespace neardup::mpi {
namespace {

// A pair (a, b) placed on the rank that verified it: the owner of a or b.
struct PlacedPair {
  SimilarPair pair;
  bool on_first = true;  // on a's owner, else on b's
};

std::vector<OwnRange> Ranges(const std::vector<uint64_t>& counts) {
  std::vector<OwnRange> ranges;
  uint64_t first = 0;
  for (uint64_t count : counts) {
    ranges.push_back({first, count});
    first += count;
  }
  return ranges;
}

size_t OwnerOf(const std::vector<OwnRange>& ranges, uint64_t doc) {
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (ranges[r].Holds(doc)) return r;
  }
  ADD_FAILURE() << "no rank holds document " << doc;
  return 0;
}

// The rounds of LeaderClusters, rank by rank in order, without MPI: each
// rank scans once the earlier ones have given it their flags (here, the
// shared external_leader) and their SmallestLeaders records. With
// `shuffle`, each rank's pairs are in random order (sorted_by_a=false:
// KeepLaterPairs sorts them), else sorted by (a, b) as the verifiers leave
// them.
std::vector<uint64_t> SimulatedRanks(const std::vector<uint64_t>& counts,
                                     const std::vector<PlacedPair>& placed,
                                     std::mt19937_64* shuffle = nullptr) {
  const std::vector<OwnRange> ranges = Ranges(counts);
  uint64_t total = 0;
  for (uint64_t count : counts) total += count;
  const size_t ranks = ranges.size();
  // Each rank's pairs, sorted by (a, b) as the verifiers leave them.
  std::vector<std::vector<SimilarPair>> pairs(ranks);
  for (const PlacedPair& p : placed) {
    pairs[OwnerOf(ranges, p.on_first ? p.pair.a : p.pair.b)].push_back(p.pair);
  }
  for (std::vector<SimilarPair>& list : pairs) {
    std::sort(list.begin(), list.end(), [](const SimilarPair& x, const SimilarPair& y) {
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    });
    if (shuffle != nullptr) std::shuffle(list.begin(), list.end(), *shuffle);
  }
  // FirstCopies: the copy pairs (distance 0) taken out, their records sent
  // to the later copies' owners.
  std::vector<std::vector<CopyRecord>> copy_records(ranks);
  for (std::vector<SimilarPair>& list : pairs) {
    for (const CopyRecord& record : TakeCopyPairs(&list)) {
      copy_records[OwnerOf(ranges, record.doc)].push_back(record);
    }
  }
  std::vector<std::vector<uint64_t>> first_copy(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    for (uint64_t i = 0; i < ranges[r].count; ++i) first_copy[r].push_back(ranges[r].first + i);
    const Status status = ApplyCopyRecords(copy_records[r], ranges[r], &first_copy[r]);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  // received[to][from]: the records `from` sent to `to`.
  std::vector<std::vector<std::vector<SmallestLeader>>> received(
      ranks, std::vector<std::vector<SmallestLeader>>(ranks));
  std::vector<bool> flags(total, false);  // every rank's, as broadcast
  std::vector<uint64_t> cluster_of;
  for (size_t r = 0; r < ranks; ++r) {
    const OwnRange own = ranges[r];
    const Neighbours earlier = NeighboursByLater(pairs[r], own);
    std::vector<SimilarPair> later = pairs[r];
    KeepLaterPairs(own, /*sorted_by_a=*/shuffle == nullptr, &later);
    const std::vector<bool> external_leader(flags.begin(),
                                            flags.begin() + static_cast<ptrdiff_t>(own.first));
    std::vector<uint64_t> smallest_leader(own.count, UINT64_MAX);
    for (size_t from = 0; from < r; ++from) {
      const Status status =
          ApplySmallestLeaders(received[r][from], static_cast<int>(from), ranges[from], own,
                               external_leader, &smallest_leader);
      EXPECT_TRUE(status.ok()) << status.message();
    }
    std::vector<uint64_t> own_clusters;
    std::vector<uint8_t> leader;
    ScanLeaders(own, earlier, external_leader, smallest_leader, first_copy[r], &own_clusters,
                &leader);
    for (uint64_t i = 0; i < own.count; ++i) flags[own.first + i] = leader[i] != 0;
    cluster_of.insert(cluster_of.end(), own_clusters.begin(), own_clusters.end());
    for (const SmallestLeader& record : SmallestLeaders(later, leader, own, total)) {
      received[OwnerOf(ranges, record.doc)][r].push_back(record);
    }
  }
  // The later copies whose first copy is on an earlier rank take its
  // cluster (LeaderClusters asks the owner: LabelsOf). LabelsOf answers
  // from the labels the scan left, before any rank's fix-up: a snapshot,
  // so a first copy that is not final there is caught, not resolved
  // through another fix-up.
  const std::vector<uint64_t> scanned = cluster_of;
  for (size_t r = 0; r < ranks; ++r) {
    for (uint64_t i = 0; i < ranges[r].count; ++i) {
      const uint64_t first = first_copy[r][i];
      if (first < ranges[r].first) cluster_of[ranges[r].first + i] = scanned[first];
    }
  }
  return cluster_of;
}

std::vector<uint64_t> Oracle(uint64_t total, const std::vector<PlacedPair>& placed) {
  std::vector<SimilarPair> pairs;
  for (const PlacedPair& p : placed) pairs.push_back(p.pair);
  std::sort(pairs.begin(), pairs.end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  Result<std::vector<uint64_t>> clusters = ClusterDocuments(total, pairs, ClusterRule::kLeader);
  EXPECT_TRUE(clusters.ok());
  return clusters.ok() ? *clusters : std::vector<uint64_t>{};
}

PlacedPair Pair(uint64_t a, uint64_t b, bool on_first) { return {{a, b, 0.9, -1}, on_first}; }
// Two copies of one SimHash (distance 0) and a SimHash pair at distance 3.
PlacedPair Copy(uint64_t a, uint64_t b, bool on_first) { return {{a, b, 1.0, 0}, on_first}; }
PlacedPair Near(uint64_t a, uint64_t b, bool on_first) {
  return {{a, b, 1.0 - 3.0 / 64, 3}, on_first};
}

// 1-5 ranks, each with no documents (one in four) or fewer than `below`.
std::vector<uint64_t> RandomCounts(std::mt19937_64& rng, uint64_t below) {
  std::vector<uint64_t> counts(1 + rng() % 5);
  for (uint64_t& count : counts) count = rng() % 4 == 0 ? 0 : rng() % below;
  return counts;
}

TEST(MpiLeaderScanTest, LeaderOnAnEarlierRank) {
  // Ranks {0..3}, {4..7}, {8..11}. 1 leads; 5 pairs with 1 and joins it
  // whether the pair is on rank 0 (a record) or on rank 1 (a flag lookup).
  for (bool on_first : {true, false}) {
    const std::vector<PlacedPair> placed = {Pair(1, 5, on_first), Pair(5, 9, !on_first)};
    const std::vector<uint64_t> clusters = SimulatedRanks({4, 4, 4}, placed);
    EXPECT_EQ(clusters, Oracle(12, placed));
    EXPECT_EQ(clusters[5], 1u);
    EXPECT_EQ(clusters[9], 9u);  // 5 follows 1, so it leads nothing: 9 leads
  }
}

TEST(MpiLeaderScanTest, LeaderTwoRanksBack) {
  // 2 (rank 0) and 10 (rank 2), the pair on rank 0: its record skips rank 1.
  const std::vector<PlacedPair> placed = {Pair(2, 10, true), Pair(6, 10, true)};
  const std::vector<uint64_t> clusters = SimulatedRanks({4, 4, 4}, placed);
  EXPECT_EQ(clusters, Oracle(12, placed));
  EXPECT_EQ(clusters[10], 2u);
}

TEST(MpiLeaderScanTest, TiesTheSmallestLeaderWins) {
  // 9 pairs with leaders 0 (rank 0), 3 (rank 0), 5 (rank 1) and 8 (its own
  // rank), on every mix of verifiers: it joins 0.
  for (int mask = 0; mask < 16; ++mask) {
    const std::vector<PlacedPair> placed = {
        Pair(0, 9, (mask & 1) != 0), Pair(3, 9, (mask & 2) != 0), Pair(5, 9, (mask & 4) != 0),
        Pair(8, 9, (mask & 8) != 0)};
    const std::vector<uint64_t> clusters = SimulatedRanks({4, 4, 4}, placed);
    EXPECT_EQ(clusters, Oracle(12, placed)) << "mask " << mask;
    EXPECT_EQ(clusters[9], 0u);
  }
  // The smaller neighbour is a follower (1 joined 0): 9 joins the leader 4.
  for (int mask = 0; mask < 8; ++mask) {
    const std::vector<PlacedPair> placed = {Pair(0, 1, true), Pair(1, 9, (mask & 1) != 0),
                                            Pair(4, 9, (mask & 2) != 0),
                                            Pair(7, 9, (mask & 4) != 0)};
    const std::vector<uint64_t> clusters = SimulatedRanks({4, 4, 4}, placed);
    EXPECT_EQ(clusters, Oracle(12, placed)) << "mask " << mask;
    EXPECT_EQ(clusters[9], 4u);
  }
}

TEST(MpiLeaderScanTest, DocumentsWithoutPairsAndEmptyRanks) {
  // No pairs at all: every document leads.
  EXPECT_EQ(SimulatedRanks({3, 0, 2}, {}), (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  // Ranks with no documents between, before and after; 2 has no pairs.
  const std::vector<PlacedPair> placed = {Pair(0, 3, false), Pair(1, 4, true), Pair(3, 4, true)};
  const std::vector<uint64_t> clusters = SimulatedRanks({0, 2, 0, 1, 0, 2, 0}, placed);
  EXPECT_EQ(clusters, Oracle(5, placed));
  EXPECT_EQ(clusters[2], 2u);
  EXPECT_EQ(clusters[4], 1u);
}

TEST(MpiLeaderScanTest, RandomGraphsAgainstOneProcess) {
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<uint64_t> counts = RandomCounts(rng, 30);
    const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
    if (total < 2) continue;
    // Copies of a few texts (1-3 cliques of 3-8 random documents, every
    // pair of each) and random pairs, each pair once.
    std::vector<PlacedPair> placed;
    std::vector<uint8_t> taken(total * total, 0);
    const auto add = [&](uint64_t a, uint64_t b) {
      if (a == b) return;
      if (a > b) std::swap(a, b);
      if (taken[a * total + b]++ != 0) return;
      placed.push_back(Pair(a, b, rng() % 2 == 0));
    };
    const uint64_t cliques = 1 + rng() % 3;
    for (uint64_t c = 0; c < cliques; ++c) {
      std::vector<uint64_t> members;
      const uint64_t size = std::min<uint64_t>(total, 3 + rng() % 6);
      while (members.size() < size) {
        const uint64_t doc = rng() % total;
        if (std::find(members.begin(), members.end(), doc) == members.end()) {
          members.push_back(doc);
        }
      }
      for (size_t x = 0; x < members.size(); ++x) {
        for (size_t y = x + 1; y < members.size(); ++y) add(members[x], members[y]);
      }
    }
    const uint64_t edges = rng() % (3 * total);
    for (uint64_t e = 0; e < edges; ++e) add(rng() % total, rng() % total);
    // Half of the trials with each rank's pairs shuffled (sorted_by_a=false).
    const bool shuffled = trial % 2 == 1;
    EXPECT_EQ(SimulatedRanks(counts, placed, shuffled ? &rng : nullptr), Oracle(total, placed))
        << "trial " << trial << (shuffled ? ", shuffled" : "");
  }
}

TEST(MpiLeaderScanTest, ALaterCopyTakesItsFirstCopysCluster) {
  // 0 (text A) leads; 1 (text B, near A) joins it; 2 and 3 are copies of
  // 1. Grouped (stars only), they join 0, not 1, wherever 1 is: on their
  // rank or an earlier one.
  for (const std::vector<uint64_t>& counts :
       {std::vector<uint64_t>{2, 2}, {3, 1}, {1, 1, 2}, {4}}) {
    for (bool on_first : {true, false}) {
      const std::vector<PlacedPair> grouped = {Near(0, 1, true), Copy(1, 2, on_first),
                                               Copy(1, 3, !on_first)};
      EXPECT_EQ(SimulatedRanks(counts, grouped), (std::vector<uint64_t>{0, 0, 0, 0}))
          << counts.size() << " ranks";
    }
  }
  // A later copy never leads: 3 (text C) is near B only (2 of B's copies);
  // with every pair, 2's pair with 3 does not make 3 follow 2.
  const std::vector<PlacedPair> every = {Near(0, 1, true), Near(0, 2, true), Copy(1, 2, true),
                                         Near(1, 3, true), Near(2, 3, false)};
  const std::vector<uint64_t> expected = Oracle(4, every);
  EXPECT_EQ(expected, (std::vector<uint64_t>{0, 0, 0, 3}));
  EXPECT_EQ(SimulatedRanks({2, 1, 1}, every), expected);
  EXPECT_EQ(SimulatedRanks({1, 1, 1, 1}, every), expected);
  // The first copy is the smallest copy named (every pair names m1 as a
  // copy of both s and m0).
  const std::vector<PlacedPair> three = {
      Near(0, 2, true), Copy(1, 3, true), Copy(1, 4, true), Copy(3, 4, false), Near(1, 2, false),
      Near(2, 3, true), Near(2, 4, true), Near(0, 1, true), Near(0, 3, true),  Near(0, 4, false)};
  EXPECT_EQ(SimulatedRanks({1, 2, 2}, three), Oracle(5, three));
}

// Random groups of SimHash copies (up to 40 documents in up to 8 values,
// random adjacency between the values), placed as SimHash places them
// (each pair on its first document's owner) or anywhere: the grouped list
// (pairs of first copies and the stars), session 19's list (with (r, m)
// for each later copy m of s, format-5 checkpoints) and every pair
// (format 4) all cluster as every pair does in one process.
TEST(MpiLeaderScanTest, RandomGroupsOfCopiesAgainstOneProcess) {
  std::mt19937_64 rng(20);
  int stars_alone_differ = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const std::vector<uint64_t> counts = RandomCounts(rng, 12);
    const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
    if (total < 2) continue;
    const uint64_t num_values = 1 + rng() % 8;
    std::vector<std::vector<bool>> near(num_values, std::vector<bool>(num_values, false));
    for (uint64_t x = 0; x < num_values; ++x) {
      for (uint64_t y = x + 1; y < num_values; ++y) near[x][y] = near[y][x] = rng() % 5 < 2;
    }
    std::vector<uint64_t> value_of(total);
    std::vector<uint64_t> first_of_value(num_values, total);
    for (uint64_t d = 0; d < total; ++d) {
      value_of[d] = rng() % num_values;
      first_of_value[value_of[d]] = std::min(first_of_value[value_of[d]], d);
    }
    const bool anywhere = trial % 2 == 1;
    const auto on_first = [&] { return !anywhere || rng() % 2 == 0; };
    std::vector<PlacedPair> every;
    std::vector<PlacedPair> grouped;
    std::vector<PlacedPair> session19;
    for (uint64_t a = 0; a < total; ++a) {
      for (uint64_t b = a + 1; b < total; ++b) {
        const uint64_t x = value_of[a];
        const uint64_t y = value_of[b];
        const bool a_first = first_of_value[x] == a;
        if (x == y) {
          every.push_back(Copy(a, b, on_first()));
          if (a_first) {
            grouped.push_back(Copy(a, b, on_first()));
            session19.push_back(Copy(a, b, on_first()));
          }
        } else if (near[x][y]) {
          every.push_back(Near(a, b, on_first()));
          if (a_first && first_of_value[y] == b) grouped.push_back(Near(a, b, on_first()));
          // (r, m) for each later copy m of s, r < s.
          if (a_first && a < first_of_value[y]) session19.push_back(Near(a, b, on_first()));
        }
      }
    }
    const std::vector<uint64_t> expected = Oracle(total, every);
    SCOPED_TRACE("trial " + std::to_string(trial) + (anywhere ? ", anywhere" : ""));
    EXPECT_EQ(SimulatedRanks(counts, grouped), expected) << "grouped";
    EXPECT_EQ(SimulatedRanks(counts, session19), expected) << "session 19's list";
    EXPECT_EQ(SimulatedRanks(counts, every), expected) << "every pair";
    // Without the groups (the stars as plain pairs) the list is wrong.
    stars_alone_differ += Oracle(total, grouped) != expected;
  }
  EXPECT_GT(stars_alone_differ, 0);
}

TEST(MpiLeaderScanTest, CopyRecordsTheRanksCannotHaveSentAreRefused) {
  const OwnRange own{4, 4};
  std::vector<uint64_t> first_copy = {4, 5, 6, 7};
  EXPECT_TRUE(ApplyCopyRecords({{6, 2}, {6, 1}, {7, 5}}, own, &first_copy).ok());
  EXPECT_EQ(first_copy, (std::vector<uint64_t>{4, 5, 1, 5}));
  for (const CopyRecord& bad : {CopyRecord{3, 1}, CopyRecord{8, 1}, CopyRecord{5, 5}}) {
    const Status status = ApplyCopyRecords({bad}, own, &first_copy);
    EXPECT_EQ(status.code(), StatusCode::kInternal) << bad.doc << " " << bad.first;
  }
  // TakeCopyPairs keeps the other pairs in order.
  std::vector<SimilarPair> pairs = {
      {0, 1, 0.9, -1}, {1, 2, 1.0, 0}, {0, 3, 0.95, 3}, {2, 5, 1.0, 0}};
  EXPECT_EQ(TakeCopyPairs(&pairs), (std::vector<CopyRecord>{{2, 1}, {5, 2}}));
  EXPECT_EQ(pairs, (std::vector<SimilarPair>{{0, 1, 0.9, -1}, {0, 3, 0.95, 3}}));
}

TEST(MpiLeaderScanTest, RecordsTheRanksCannotHaveSentAreRefused) {
  // This rank holds {4..7}; rank 0 holds {0..3}, with 1 a leader, 2 not.
  const OwnRange own{4, 4};
  const OwnRange from{0, 4};
  const std::vector<bool> external_leader = {false, true, false, false};
  std::vector<uint64_t> smallest(4, UINT64_MAX);
  EXPECT_TRUE(ApplySmallestLeaders({{5, 1}}, 0, from, own, external_leader, &smallest).ok());
  EXPECT_EQ(smallest[1], 1u);
  // Not a leader, not rank 0's, not this rank's document: each names the
  // check that failed.
  const std::vector<std::pair<SmallestLeader, std::string>> bad_records = {
      {{5, 2}, "not a leader"},
      {{5, 4}, "a leader not in its [0, 4)"},
      {{9, 1}, "not in this rank's [4, 8)"},
      {{3, 1}, "not in this rank's [4, 8)"}};
  for (const auto& [bad, why] : bad_records) {
    const Status status = ApplySmallestLeaders({bad}, 0, from, own, external_leader, &smallest);
    EXPECT_EQ(status.code(), StatusCode::kInternal) << bad.doc << " " << bad.leader;
    EXPECT_NE(status.message().find(why), std::string::npos) << status.message();
  }
}

TEST(MpiLeaderScanTest, SmallestLeadersOneRecordPerLaterDocument) {
  // Rank {0..3} with leaders 0 and 2; its later pairs, sorted by a.
  const std::vector<SimilarPair> later = {{0, 6, 0.9, -1}, {0, 9, 0.9, -1}, {1, 5, 0.9, -1},
                                          {2, 5, 0.9, -1}, {2, 6, 0.9, -1}, {3, 7, 0.9, -1}};
  const std::vector<uint8_t> leader = {1, 0, 1, 0};
  EXPECT_EQ(SmallestLeaders(later, leader, {0, 4}, 10),
            (std::vector<SmallestLeader>{{6, 0}, {9, 0}, {5, 2}}));
}

}  // namespace
}  // namespace neardup::mpi
