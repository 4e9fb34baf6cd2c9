// ChunkIndex lookups: one chunk, or many with their memory accesses
// overlapped (group prefetching); both first ask the key filter of a small
// index.
#include <algorithm>

#include "neardup/check.h"
#include "neardup/chunk_index.h"

namespace neardup {

std::span<const uint32_t> ChunkIndex::Postings(uint32_t chunk) const {
  if (!filter_.empty()) {
    const uint32_t f = chunk >> filter_shift_;
    if (((filter_[f / 64] >> (f % 64)) & 1) == 0) return {};
  }
  const size_t b = static_cast<size_t>(uint64_t{chunk} >> directory_shift_);
  // Every range read from a (possibly corrupt, unverified) file is clamped.
  size_t lo = directory_[b];
  size_t hi = std::min<size_t>(directory_[b + 1], keys_.size());
  if (lo >= hi) return {};
  auto it = std::lower_bound(keys_.begin() + lo, keys_.begin() + hi, chunk);
  if (it == keys_.begin() + hi || *it != chunk) return {};
  size_t k = static_cast<size_t>(it - keys_.begin());
  uint64_t begin = offsets_[k];
  uint64_t end = std::min<uint64_t>(offsets_[k + 1], docs_.size());
  if (begin >= end) return {};
  return docs_.subspan(begin, end - begin);
}

namespace {

// Lookups in flight at once: enough to cover the latency of a cache miss
// (a core keeps 16-48 misses outstanding), few enough that the lines of a
// group stay in the L1 cache until its next step reads them.
constexpr size_t kGroup = 32;

inline void Prefetch(const void* address) { __builtin_prefetch(address, 0, 3); }

}  // namespace

void ChunkIndex::PostingsOfEach(std::span<const uint32_t> chunks,
                                std::span<std::span<const uint32_t>> out) const {
  NEARDUP_CHECK(out.size() == chunks.size()) << out.size() << " " << chunks.size();
  const uint32_t* keys = keys_.data();
  size_t base[kGroup];  // of the key range searched for chunk j
  size_t len[kGroup];   // its length: the lower bound is in [base, base + len]
  size_t end[kGroup];   // the end of chunk j's bucket
  for (size_t g = 0; g < chunks.size(); g += kGroup) {
    const size_t m = std::min(kGroup, chunks.size() - g);
    // The chunks the key filter lets through (all without a filter), the
    // others answered empty at once; c[j] is chunk at[j] of the group.
    uint32_t c[kGroup];
    size_t at[kGroup];
    size_t n = 0;
    for (size_t i = 0; i < m; ++i) {
      const uint32_t chunk = chunks[g + i];
      out[g + i] = {};
      if (!filter_.empty()) {
        const uint32_t b = chunk >> filter_shift_;
        if (((filter_[b / 64] >> (b % 64)) & 1) == 0) continue;
      }
      c[n] = chunk;
      at[n++] = g + i;
    }
    // Step 1: the directory entries.
    for (size_t j = 0; j < n; ++j) Prefetch(&directory_[uint64_t{c[j]} >> directory_shift_]);
    // Step 2: the bucket ranges (clamped as in Postings).
    size_t longest = 0;
    for (size_t j = 0; j < n; ++j) {
      const size_t b = static_cast<size_t>(uint64_t{c[j]} >> directory_shift_);
      const size_t lo = std::min<size_t>(directory_[b], keys_.size());
      const size_t hi = std::min<size_t>(directory_[b + 1], keys_.size());
      base[j] = lo;
      len[j] = hi > lo ? hi - lo : 0;
      end[j] = hi;
      // The bucket's keys, up to 4 cache lines: the lines the search reads
      // (a bucket holds about 4 keys in a small index, about num_keys /
      // 65536 in a large one).
      if (len[j] > 0) {
        Prefetch(keys + lo);
        Prefetch(keys + lo + len[j] / 3);
        Prefetch(keys + lo + len[j] * 2 / 3);
        Prefetch(keys + hi - 1);
      }
      longest = std::max(longest, len[j]);
    }
    // Step 3: the binary searches in lockstep, one halving per round for
    // every chunk of the group (branch-free: base moves or stays), each
    // prefetching its next probe. Ends with len 1 (or 0: an empty bucket):
    // the lower bound is base or base + 1.
    while (longest > 1) {
      longest = 0;
      for (size_t j = 0; j < n; ++j) {
        if (len[j] <= 1) continue;
        const size_t half = len[j] / 2;
        base[j] = keys[base[j] + half] < c[j] ? base[j] + half : base[j];
        len[j] -= half;
        Prefetch(keys + base[j] + len[j] / 2);
        longest = std::max(longest, len[j]);
      }
    }
    // Step 4: the offsets of the keys found.
    for (size_t j = 0; j < n; ++j) {
      if (len[j] == 0) continue;
      if (keys[base[j]] < c[j]) ++base[j];
      if (base[j] == end[j] || keys[base[j]] != c[j]) {
        len[j] = 0;
        continue;
      }
      Prefetch(&offsets_[base[j]]);
      Prefetch(&offsets_[base[j] + 1]);
    }
    // Step 5: the posting lists (their first line fetched for the caller).
    for (size_t j = 0; j < n; ++j) {
      if (len[j] == 0) continue;
      const uint64_t first = offsets_[base[j]];
      const uint64_t last = std::min<uint64_t>(offsets_[base[j] + 1], docs_.size());
      if (first >= last) continue;
      out[at[j]] = docs_.subspan(first, last - first);
      Prefetch(out[at[j]].data());
    }
  }
}

}  // namespace neardup
