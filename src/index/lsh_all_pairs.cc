// LshIndex::AllPairCandidates: every pair of documents that share a band
// key, each pair once, grouped chain by chain on all cores.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "index/lsh_index_state.h"
#include "neardup/lsh_index.h"
#include "util/sorted_concatenation.h"

namespace neardup {
namespace {

using internal::ChainLink;
using internal::LshBand;
using internal::LshIndexState;

constexpr uint32_t kNoChainSlot = internal::SlotTable::kNoSlot;

using Pair = std::pair<uint64_t, uint64_t>;

// Slots per task of AllPairCandidates: a task walks the chains whose heads
// lie in its slot range, so that every band splits into many tasks and the
// grouping uses every core even when there are fewer bands than cores. At
// most kGroupSlots, and small enough that a band has about kGroupTasks tasks
// (an index of few documents with many candidate pairs, where one band's
// chains emit most of them, still splits), but no fewer than kMinGroupSlots.
constexpr size_t kGroupSlots = size_t{1} << 15;
constexpr size_t kMinGroupSlots = size_t{1} << 10;
constexpr size_t kGroupTasks = 16;

size_t GroupSlots(size_t num_documents) {
  return std::clamp(num_documents / kGroupTasks, kMinGroupSlots, kGroupSlots);
}

// heads[slot] = the head slot of slot's chain in `band` (itself when alone),
// for the chains whose heads lie in [begin, end).
// REQUIRES: heads[s] == s for every s before the first call on a band.
void MarkChains(const LshBand& band, size_t begin, size_t end, uint32_t* heads) {
  for (size_t head = begin; head < end; ++head) {
    const ChainLink link = band.links[head];
    if (link.prev != kNoChainSlot || link.next == kNoChainSlot) continue;
    for (uint32_t slot = link.next; slot != kNoChainSlot; slot = band.links[slot].next) {
      heads[slot] = static_cast<uint32_t>(head);
    }
  }
}

// Appends every pair of documents of a chain of `band` headed in [begin,
// end) that no earlier band puts in one chain: `earlier_heads` are
// MarkChains' arrays of the bands before this one. So each candidate pair
// comes from the first band that finds it, exactly once, and the bands'
// lists need no merge to be unique. A chain of one (two keys that share only
// the high half) emits nothing.
void GroupBand(const LshBand& band, std::span<const uint32_t* const> earlier_heads,
               const internal::SegmentedArray<uint64_t>& doc_ids, size_t begin, size_t end,
               std::vector<Pair>& out) {
  struct Member {
    uint64_t id;
    uint32_t slot;
  };
  std::vector<Member> group;
  for (size_t head = begin; head < end; ++head) {
    const ChainLink link = band.links[head];
    if (link.prev != kNoChainSlot || link.next == kNoChainSlot) continue;
    group.clear();
    for (uint32_t slot = static_cast<uint32_t>(head); slot != kNoChainSlot;
         slot = band.links[slot].next) {
      group.push_back(Member{doc_ids[slot], slot});
    }
    std::sort(group.begin(), group.end(),
              [](const Member& x, const Member& y) { return x.id < y.id; });
    for (size_t i = 0; i < group.size(); ++i) {
      for (size_t j = i + 1; j < group.size(); ++j) {
        bool seen = false;
        for (const uint32_t* heads : earlier_heads) {
          if (heads[group[i].slot] == heads[group[j].slot]) {
            seen = true;
            break;
          }
        }
        if (!seen) out.emplace_back(group[i].id, group[j].id);
      }
    }
  }
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> LshIndex::AllPairCandidates(int bands_per_pass) const {
  const LshIndexState& s = *state_;
  const int num_bands = s.params.num_bands;
  const int per_pass = std::clamp(bands_per_pass, 1, num_bands);
  std::vector<Pair> result;
  const size_t n = s.doc_ids.size();
  if (n < 2) return result;
  const size_t slots_per_task = GroupSlots(n);
  const size_t chunks = (n + slots_per_task - 1) / slots_per_task;
  // The chains of every band but the last, for GroupBand's first-band rule:
  // 4 bytes per document and band.
  std::vector<std::unique_ptr<uint32_t[]>> head_storage(num_bands - 1);
  std::vector<const uint32_t*> heads(head_storage.size());
  tbb::parallel_for(size_t{0}, head_storage.size(), [&](size_t band) {
    head_storage[band].reset(new uint32_t[n]);
    std::iota(head_storage[band].get(), head_storage[band].get() + n, uint32_t{0});
    heads[band] = head_storage[band].get();
  });
  tbb::parallel_for(size_t{0}, head_storage.size() * chunks, [&](size_t task) {
    const size_t begin = task % chunks * slots_per_task;
    MarkChains(s.bands[task / chunks], begin, std::min(n, begin + slots_per_task),
               head_storage[task / chunks].get());
  });
  // Groups per_pass bands at a time, each in slot ranges on all cores. The
  // lists are disjoint, so the result is their concatenation, sorted: one
  // list of the total size, its pages faulted in on all cores, each task's
  // pairs placed in buckets of their first id and the list freed, the
  // buckets sorted on all cores (util/sorted_concatenation.h; a sort of the
  // whole concatenation was ~12% of a one-thread `dedup`).
  std::vector<std::vector<Pair>> lists(static_cast<size_t>(num_bands) * chunks);
  for (int first = 0; first < num_bands; first += per_pass) {
    const int count = std::min(per_pass, num_bands - first);
    tbb::parallel_for(size_t{0}, static_cast<size_t>(count) * chunks, [&](size_t task) {
      const int band = first + static_cast<int>(task / chunks);
      const size_t begin = task % chunks * slots_per_task;
      GroupBand(s.bands[band], std::span<const uint32_t* const>(heads).first(band), s.doc_ids,
                begin, std::min(n, begin + slots_per_task),
                lists[static_cast<size_t>(first) * chunks + task]);
    });
  }
  return internal::SortedConcatenation(std::span<std::vector<Pair>>(lists),
                                       [](const Pair& pair) { return pair.first; });
}

}  // namespace neardup
