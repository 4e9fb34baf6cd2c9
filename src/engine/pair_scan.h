// ScanPairs: ClusterDocuments' one read of its pairs: the first malformed
// pair, and whether the pairs are sorted by a (which picks the leader
// rule's one-pass form; src/engine/clustering.cc).
//
// The scan runs on all cores in tasks of at most kClusterPairGrain pairs
// (tbb::simple_partitioner: ranges halved until they fit), each comparing
// its first pair with the one before it, so the tasks' answers join without
// knowing their bounds. Exposed for the tests, which put descents exactly
// on those task edges.
#ifndef NEARDUP_ENGINE_PAIR_SCAN_H_
#define NEARDUP_ENGINE_PAIR_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "neardup/clustering.h"

namespace neardup::internal {

// Pairs per task of the passes over all pairs (the scan, the leader rule's
// count and placement): large enough that a task is not all overhead.
inline constexpr size_t kClusterPairGrain = size_t{1} << 14;

struct PairScan {
  size_t first_bad;  // pairs.size() when every pair has a < b < num_documents
  bool sorted_by_a;  // meaningful only when first_bad == pairs.size()
};

PairScan ScanPairs(uint64_t num_documents, std::span<const SimilarPair> pairs);

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_PAIR_SCAN_H_
