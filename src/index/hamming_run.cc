#include "index/hamming_run.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>
#include <type_traits>

#include <tbb/parallel_for.h>

#include "index/hamming_cpu.h"
#include "index/hamming_state.h"

namespace neardup::internal {
namespace {

// Allocates arrays of 2 MiB and more on huge pages where the kernel offers
// them (queries touch random cache lines of tables of many MiB: with 4 KiB
// pages nearly every probe is also a TLB miss), and leaves elements
// uninitialised on resize (every element is written before it is read).
template <typename T>
struct TableAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t{1} << 21;
  TableAllocator() = default;
  template <typename U>
  TableAllocator(const TableAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHuge) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }
  template <typename U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const TableAllocator&, const TableAllocator&) { return true; }
};

template <typename T>
using TableVector = std::vector<T, TableAllocator<T>>;

// Owned storage of a run built in memory. tables[0] stays empty: table 0 is
// fps (identity permutation).
struct OwnedRun {
  TableVector<uint64_t> fps;
  TableVector<uint32_t> id_begin;
  TableVector<uint64_t> ids;
  std::vector<TableVector<uint64_t>> tables;
  std::vector<std::vector<uint32_t>> dirs;
};

std::unique_ptr<HammingRun> FromOwned(std::shared_ptr<OwnedRun> owned, std::vector<int> dir_bits) {
  RunArrays arrays;
  arrays.fps = owned->fps;
  arrays.id_begin = owned->id_begin;
  arrays.ids = owned->ids;
  arrays.tables.resize(owned->dirs.size());
  arrays.dirs.resize(owned->dirs.size());
  for (size_t t = 0; t < owned->dirs.size(); ++t) {
    arrays.tables[t] = t == 0 ? std::span<const uint64_t>(owned->fps)
                              : std::span<const uint64_t>(owned->tables[t]);
    arrays.dirs[t] = owned->dirs[t];
  }
  arrays.dir_bits = std::move(dir_bits);
  return HammingRun::FromArrays(std::move(arrays), std::move(owned));
}

// Sorts a small range in place (buckets hold ~4-8 values).
template <typename T>
void InsertionSort(T* first, T* last) {
  for (T* i = first + 1; i < last; ++i) {
    T v = *i;
    T* j = i;
    while (j > first && v < *(j - 1)) {
      *j = *(j - 1);
      --j;
    }
    *j = v;
  }
}

template <typename T>
void SortBucket(T* first, T* last) {
  if (last - first <= 32) {
    InsertionSort(first, last);
  } else {
    std::sort(first, last);
  }
}

// Sorts key(in[i]) into `out` by a counting sort on the top `bits` bits
// (which also yields the directory), then sorts each bucket: about two linear
// passes instead of an O(n log n) sort. `key` is applied twice per element
// rather than materialising the keys.
template <typename T, typename In, typename Key>
void SortTable(std::span<const In> in, int bits, Key key, TableVector<T>* out,
               std::vector<uint32_t>* dir) {
  const int shift = 64 - bits;
  dir->assign(DirectoryEntries(bits), 0);
  auto top = [&](const T& v) {
    if constexpr (std::is_same_v<T, HammingEntry>) {
      return v.fingerprint >> shift;
    } else {
      return v >> shift;
    }
  };
  for (const In& x : in) ++(*dir)[top(key(x)) + 1];
  for (size_t h = 1; h < dir->size(); ++h) (*dir)[h] += (*dir)[h - 1];
  std::vector<uint32_t> next(dir->begin(), dir->end() - 1);
  out->resize(in.size());
  for (const In& x : in) {
    T v = key(x);
    (*out)[next[top(v)]++] = v;
  }
  for (size_t h = 0; h + 1 < dir->size(); ++h) {
    if ((*dir)[h + 1] - (*dir)[h] > 1) {
      SortBucket(out->data() + (*dir)[h], out->data() + (*dir)[h + 1]);
    }
  }
}

// The scan of HammingRun::Scan, compiled twice: with the popcnt instruction
// and without (the baseline x86-64 target has none), chosen at load time.
NEARDUP_POPCNT_CLONES
void ScanImpl(const RunArrays& a, const HammingLayout& layout, uint64_t query,
              std::vector<ScanHit>* hits) {
  const int k = layout.max_distance();
  const size_t num_fps = a.fps.size();
  for (int t = 0; t < layout.num_tables(); ++t) {
    const HammingTable& table = layout.table(t);
    const uint64_t permuted = table.forward.Apply(query);
    const size_t h = permuted >> (64 - a.dir_bits[t]);
    const uint32_t* dir = a.dirs[t].data();
    const size_t begin = dir[h];
    const size_t end = std::min<size_t>(dir[h + 1], num_fps);
    const uint64_t* values = a.tables[t].data();
    for (size_t s = begin; s < end; ++s) {
      const uint64_t diff = values[s] ^ permuted;
      const int distance = std::popcount(diff);
      if (distance <= k && table.IsCanonical(diff)) {
        hits->push_back({table.inverse.Apply(values[s]), distance});
      }
    }
  }
}

NEARDUP_POPCNT_CLONES
void ScanBatchImpl(const RunArrays& a, const HammingLayout& layout, const uint64_t* queries,
                   size_t num_queries, std::vector<BatchHit>* hits) {
  const int k = layout.max_distance();
  const int num_tables = layout.num_tables();
  const size_t num_fps = a.fps.size();
  // Per (table, query): the permuted query, then its bucket.
  thread_local std::vector<uint64_t> permuted;
  thread_local std::vector<uint32_t> begins, ends;
  const size_t probes = static_cast<size_t>(num_tables) * num_queries;
  if (permuted.size() < probes) {
    permuted.resize(probes);
    begins.resize(probes);
    ends.resize(probes);
  }
  size_t p = 0;
  for (int t = 0; t < num_tables; ++t) {
    const BitMoves& forward = layout.table(t).forward;
    const int shift = 64 - a.dir_bits[t];
    const uint32_t* dir = a.dirs[t].data();
    for (size_t i = 0; i < num_queries; ++i, ++p) {
      permuted[p] = forward.Apply(queries[i]);
      __builtin_prefetch(dir + (permuted[p] >> shift));
    }
  }
  p = 0;
  for (int t = 0; t < num_tables; ++t) {
    const int shift = 64 - a.dir_bits[t];
    const uint32_t* dir = a.dirs[t].data();
    const uint64_t* values = a.tables[t].data();
    for (size_t i = 0; i < num_queries; ++i, ++p) {
      const size_t h = permuted[p] >> shift;
      const uint32_t end = static_cast<uint32_t>(std::min<size_t>(dir[h + 1], num_fps));
      const uint32_t begin = std::min(dir[h], end);
      begins[p] = begin;
      ends[p] = end;
      if (begin < end) __builtin_prefetch(values + begin);
    }
  }
  p = 0;
  for (int t = 0; t < num_tables; ++t) {
    const HammingTable& table = layout.table(t);
    const uint64_t* values = a.tables[t].data();
    for (size_t i = 0; i < num_queries; ++i, ++p) {
      for (size_t s = begins[p]; s < ends[p]; ++s) {
        const uint64_t diff = values[s] ^ permuted[p];
        const int distance = std::popcount(diff);
        if (distance <= k && table.IsCanonical(diff)) {
          hits->push_back({static_cast<uint32_t>(i), distance, table.inverse.Apply(values[s])});
        }
      }
    }
  }
}

}  // namespace

void SortEntries(std::span<const HammingEntry> in, std::vector<HammingEntry>* out) {
  TableVector<HammingEntry> sorted;
  std::vector<uint32_t> dir;
  SortTable<HammingEntry, HammingEntry>(
      in, RunDirectoryBits(in.size()), [](const HammingEntry& e) { return e; }, &sorted, &dir);
  out->assign(sorted.begin(), sorted.end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void HammingRun::ScanBatch(const HammingLayout& layout, std::span<const uint64_t> queries,
                           std::vector<BatchHit>* hits) const {
  if (arrays_.fps.empty() || queries.empty()) return;
  ScanBatchImpl(arrays_, layout, queries.data(), queries.size(), hits);
}

int RunDirectoryBits(size_t num_fps) {
  int bits = std::bit_width(num_fps) - 3;
  return std::clamp(bits, 1, 28);
}

void BuildDirectory(std::span<const uint64_t> table, int bits, std::vector<uint32_t>* dir) {
  const int shift = 64 - bits;
  dir->assign(DirectoryEntries(bits), 0);
  for (uint64_t v : table) ++(*dir)[(v >> shift) + 1];
  for (size_t h = 1; h < dir->size(); ++h) (*dir)[h] += (*dir)[h - 1];
}

std::unique_ptr<HammingRun> HammingRun::FromArrays(RunArrays arrays,
                                                   std::shared_ptr<const void> backing) {
  auto run = std::unique_ptr<HammingRun>(new HammingRun());
  run->arrays_ = std::move(arrays);
  run->backing_ = std::move(backing);
  return run;
}

std::unique_ptr<HammingRun> HammingRun::FromSortedEntries(const HammingLayout& layout,
                                                          std::span<const HammingEntry> entries) {
  NEARDUP_CHECK(entries.size() <= kMaxHammingEntries);
  auto owned = std::make_shared<OwnedRun>();
  owned->ids.resize(entries.size());
  owned->id_begin.reserve(entries.size() + 1);
  for (size_t i = 0; i < entries.size(); ++i) {
    NEARDUP_DCHECK(i == 0 || entries[i - 1] < entries[i]);
    if (i == 0 || entries[i].fingerprint != entries[i - 1].fingerprint) {
      owned->fps.push_back(entries[i].fingerprint);
      owned->id_begin.push_back(static_cast<uint32_t>(i));
    }
    owned->ids[i] = entries[i].id;
  }
  owned->id_begin.push_back(static_cast<uint32_t>(entries.size()));
  const int run_bits = RunDirectoryBits(owned->fps.size());
  const int num_tables = layout.num_tables();
  std::vector<int> dir_bits(num_tables);
  for (int t = 0; t < num_tables; ++t) dir_bits[t] = TableDirectoryBits(layout, run_bits, t);
  owned->tables.resize(num_tables);
  owned->dirs.resize(num_tables);
  tbb::parallel_for(0, num_tables, [&](int t) {
    if (t == 0) {
      BuildDirectory(owned->fps, dir_bits[0], &owned->dirs[0]);
      return;
    }
    const BitMoves& forward = layout.table(t).forward;
    SortTable<uint64_t, uint64_t>(
        owned->fps, dir_bits[t], [&](uint64_t fp) { return forward.Apply(fp); }, &owned->tables[t],
        &owned->dirs[t]);
  });
  return FromOwned(std::move(owned), std::move(dir_bits));
}

std::unique_ptr<HammingRun> HammingRun::Merge(const HammingLayout& layout, const HammingRun& a,
                                              const HammingRun* b) {
  static const HammingRun kEmpty;
  const HammingRun& bb = b != nullptr ? *b : kEmpty;
  const RunArrays& x = a.arrays_;
  const RunArrays& y = bb.arrays_;
  auto owned = std::make_shared<OwnedRun>();
  owned->fps.reserve(x.fps.size() + y.fps.size());
  owned->id_begin.reserve(x.fps.size() + y.fps.size() + 1);
  owned->ids.reserve(a.num_live() + bb.num_live());
  // Fingerprints stored in a or b that have no live id left: removed from
  // every table below.
  std::vector<uint64_t> dropped;
  std::vector<uint64_t> merged_ids;
  auto append_live = [&](const HammingRun& run, size_t slot) {
    auto [begin, end] = run.IdRange(slot);
    for (size_t p = begin; p < end; ++p) {
      if (!run.IsDead(p)) merged_ids.push_back(run.arrays_.ids[p]);
    }
  };
  size_t i = 0, j = 0;
  while (i < x.fps.size() || j < y.fps.size()) {
    uint64_t fp;
    merged_ids.clear();
    if (j == y.fps.size() || (i < x.fps.size() && x.fps[i] < y.fps[j])) {
      fp = x.fps[i];
      append_live(a, i++);
    } else if (i == x.fps.size() || y.fps[j] < x.fps[i]) {
      fp = y.fps[j];
      append_live(bb, j++);
    } else {
      fp = x.fps[i];
      append_live(a, i++);
      size_t mid = merged_ids.size();
      append_live(bb, j++);
      std::inplace_merge(merged_ids.begin(), merged_ids.begin() + mid, merged_ids.end());
      merged_ids.erase(std::unique(merged_ids.begin(), merged_ids.end()), merged_ids.end());
    }
    if (merged_ids.empty()) {
      dropped.push_back(fp);
      continue;
    }
    owned->fps.push_back(fp);
    owned->id_begin.push_back(static_cast<uint32_t>(owned->ids.size()));
    owned->ids.insert(owned->ids.end(), merged_ids.begin(), merged_ids.end());
  }
  NEARDUP_CHECK(owned->ids.size() <= kMaxHammingEntries);
  owned->id_begin.push_back(static_cast<uint32_t>(owned->ids.size()));

  const int run_bits = RunDirectoryBits(owned->fps.size());
  const int num_tables = layout.num_tables();
  std::vector<int> dir_bits(num_tables);
  for (int t = 0; t < num_tables; ++t) dir_bits[t] = TableDirectoryBits(layout, run_bits, t);
  owned->tables.resize(num_tables);
  owned->dirs.resize(num_tables);
  tbb::parallel_for(0, num_tables, [&](int t) {
    if (t > 0) {
      const BitMoves& forward = layout.table(t).forward;
      std::vector<uint64_t> skip(dropped.size());
      for (size_t d = 0; d < dropped.size(); ++d) skip[d] = forward.Apply(dropped[d]);
      std::sort(skip.begin(), skip.end());
      std::span<const uint64_t> p = x.tables.empty() ? std::span<const uint64_t>() : x.tables[t];
      std::span<const uint64_t> q = y.tables.empty() ? std::span<const uint64_t>() : y.tables[t];
      TableVector<uint64_t>& out = owned->tables[t];
      out.reserve(owned->fps.size());
      size_t pi = 0, qi = 0, si = 0;
      while (pi < p.size() || qi < q.size()) {
        uint64_t v;
        if (qi == q.size() || (pi < p.size() && p[pi] < q[qi])) {
          v = p[pi++];
        } else if (pi == p.size() || q[qi] < p[pi]) {
          v = q[qi++];
        } else {
          v = p[pi++];
          ++qi;
        }
        while (si < skip.size() && skip[si] < v) ++si;
        if (si < skip.size() && skip[si] == v) continue;
        out.push_back(v);
      }
    }
    BuildDirectory(t == 0 ? std::span<const uint64_t>(owned->fps) : owned->tables[t], dir_bits[t],
                   &owned->dirs[t]);
  });
  return FromOwned(std::move(owned), std::move(dir_bits));
}

size_t HammingRun::MemoryBytes() const {
  size_t bytes = arrays_.fps.size_bytes() + arrays_.id_begin.size_bytes() +
                 arrays_.ids.size_bytes() + dead_.size() * sizeof(uint64_t);
  for (size_t t = 1; t < arrays_.tables.size(); ++t) bytes += arrays_.tables[t].size_bytes();
  for (const auto& dir : arrays_.dirs) bytes += dir.size_bytes();
  return bytes;
}

std::optional<size_t> HammingRun::FindFingerprint(uint64_t fingerprint) const {
  if (arrays_.fps.empty()) return std::nullopt;
  const size_t h = fingerprint >> (64 - arrays_.dir_bits[0]);
  const size_t end = std::min<size_t>(arrays_.dirs[0][h + 1], arrays_.fps.size());
  const size_t begin = std::min<size_t>(arrays_.dirs[0][h], end);
  auto it = std::lower_bound(arrays_.fps.begin() + begin, arrays_.fps.begin() + end, fingerprint);
  if (it == arrays_.fps.begin() + end || *it != fingerprint) return std::nullopt;
  return static_cast<size_t>(it - arrays_.fps.begin());
}

std::pair<size_t, size_t> HammingRun::IdRange(size_t slot) const {
  const size_t end = std::min<size_t>(arrays_.id_begin[slot + 1], arrays_.ids.size());
  const size_t begin = std::min<size_t>(arrays_.id_begin[slot], end);
  return {begin, end};
}

std::optional<size_t> HammingRun::FindEntry(HammingEntry entry) const {
  std::optional<size_t> slot = FindFingerprint(entry.fingerprint);
  if (!slot) return std::nullopt;
  auto [begin, end] = IdRange(*slot);
  auto it = std::lower_bound(arrays_.ids.begin() + begin, arrays_.ids.begin() + end, entry.id);
  if (it == arrays_.ids.begin() + end || *it != entry.id) return std::nullopt;
  return static_cast<size_t>(it - arrays_.ids.begin());
}

void HammingRun::MarkDead(size_t pos) {
  if (dead_.empty()) dead_.assign((num_ids() + 63) / 64, 0);
  uint64_t bit = uint64_t{1} << (pos % 64);
  if ((dead_[pos / 64] & bit) == 0) {
    dead_[pos / 64] |= bit;
    ++num_dead_;
  }
}

void HammingRun::Revive(size_t pos) {
  if (!IsDead(pos)) return;
  dead_[pos / 64] &= ~(uint64_t{1} << (pos % 64));
  --num_dead_;
}

void HammingRun::Scan(const HammingLayout& layout, uint64_t query,
                      std::vector<ScanHit>* hits) const {
  if (arrays_.fps.empty()) return;
  ScanImpl(arrays_, layout, query, hits);
}

}  // namespace neardup::internal

namespace neardup::internal {

NEARDUP_POPCNT_CLONES
void ScanEntries(std::span<const HammingEntry> entries, uint64_t query, int max_distance,
                 std::vector<HammingMatch>* out) {
  for (const HammingEntry& e : entries) {
    const int distance = std::popcount(e.fingerprint ^ query);
    if (distance <= max_distance) out->push_back({e.fingerprint, e.id, distance});
  }
}

}  // namespace neardup::internal
