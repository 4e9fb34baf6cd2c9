#include "leader_scan.h"

#include <algorithm>
#include <string>

namespace neardup::mpi {

Neighbours NeighboursByLater(const std::vector<SimilarPair>& pairs, OwnRange own) {
  Neighbours neighbours;
  neighbours.start.assign(own.count + 1, 0);
  for (const SimilarPair& pair : pairs) {
    if (own.Holds(pair.b)) ++neighbours.start[pair.b - own.first + 1];
  }
  for (uint64_t i = 0; i < own.count; ++i) neighbours.start[i + 1] += neighbours.start[i];
  std::vector<uint64_t> next(neighbours.start.begin(), neighbours.start.end() - 1);
  neighbours.of.resize(neighbours.start[own.count]);
  for (const SimilarPair& pair : pairs) {
    if (own.Holds(pair.b)) neighbours.of[next[pair.b - own.first]++] = pair.a;
  }
  return neighbours;
}

void KeepLaterPairs(OwnRange own, bool sorted_by_a, std::vector<SimilarPair>* pairs) {
  // Kept in place (their a ascending when the list's was).
  size_t num_later = 0;
  for (const SimilarPair& pair : *pairs) {
    if (!own.Holds(pair.b)) (*pairs)[num_later++] = pair;
  }
  pairs->resize(num_later);
  if (num_later == 0) *pairs = {};
  if (!sorted_by_a) {
    std::sort(pairs->begin(), pairs->end(),
              [](const SimilarPair& x, const SimilarPair& y) { return x.a < y.a; });
  }
}

std::vector<CopyRecord> TakeCopyPairs(std::vector<SimilarPair>* pairs) {
  std::vector<CopyRecord> copies;
  size_t kept = 0;
  for (const SimilarPair& pair : *pairs) {
    if (pair.distance == 0) {
      copies.push_back({pair.b, pair.a});
    } else {
      (*pairs)[kept++] = pair;
    }
  }
  pairs->resize(kept);
  return copies;
}

Status ApplyCopyRecords(const std::vector<CopyRecord>& records, OwnRange own,
                        std::vector<uint64_t>* first_copy) {
  for (const CopyRecord& record : records) {
    if (!own.Holds(record.doc) || record.first >= record.doc) {
      return InternalError("a copy record names document " + std::to_string(record.doc) +
                           " (this rank holds [" + std::to_string(own.first) + ", " +
                           std::to_string(own.first + own.count) + ")) and its first copy " +
                           std::to_string(record.first) + ", which must be before it");
    }
    uint64_t& first = (*first_copy)[record.doc - own.first];
    first = std::min(first, record.first);
  }
  return Status::Ok();
}

void ScanLeaders(OwnRange own, const Neighbours& earlier, const std::vector<bool>& external_leader,
                 const std::vector<uint64_t>& smallest_leader,
                 const std::vector<uint64_t>& first_copy, std::vector<uint64_t>* cluster_of,
                 std::vector<uint8_t>* leader) {
  cluster_of->resize(own.count);
  leader->resize(own.count);
  for (uint64_t i = 0; i < own.count; ++i) {
    const uint64_t doc = own.first + i;
    const uint64_t first = first_copy[i];
    if (first != doc) {
      (*cluster_of)[i] = first >= own.first ? (*cluster_of)[first - own.first] : first;
      (*leader)[i] = 0;
      continue;
    }
    uint64_t cluster = std::min(doc, smallest_leader[i]);
    for (uint64_t j = earlier.start[i]; j < earlier.start[i + 1]; ++j) {
      const uint64_t a = earlier.of[j];
      if (a >= cluster) continue;
      if (a >= own.first ? (*leader)[a - own.first] != 0 : external_leader[a]) cluster = a;
    }
    (*cluster_of)[i] = cluster;
    (*leader)[i] = cluster == doc;
  }
}

std::vector<SmallestLeader> SmallestLeaders(const std::vector<SimilarPair>& later,
                                            const std::vector<uint8_t>& leader, OwnRange own,
                                            uint64_t total) {
  std::vector<SmallestLeader> records;
  const uint64_t end = own.first + own.count;
  // In ascending a, the first leader met for a b is its smallest.
  std::vector<bool> seen(total - end, false);
  for (const SimilarPair& pair : later) {
    if (leader[pair.a - own.first] == 0 || seen[pair.b - end]) continue;
    seen[pair.b - end] = true;
    records.push_back({pair.b, pair.a});
  }
  return records;
}

Status ApplySmallestLeaders(const std::vector<SmallestLeader>& records, int from,
                            OwnRange from_range, OwnRange own,
                            const std::vector<bool>& external_leader,
                            std::vector<uint64_t>* smallest_leader) {
  for (const SmallestLeader& record : records) {
    // Built only for a refusal.
    const auto named = [&] {
      return "rank " + std::to_string(from) + " named leader " + std::to_string(record.leader) +
             " of document " + std::to_string(record.doc);
    };
    if (!own.Holds(record.doc)) {
      return InternalError(named() + ", which is not in this rank's [" + std::to_string(own.first) +
                           ", " + std::to_string(own.first + own.count) + ")");
    }
    if (!from_range.Holds(record.leader) || record.leader >= external_leader.size()) {
      return InternalError(named() + ", a leader not in its [" + std::to_string(from_range.first) +
                           ", " + std::to_string(from_range.first + from_range.count) + ")");
    }
    if (!external_leader[record.leader]) {
      return InternalError(named() + ", which is not a leader");
    }
    uint64_t& smallest_here = (*smallest_leader)[record.doc - own.first];
    smallest_here = std::min(smallest_here, record.leader);
  }
  return Status::Ok();
}

}  // namespace neardup::mpi
