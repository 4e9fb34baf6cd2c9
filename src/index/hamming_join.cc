// All-pairs self-join of a clean run, and clusters by union-find.
//
// In each table, fingerprints that agree on the table's leading blocks are
// adjacent (the table is sorted), so the join compares only pairs inside runs
// of equal prefix, and keeps a pair only in its canonical table
// (HammingTable::IsCanonical): each pair once, without the N^2 comparisons.
#include <algorithm>
#include <atomic>
#include <utility>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "index/hamming_cpu.h"
#include "index/hamming_join.h"
#include "index/hamming_state.h"

namespace neardup::internal {
namespace {

// A task: slots [begin, end) of table `table`, cut at prefix-run boundaries.
struct JoinTask {
  int table;
  size_t begin;
  size_t end;
};

std::vector<JoinTask> MakeTasks(const HammingLayout& layout, const HammingRun& run, int table_begin,
                                int table_end) {
  constexpr size_t kPiece = size_t{1} << 15;
  std::vector<JoinTask> tasks;
  const size_t n = run.num_fps();
  for (int t = table_begin; t < table_end; ++t) {
    std::span<const uint64_t> values = run.arrays().tables[t];
    const int shift = 64 - layout.table(t).prefix_bits;
    size_t begin = 0;
    while (begin < n) {
      size_t end = std::min(n, begin + kPiece);
      while (end < n && (values[end] >> shift) == (values[end - 1] >> shift)) ++end;
      tasks.push_back({t, begin, end});
      begin = end;
    }
  }
  return tasks;
}

// Calls emit(a, b, distance) for each pair of fingerprints of `task` whose
// canonical table is task.table.
template <typename Emit>
inline void JoinTaskImpl(const HammingLayout& layout, const HammingRun& run, const JoinTask& task,
                         Emit&& emit) {
  JoinSortedRuns(layout.table(task.table), layout.max_distance(), run.arrays().tables[task.table],
                 task.begin, task.end, std::forward<Emit>(emit));
}

NEARDUP_POPCNT_CLONES
void CollectPairs(const HammingLayout& layout, const HammingRun& run, const JoinTask& task,
                  std::vector<FpPair>* out) {
  JoinTaskImpl(layout, run, task, [&](uint64_t a, uint64_t b, int d) {
    out->push_back({a, b, d});
  });
}

// Lock-free union-find over slots: links the larger root under the smaller
// with a compare-and-swap, so the final partition and its roots (the
// smallest slots) do not depend on the order of unions across threads.
class ConcurrentUnionFind {
 public:
  explicit ConcurrentUnionFind(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i].store(static_cast<uint32_t>(i));
  }
  uint32_t Find(uint32_t x) {
    while (true) {
      uint32_t p = parent_[x].load(std::memory_order_relaxed);
      if (p == x) return x;
      uint32_t g = parent_[p].load(std::memory_order_relaxed);
      // Path halving; losing the race is harmless (g is an ancestor of x).
      parent_[x].compare_exchange_weak(p, g, std::memory_order_relaxed);
      x = g;
    }
  }
  void Union(uint32_t a, uint32_t b) {
    while (true) {
      a = Find(a);
      b = Find(b);
      if (a == b) return;
      if (a > b) std::swap(a, b);
      uint32_t expected = b;
      if (parent_[b].compare_exchange_strong(expected, a, std::memory_order_relaxed)) return;
    }
  }

 private:
  std::vector<std::atomic<uint32_t>> parent_;
};

NEARDUP_POPCNT_CLONES
void UnionPairs(const HammingLayout& layout, const HammingRun& run, const JoinTask& task,
                ConcurrentUnionFind* uf) {
  if (task.table == 0) {
    // Table 0 is the fingerprint array: slots are positions.
    const uint64_t* base = run.arrays().fps.data();
    JoinTaskImpl(layout, run, task, [&](uint64_t a, uint64_t b, int) {
      const size_t sa = std::lower_bound(base + task.begin, base + task.end, a) - base;
      const size_t sb = std::lower_bound(base + task.begin, base + task.end, b) - base;
      if (sa < task.end && sb < task.end) {  // else only in a corrupt mapped file
        uf->Union(static_cast<uint32_t>(sa), static_cast<uint32_t>(sb));
      }
    });
    return;
  }
  JoinTaskImpl(layout, run, task, [&](uint64_t a, uint64_t b, int) {
    std::optional<size_t> sa = run.FindFingerprint(a);
    std::optional<size_t> sb = run.FindFingerprint(b);
    if (sa && sb) uf->Union(static_cast<uint32_t>(*sa), static_cast<uint32_t>(*sb));
  });
}

}  // namespace

std::vector<HammingPair> SelfJoinRun(const HammingLayout& layout, const HammingRun& run,
                                     uint64_t table_begin, uint64_t table_end) {
  std::vector<JoinTask> tasks =
      MakeTasks(layout, run, static_cast<int>(table_begin), static_cast<int>(table_end));
  std::vector<std::vector<FpPair>> found(tasks.size());
  tbb::parallel_for(size_t{0}, tasks.size(),
                    [&](size_t i) { CollectPairs(layout, run, tasks[i], &found[i]); });
  std::vector<HammingPair> pairs;
  const auto& ids = run.arrays().ids;
  // Entries sharing a fingerprint: distance 0, in no table's join; they go
  // with table 0.
  const size_t equal_fingerprint_slots = table_begin == 0 && table_end > 0 ? run.num_fps() : 0;
  for (size_t slot = 0; slot < equal_fingerprint_slots; ++slot) {
    auto [begin, end] = run.IdRange(slot);
    const uint64_t fp = run.arrays().fps[slot];
    for (size_t p = begin; p < end; ++p) {
      for (size_t q = p + 1; q < end; ++q) pairs.push_back(MakePair({fp, ids[p]}, {fp, ids[q]}, 0));
    }
  }
  for (const auto& task_pairs : found) {
    for (const FpPair& fp_pair : task_pairs) {
      std::optional<size_t> sa = run.FindFingerprint(fp_pair.a);
      std::optional<size_t> sb = run.FindFingerprint(fp_pair.b);
      if (!sa || !sb) continue;
      auto [ab, ae] = run.IdRange(*sa);
      auto [bb, be] = run.IdRange(*sb);
      for (size_t p = ab; p < ae; ++p) {
        for (size_t q = bb; q < be; ++q) {
          pairs.push_back(MakePair({fp_pair.a, ids[p]}, {fp_pair.b, ids[q]}, fp_pair.distance));
        }
      }
    }
  }
  tbb::parallel_sort(pairs.begin(), pairs.end(), PairLess);
  return pairs;
}

HammingClusters ClustersOfRun(const HammingLayout& layout, const HammingRun& run,
                              size_t min_cluster_size) {
  const size_t n = run.num_fps();
  ConcurrentUnionFind uf(n);
  // A partial index unites the pairs of its tables only (entries of one
  // fingerprint share a slot, so they are always together).
  std::vector<JoinTask> tasks = MakeTasks(layout, run, layout.held_begin(), layout.held_end());
  tbb::parallel_for(size_t{0}, tasks.size(),
                    [&](size_t i) { UnionPairs(layout, run, tasks[i], &uf); });
  // Per root slot: entry count and smallest member in (id, fingerprint) order.
  std::vector<uint32_t> root(n);
  tbb::parallel_for(size_t{0}, n, [&](size_t s) { root[s] = uf.Find(static_cast<uint32_t>(s)); });
  std::vector<uint64_t> count(n, 0);
  std::vector<HammingEntry> smallest(n);
  const auto& ids = run.arrays().ids;
  const auto& fps = run.arrays().fps;
  for (size_t s = 0; s < n; ++s) {
    auto [begin, end] = run.IdRange(s);
    if (begin == end) continue;
    HammingEntry first{fps[s], ids[begin]};  // ids of a slot are sorted
    uint32_t r = root[s];
    if (count[r] == 0 || EntryLess(first, smallest[r])) smallest[r] = first;
    count[r] += end - begin;
  }
  struct Keyed {
    HammingEntry cluster;  // smallest member
    HammingEntry member;
  };
  std::vector<Keyed> keyed;
  for (size_t s = 0; s < n; ++s) {
    uint32_t r = root[s];
    if (count[r] < min_cluster_size || count[r] == 0) continue;
    auto [begin, end] = run.IdRange(s);
    for (size_t p = begin; p < end; ++p) keyed.push_back({smallest[r], {fps[s], ids[p]}});
  }
  tbb::parallel_sort(keyed.begin(), keyed.end(), [](const Keyed& x, const Keyed& y) {
    if (x.cluster != y.cluster) return EntryLess(x.cluster, y.cluster);
    return EntryLess(x.member, y.member);
  });
  HammingClusters out;
  out.members.reserve(keyed.size());
  out.offsets.push_back(0);
  for (size_t i = 0; i < keyed.size(); ++i) {
    if (i > 0 && keyed[i].cluster != keyed[i - 1].cluster) out.offsets.push_back(i);
    out.members.push_back(keyed[i].member);
  }
  if (!keyed.empty()) out.offsets.push_back(keyed.size());
  return out;
}

}  // namespace neardup::internal
