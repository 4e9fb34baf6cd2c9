// The sort and merge of candidate lists (candidate_runs.h).
#include "candidate_runs.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "radix_sort.h"

namespace neardup::mpi {

void SortUnique(std::vector<CandidatePair>* candidates) {
  StageBlock scratch;
  SortUnique(candidates, &scratch);
}

void SortUnique(std::vector<CandidatePair>* candidates, StageBlock* scratch) {
  uint64_t largest = 0;
  for (const CandidatePair& pair : *candidates) largest = std::max({largest, pair.a, pair.b});
  const int bits = std::bit_width(largest);
  if (bits > 32 || candidates->size() < 64) {
    std::sort(candidates->begin(), candidates->end());
    candidates->erase(std::unique(candidates->begin(), candidates->end()), candidates->end());
    return;
  }
  // Documents below 2^bits <= 2^32: (a, b) packed as a << bits | b sorts
  // in the same order (radix_sort.h), in as few digits as the documents
  // need (1M documents: 40 bits, 4 digits; a << 32 took 5).
  const uint64_t low = (uint64_t{1} << bits) - 1;
  const size_t n = candidates->size();
  const std::span<uint64_t> lists = scratch->Take<uint64_t>(2 * n);
  const std::span<uint64_t> keys = lists.first(n);
  for (size_t i = 0; i < n; ++i) keys[i] = (*candidates)[i].a << bits | (*candidates)[i].b;
  // The pairs are written back into their own block (no fresh one: a
  // list of fresh pages is zeroed by the kernel first). The list, the keys
  // and RadixSort's scratch are live at once: 32 B a pair at the peak
  // (freeing the list before the sort peaked at 24 B, but zeroed a fresh
  // 16 B a pair for the result).
  const std::span<uint64_t> sorted = RadixSort(keys, lists.subspan(n));
  const size_t unique =
      static_cast<size_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
  candidates->resize(unique);  // shorter: nothing initialised
  for (size_t i = 0; i < unique; ++i) {
    (*candidates)[i] = {sorted[i] >> bits, sorted[i] & low};
  }
}

namespace {

Status OutsideTheDocuments(const CandidatePair& bad, uint64_t num_documents) {
  return DataLossError("candidate (" + std::to_string(bad.a) + ", " + std::to_string(bad.b) +
                       ") outside the " + std::to_string(num_documents) +
                       " documents (ranks out of step)");
}

Status RunNotSorted() {
  return DataLossError("a run of candidates is not sorted (ranks out of step)");
}

// A run's pair i, read with memcpy (its bytes need not be aligned).
CandidatePair PairAt(std::string_view run, size_t i) {
  CandidatePair pair;
  std::memcpy(&pair, run.data() + i * sizeof(CandidatePair), sizeof(CandidatePair));
  return pair;
}

// Gives the whole pages of [begin, end) back to the kernel: the slots
// past a merged list's end, written by the merge (the repeats it dropped:
// pairs found by several key owners or rounds), would otherwise stay
// resident through verification, where a rank's memory peaks. Read
// again, they are zero pages; written, fresh ones.
void ReleasePages(CandidatePair* begin, CandidatePair* end) {
#if defined(__linux__)
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(end) / page * page;
  if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
  (void)begin;
  (void)end;
#endif
}

}  // namespace

Result<std::vector<CandidatePair>> MergeUnique(std::span<const std::string_view> runs,
                                               uint64_t num_documents, bool spare_quarter) {
  const auto at = [&](size_t run, size_t i) { return PairAt(runs[run], i); };
  size_t total = 0;
  for (std::string_view run : runs) total += run.size() / sizeof(CandidatePair);
  std::vector<CandidatePair> merged;
  merged.reserve(total + (spare_quarter ? total / 4 : 0));
  // Sorted runs merge into ascending pairs; a run out of order makes a
  // later pair smaller than the last one appended.
  bool in_order = true;
  bool in_range = true;
  CandidatePair bad{};
  const auto append = [&](const CandidatePair& pair) {
    if (!(pair.a < pair.b && pair.b < num_documents)) {
      if (in_range) bad = pair;
      in_range = false;
      return;
    }
    if (merged.empty() || merged.back() < pair) {
      merged.push_back(pair);
    } else if (pair < merged.back()) {
      in_order = false;
    }
  };
  // A heap of the runs' next pairs (two runs, the common case, merge in
  // the same loop: the heap holds at most one entry per run).
  std::vector<std::pair<CandidatePair, size_t>> heap;  // (next pair, run)
  std::vector<size_t> next(runs.size(), 0);
  const auto later = [](const std::pair<CandidatePair, size_t>& x,
                        const std::pair<CandidatePair, size_t>& y) { return x.first > y.first; };
  for (size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].size() >= sizeof(CandidatePair)) heap.emplace_back(at(r, 0), r);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    auto& [pair, run] = heap.back();
    append(pair);
    if (++next[run] < runs[run].size() / sizeof(CandidatePair)) {
      pair = at(run, next[run]);
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  if (!in_range) return OutsideTheDocuments(bad, num_documents);
  if (!in_order) return RunNotSorted();
  return merged;
}

// MergeUnique's heap merge and checks run backwards here, not through one
// helper templated on the direction: the two differ in how run 0 is read
// (from the output block), where pairs go (push_back against writes from
// the back) and which neighbour a repeat or an out-of-order pair is
// compared with; a helper taking all three would be longer than the loop.
Result<bool> MergeUniqueInPlace(std::vector<CandidatePair>* list,
                                std::span<const std::string_view> others, uint64_t num_documents,
                                bool spare_quarter) {
  // Run 0 is *list (its first `own` slots), run r + 1 is others[r]; left[r]:
  // the pairs of run r not yet taken (each run is read from its back).
  const size_t own = list->size();
  std::vector<size_t> left{own};
  size_t total = own;
  for (std::string_view run : others) {
    left.push_back(run.size() / sizeof(CandidatePair));
    total += left.back();
  }
  if (list->capacity() < total + (spare_quarter ? total / 4 : 0)) return false;
  list->resize(total);  // within the capacity: the same block
  CandidatePair* const out = list->data();
  const auto at = [&](size_t run, size_t i) {
    return run == 0 ? out[i] : PairAt(others[run - 1], i);
  };
  // The union so far is out[write, total), ascending. Invariant: write >=
  // left[0] (the pairs written are at most those taken from *list plus all
  // the others' pairs), so a pair of *list not yet taken is never
  // overwritten; the one at left[0] - 1 is already copied into the heap.
  size_t write = total;
  bool in_order = true;
  bool in_range = true;
  CandidatePair bad{};
  // A heap of the runs' last untaken pairs, the largest on top.
  std::vector<std::pair<CandidatePair, size_t>> heap;  // (pair, run)
  const auto before = [](const std::pair<CandidatePair, size_t>& x,
                         const std::pair<CandidatePair, size_t>& y) { return x.first < y.first; };
  for (size_t r = 0; r < left.size(); ++r) {
    if (left[r] > 0) heap.emplace_back(at(r, left[r] - 1), r);
  }
  std::make_heap(heap.begin(), heap.end(), before);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), before);
    auto& [pair, run] = heap.back();
    if (!(pair.a < pair.b && pair.b < num_documents)) {
      if (in_range) bad = pair;
      in_range = false;
    } else if (write == total || pair < out[write]) {
      out[--write] = pair;
    } else if (out[write] < pair) {
      in_order = false;  // a run's later pair is smaller than one taken after it
    }
    if (--left[run] > 0) {
      pair = at(run, left[run] - 1);
      std::push_heap(heap.begin(), heap.end(), before);
    } else {
      heap.pop_back();
    }
  }
  if (!in_range) return OutsideTheDocuments(bad, num_documents);
  if (!in_order) return RunNotSorted();
  const size_t merged = total - write;
  if (write != 0 && merged != 0) std::memmove(out, out + write, merged * sizeof(CandidatePair));
  list->resize(merged);
  ReleasePages(out + merged, out + total);
  return true;
}

}  // namespace neardup::mpi
