// GroupCopies and ListGroupedSimHashPairs (grouped_pairs.h) against
// ClusterDocuments over every pair, on random graphs of groups of copies:
// up to 40 documents in up to 8 SimHash values, random adjacency between
// the values. Components through ClusterDocuments, leader through the
// scan's grouped expansion (leader_scan.h, as LeaderClusters runs it at
// one rank); the stars split between two "ranks" as well.
#include "grouped_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "leader_scan.h"

namespace neardup::mpi {
namespace {

struct Graph {
  std::vector<HammingEntry> copies;  // as received: unsorted
  std::vector<HammingPair> joined;   // pairs of first copies, a.id < b.id
  std::vector<SimilarPair> every;    // the full graph, sorted
  uint64_t num_documents = 0;
};

Graph RandomGraph(std::mt19937_64& rng) {
  Graph graph;
  const int num_values = 1 + static_cast<int>(rng() % 8);
  graph.num_documents = 1 + rng() % 40;
  std::vector<std::vector<bool>> near(num_values, std::vector<bool>(num_values, false));
  for (int x = 0; x < num_values; ++x) {
    for (int y = x + 1; y < num_values; ++y) near[x][y] = near[y][x] = rng() % 5 < 2;
  }
  std::vector<int> value_of(graph.num_documents);
  for (uint64_t d = 0; d < graph.num_documents; ++d) {
    value_of[d] = static_cast<int>(rng() % num_values);
    // SimHash values out of order with the value numbers.
    graph.copies.push_back(HammingEntry{(static_cast<uint64_t>(value_of[d]) * 7919) % 64, d});
  }
  std::shuffle(graph.copies.begin(), graph.copies.end(), rng);
  std::vector<uint64_t> first_of_value(num_values, graph.num_documents);
  for (uint64_t d = graph.num_documents; d-- > 0;) first_of_value[value_of[d]] = d;
  for (uint64_t a = 0; a < graph.num_documents; ++a) {
    for (uint64_t b = a + 1; b < graph.num_documents; ++b) {
      const int x = value_of[a], y = value_of[b];
      if (x == y) {
        graph.every.push_back(SimilarPair{a, b, 1.0, 0});
      } else if (near[x][y]) {
        graph.every.push_back(SimilarPair{a, b, 1.0 - 3.0 / 64, 3});
        if (first_of_value[x] == a && first_of_value[y] == b) {
          graph.joined.push_back(
              HammingPair{HammingEntry{(static_cast<uint64_t>(x) * 7919) % 64, a},
                          HammingEntry{(static_cast<uint64_t>(y) * 7919) % 64, b}, 3});
        }
      }
    }
  }
  return graph;
}

bool SortedUnique(const std::vector<SimilarPair>& pairs) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].a >= pairs[i].b) return false;
    if (i > 0 && (pairs[i - 1].a > pairs[i].a ||
                  (pairs[i - 1].a == pairs[i].a && pairs[i - 1].b >= pairs[i].b))) {
      return false;
    }
  }
  return true;
}

TEST(MpiGroupedPairsTest, GroupCopiesFindsEachValuesRun) {
  const CopyGroups groups = GroupCopies({{5, 9}, {3, 4}, {5, 2}, {3, 1}, {8, 7}, {5, 6}});
  EXPECT_EQ(groups.copies,
            (std::vector<HammingEntry>{{3, 1}, {3, 4}, {5, 2}, {5, 6}, {5, 9}, {8, 7}}));
  EXPECT_EQ(groups.first, (std::vector<HammingEntry>{{3, 1}, {5, 2}, {8, 7}}));
  EXPECT_EQ(groups.start, (std::vector<uint64_t>{0, 2, 5, 6}));
  const CopyGroups none = GroupCopies({});
  EXPECT_TRUE(none.copies.empty());
  EXPECT_TRUE(none.first.empty());
  EXPECT_EQ(none.start, (std::vector<uint64_t>{0}));
}

// What LeaderClusters does with a list at one rank: the copy pairs
// (distance 0) name each later copy's first copy, which the scan leaves
// out; components: ClusterDocuments of the list.
std::vector<uint64_t> ClusterListed(uint64_t num_documents, std::vector<SimilarPair> pairs,
                                    ClusterRule rule) {
  if (rule == ClusterRule::kComponents) return *ClusterDocuments(num_documents, pairs, rule);
  const OwnRange all{0, num_documents};
  std::vector<uint64_t> first_copy(num_documents);
  for (uint64_t d = 0; d < num_documents; ++d) first_copy[d] = d;
  EXPECT_TRUE(ApplyCopyRecords(TakeCopyPairs(&pairs), all, &first_copy).ok());
  std::vector<uint64_t> cluster_of;
  std::vector<uint8_t> leader;
  ScanLeaders(all, NeighboursByLater(pairs, all), {},
              std::vector<uint64_t>(num_documents, UINT64_MAX), first_copy, &cluster_of, &leader);
  return cluster_of;
}

TEST(MpiGroupedPairsTest, ListedPairsClusterAsEveryPair) {
  std::mt19937_64 rng(19);
  int leader_needs_groups = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Graph graph = RandomGraph(rng);
    const CopyGroups groups = GroupCopies(graph.copies);
    ASSERT_TRUE(
        std::is_sorted(groups.first.begin(), groups.first.end(),
                       [](const auto& x, const auto& y) { return x.fingerprint < y.fingerprint; }));
    const auto all = [](uint64_t) { return true; };
    const GroupedPairs listed = ListGroupedSimHashPairs(groups, graph.joined, all);
    ASSERT_TRUE(SortedUnique(listed.pairs));
    EXPECT_EQ(listed.expanded, graph.every.size());
    EXPECT_LE(listed.pairs.size(), graph.every.size());
    // O(g): the pairs of first copies and one star pair per later copy.
    EXPECT_EQ(listed.pairs.size(), graph.joined.size() + graph.copies.size() - groups.first.size());
    for (const ClusterRule rule : {ClusterRule::kLeader, ClusterRule::kComponents}) {
      const std::vector<uint64_t> expected =
          *ClusterDocuments(graph.num_documents, graph.every, rule);
      EXPECT_EQ(ClusterListed(graph.num_documents, listed.pairs, rule), expected)
          << "rule " << int(rule);
      // A later copy whose first copy follows another leader must follow
      // that leader (a wrong expansion, to the first copy or alone, fails).
      if (rule == ClusterRule::kLeader) {
        leader_needs_groups +=
            *ClusterDocuments(graph.num_documents, listed.pairs, rule) != expected;
      }
    }
    // The stars split between two ranks (each listing its SimHashes'):
    // the union clusters the same, and the counts add up.
    const auto even = [](uint64_t fingerprint) { return fingerprint % 2 == 0; };
    const auto odd = [](uint64_t fingerprint) { return fingerprint % 2 == 1; };
    const auto none = [](uint64_t) { return false; };
    const GroupedPairs joined_stars_even = ListGroupedSimHashPairs(groups, graph.joined, even);
    const GroupedPairs stars_odd = ListGroupedSimHashPairs(groups, {}, odd);
    std::vector<SimilarPair> both = joined_stars_even.pairs;
    both.insert(both.end(), stars_odd.pairs.begin(), stars_odd.pairs.end());
    std::sort(both.begin(), both.end(), [](const SimilarPair& x, const SimilarPair& y) {
      return x.a != y.a ? x.a < y.a : x.b < y.b;
    });
    EXPECT_EQ(joined_stars_even.expanded + stars_odd.expanded, graph.every.size());
    for (const ClusterRule rule : {ClusterRule::kLeader, ClusterRule::kComponents}) {
      EXPECT_EQ(ClusterListed(graph.num_documents, both, rule),
                *ClusterDocuments(graph.num_documents, graph.every, rule));
    }
    EXPECT_TRUE(ListGroupedSimHashPairs(groups, {}, none).pairs.empty());
  }
  // The leader rule does need the groups (so the test sees them).
  EXPECT_GT(leader_needs_groups, 0);
}

}  // namespace
}  // namespace neardup::mpi
