#include "index/hamming_run.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "index/hamming_cpu.h"
#include "index/hamming_state.h"
#include "util/insertion_sort.h"

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
    if (bytes < kHuge) return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHuge) {
      ::operator delete (p, std::align_val_t{alignof(T)});
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
  std::vector<TableVector<HammingLine>> lines;
};

std::unique_ptr<HammingRun> FromOwned(std::shared_ptr<OwnedRun> owned, std::vector<int> line_bits) {
  RunArrays arrays;
  arrays.fps = owned->fps;
  arrays.id_begin = owned->id_begin;
  arrays.ids = owned->ids;
  arrays.tables.resize(owned->lines.size());
  arrays.lines.resize(owned->lines.size());
  for (size_t t = 0; t < owned->lines.size(); ++t) {
    arrays.tables[t] = t == 0 ? std::span<const uint64_t>(owned->fps)
                              : std::span<const uint64_t>(owned->tables[t]);
    arrays.lines[t] = owned->lines[t];
  }
  arrays.line_bits = std::move(line_bits);
  return HammingRun::FromArrays(std::move(arrays), std::move(owned));
}

template <typename T>
void SortBucket(T* first, T* last) {
  if (last - first <= 32) {  // buckets hold ~4-8 values
    internal::InsertionSort(first, static_cast<size_t>(last - first));
  } else {
    std::sort(first, last);
  }
}

// Values PermuteChunk handles at once: its output stays in L1 while every
// move of the permutation is applied to it.
constexpr size_t kPermuteChunk = 512;

// out[i] = moves.Apply(in[i]) for i < n, one move at a time over the whole
// chunk: the same mask and shift for every lane, so the loops vectorise (a
// rotation becomes a shift: the moved bits never wrap).
// REQUIRES: n <= kPermuteChunk.
NEARDUP_AVX2_CLONES
void PermuteChunk(const uint64_t* __restrict in, size_t n, const BitMoves& moves,
                  uint64_t* __restrict out) {
  for (size_t i = 0; i < n; ++i) out[i] = 0;
  for (int m = 0; m < moves.num_moves; ++m) {
    const uint64_t mask = moves.moves[m].mask;
    const int shift = moves.moves[m].shift;
    if (shift >= 0) {
      for (size_t i = 0; i < n; ++i) out[i] |= (in[i] & mask) << shift;
    } else {
      const int right = -shift;
      for (size_t i = 0; i < n; ++i) out[i] |= (in[i] & mask) >> right;
    }
  }
}

// Bits of each digit of the radix sort of a table, and the digits sorted:
// the top 24 bits, least significant digit first. 4096 buckets per pass keep
// the scatter's write streams (256 KiB) in L2, where a counting sort on ~17
// top bits scatters to 128K places, a cache miss per value. Measured (1M
// random values, one core): 2 x 12 bits ~15% faster than 3 x 8.
constexpr int kDigitBits = 12;
constexpr int kNumDigits = 2;
constexpr int kRadixBits = kDigitBits * kNumDigits;

constexpr size_t kBuckets = size_t{1} << kDigitBits;

// The key of the radix sort: a table value, or an entry's fingerprint.
inline uint64_t SortKey(uint64_t v) { return v; }
inline uint64_t SortKey(const HammingEntry& e) { return e.fingerprint; }

// Digit d (0: least significant) of the top kRadixBits bits of `key`.
inline size_t Digit(uint64_t key, int d) {
  return static_cast<size_t>(key >> (64 - kRadixBits + d * kDigitBits)) & (kBuckets - 1);
}

// Adds the digits of keys to `counts` (kNumDigits x kBuckets).
template <typename T>
void CountDigits(const T* values, size_t n, uint32_t* counts) {
  for (size_t i = 0; i < n; ++i) {
    for (int d = 0; d < kNumDigits; ++d) ++counts[d * kBuckets + Digit(SortKey(values[i]), d)];
  }
}

// Sorts data[0, n) by operator<: an LSD radix sort on the top kRadixBits
// bits of the keys (digits with a single bucket skipped) moves the values to
// scratch and back, then a last pass sorts the runs that share those bits
// (for hashed keys nearly all of length one). `counts` holds CountDigits of
// the data and is clobbered. REQUIRES: scratch holds n values.
template <typename T>
void RadixSortTop(T* data, T* scratch, size_t n, uint32_t* counts) {
  if (n == 0) return;
  T* src = data;
  T* dst = scratch;
  for (int d = 0; d < kNumDigits; ++d) {
    uint32_t* next = counts + d * kBuckets;              // becomes the next slot of each bucket
    if (next[Digit(SortKey(src[0]), d)] == n) continue;  // one bucket: already in order
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t c = next[b];
      next[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) dst[next[Digit(SortKey(src[i]), d)]++] = src[i];
    std::swap(src, dst);
  }
  if (src != data) std::copy(src, src + n, data);
  const int shift = 64 - kRadixBits;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (SortKey(data[j]) >> shift) == (SortKey(data[i]) >> shift)) ++j;
    if (j - i > 1) SortBucket(data + i, data + j);
    i = j;
  }
}

// Sorts forward(fps[i]) into out[0, fps.size()): the values are permuted
// once, a chunk at a time, into `out` while their digits are counted (the
// chunk is still in L1), then radix sorted through `scratch`.
// REQUIRES: scratch and out hold fps.size() values.
void SortPermuted(std::span<const uint64_t> fps, const BitMoves& forward, uint64_t* scratch,
                  uint64_t* out) {
  const size_t n = fps.size();
  std::vector<uint32_t> counts(kNumDigits * kBuckets, 0);
  for (size_t i = 0; i < n; i += kPermuteChunk) {
    const size_t len = std::min(kPermuteChunk, n - i);
    PermuteChunk(fps.data() + i, len, forward, out + i);
    CountDigits(out + i, len, counts.data());
  }
  RadixSortTop(out, scratch, n, counts.data());
}

// A bit per fragment slot of `line` (0..kLineFragments-1) whose fragment
// equals `query_fragment` under `fragment_mask`. Slots past the line's
// entries may be set (they repeat the last fragment): callers mask them.
inline uint32_t FragmentMatches(const HammingLine& line, uint16_t query_fragment,
                                uint16_t fragment_mask) {
#if defined(__SSE2__)
  const __m128i q = _mm_set1_epi16(static_cast<short>(query_fragment & fragment_mask));
  const __m128i m = _mm_set1_epi16(static_cast<short>(fragment_mask));
  const __m128i zero = _mm_setzero_si128();
  const __m128i* chunks = reinterpret_cast<const __m128i*>(&line);
  auto equal = [&](int c) {
    return _mm_cmpeq_epi16(_mm_and_si128(_mm_xor_si128(_mm_load_si128(chunks + c), q), m), zero);
  };
  // The last chunk holds fragments 24..28, then count and begin.
  const __m128i fragments_of_last = _mm_setr_epi16(-1, -1, -1, -1, -1, 0, 0, 0);
  const __m128i low = _mm_packs_epi16(equal(0), equal(1));
  const __m128i high = _mm_packs_epi16(equal(2), _mm_and_si128(equal(3), fragments_of_last));
  return static_cast<uint32_t>(_mm_movemask_epi8(low)) |
         (static_cast<uint32_t>(_mm_movemask_epi8(high)) << 16);
#else
  uint32_t out = 0;
  for (int i = 0; i < kLineFragments; ++i) {
    out |= static_cast<uint32_t>(((line.fragment[i] ^ query_fragment) & fragment_mask) == 0) << i;
  }
  return out;
#endif
}

// The mask of the fragment bits that lie within table t's leading blocks:
// entries whose fragment differs from the query's under it cannot share the
// query's leading blocks. Zero when the line bits cover the leading blocks
// (every entry of the line shares them).
inline uint16_t FragmentMask(const HammingLayout& layout, int t, int line_bits) {
  const int bits = std::min(16, layout.table(t).prefix_bits - line_bits);
  return bits <= 0 ? 0 : static_cast<uint16_t>(0xFFFF << (16 - bits));
}

// Calls on_hit(value, distance) for each entry of table `values` within k of
// `permuted` that shares its leading blocks and whose canonical table is this
// one, reading only line `h` unless an entry may share the leading blocks.
// Clamps every index read from the line (a corrupt mapped file).
template <typename OnHit>
inline void ProbeLine(std::span<const HammingLine> lines, size_t h, const uint64_t* values,
                      size_t num_fps, uint64_t permuted, int line_bits, uint16_t fragment_mask,
                      const HammingTable& table, int k, OnHit&& on_hit) {
  const HammingLine& line = lines[h];
  uint32_t candidates = FragmentMatches(line, LineFragment(permuted, line_bits), fragment_mask);
  const bool overflow = line.count > kLineFragments;
  if (!overflow) candidates &= (uint32_t{1} << line.count) - 1;
  if (candidates == 0 && !overflow) return;
  const size_t begin = std::min<size_t>(line.begin, num_fps);
  const size_t end = overflow ? std::max(begin, LineEnd(lines, h, num_fps))
                              : std::min(begin + line.count, num_fps);
  auto check = [&](size_t s) {
    const uint64_t diff = values[s] ^ permuted;
    const int distance = std::popcount(diff);
    if (distance <= k && table.IsCanonical(diff)) on_hit(values[s], distance);
  };
  for (; candidates != 0; candidates &= candidates - 1) {
    const size_t s = begin + static_cast<size_t>(std::countr_zero(candidates));
    if (s < end) check(s);
  }
  if (overflow) {
    for (size_t s = begin + kLineFragments; s < end; ++s) check(s);
  }
}

// The scan of HammingRun::ScanBatch, compiled twice: with the popcnt
// instruction and without (the baseline x86-64 target has none), chosen at
// load time. A first pass permutes every (table, query) probe and finds its
// line; the second reads the lines in the same order with each one
// prefetched kAhead probes before it is read (software pipelining: a steady
// number of misses in flight rather than bursts).
NEARDUP_POPCNT_CLONES
void ScanBatchImpl(const RunArrays& a, const HammingLayout& layout, const uint64_t* queries,
                   size_t num_queries, std::vector<BatchHit>* hits) {
  constexpr size_t kAhead = 16;
  const int k = layout.max_distance();
  // The held tables only (all of them but in a partial index).
  const int first_table = layout.held_begin();
  const int num_tables = layout.held_end() - first_table;
  const size_t num_fps = a.fps.size();
  struct Probe {
    uint64_t permuted;
    size_t line;
  };
  thread_local std::vector<Probe> probes;
  const size_t num_probes = static_cast<size_t>(num_tables) * num_queries;
  if (probes.size() < num_probes) probes.resize(num_probes);
  size_t p = 0;
  for (int t = first_table; t < first_table + num_tables; ++t) {
    const BitMoves& forward = layout.table(t).forward;
    const int shift = 64 - a.line_bits[t];
    for (size_t i = 0; i < num_queries; ++i, ++p) {
      const uint64_t permuted = forward.Apply(queries[i]);
      probes[p] = {permuted, static_cast<size_t>(permuted >> shift)};
    }
  }
  for (p = 0; p < std::min(kAhead, num_probes); ++p) {
    __builtin_prefetch(a.lines[first_table + p / num_queries].data() + probes[p].line);
  }
  p = 0;
  for (int t = first_table; t < first_table + num_tables; ++t) {
    const HammingTable& table = layout.table(t);
    const std::span<const HammingLine> lines = a.lines[t];
    const uint64_t* values = a.tables[t].data();
    const int line_bits = a.line_bits[t];
    const uint16_t fragment_mask = FragmentMask(layout, t, line_bits);
    for (size_t i = 0; i < num_queries; ++i, ++p) {
      if (p + kAhead < num_probes) {
        const size_t ahead = p + kAhead;
        __builtin_prefetch(a.lines[first_table + ahead / num_queries].data() + probes[ahead].line);
      }
      ProbeLine(lines, probes[p].line, values, num_fps, probes[p].permuted, line_bits,
                fragment_mask, table, k, [&](uint64_t value, int distance) {
                  hits->push_back({static_cast<uint32_t>(i), distance, table.inverse.Apply(value)});
                });
    }
  }
}

}  // namespace

void SortEntries(std::span<const HammingEntry> in, std::vector<HammingEntry>* out) {
  out->assign(in.begin(), in.end());
  std::vector<uint32_t> counts(kNumDigits * kBuckets, 0);
  CountDigits(out->data(), out->size(), counts.data());
  TableVector<HammingEntry> scratch(in.size());  // on huge pages: fewer faults
  RadixSortTop(out->data(), scratch.data(), out->size(), counts.data());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void HammingRun::ScanBatch(const HammingLayout& layout, std::span<const uint64_t> queries,
                           std::vector<BatchHit>* hits) const {
  if (arrays_.fps.empty() || queries.empty()) return;
  ScanBatchImpl(arrays_, layout, queries.data(), queries.size(), hits);
}

int RunLineBits(size_t num_fps) {
  int bits = 1;
  while (bits < 28 && num_fps > (size_t{20} << bits)) ++bits;
  return bits;
}

void BuildLines(std::span<const uint64_t> table, int bits, std::span<HammingLine> lines) {
  NEARDUP_CHECK(lines.size() == NumLines(bits) && table.size() <= kMaxHammingEntries);
  const int shift = 64 - bits;
  const size_t n = table.size();
  size_t s = 0;
  for (size_t h = 0; h < lines.size(); ++h) {
    HammingLine& line = lines[h];
    size_t e = s;
    while (e < n && (table[e] >> shift) == h) ++e;
    line.begin = static_cast<uint32_t>(s);
    line.count = static_cast<uint16_t>(std::min<size_t>(e - s, kLineFragments + 1));
    const size_t filled = std::min<size_t>(e - s, kLineFragments);
    for (size_t i = 0; i < filled; ++i) line.fragment[i] = LineFragment(table[s + i], bits);
    const uint16_t last = filled == 0 ? 0 : line.fragment[filled - 1];
    for (size_t i = filled; i < kLineFragments; ++i) line.fragment[i] = last;
    s = e;
  }
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
  owned->fps.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    NEARDUP_DCHECK(i == 0 || entries[i - 1] < entries[i]);
    if (i == 0 || entries[i].fingerprint != entries[i - 1].fingerprint) {
      owned->fps.push_back(entries[i].fingerprint);
      owned->id_begin.push_back(static_cast<uint32_t>(i));
    }
    owned->ids[i] = entries[i].id;
  }
  owned->id_begin.push_back(static_cast<uint32_t>(entries.size()));
  const int run_bits = RunLineBits(owned->fps.size());
  const int num_tables = layout.num_tables();
  std::vector<int> line_bits(num_tables);
  for (int t = 0; t < num_tables; ++t) line_bits[t] = TableLineBits(layout, run_bits, t);
  owned->tables.resize(num_tables);
  owned->lines.resize(num_tables);
  const size_t num_fps = owned->fps.size();
  // Permuted values of the table being sorted, one array per thread (not
  // value-initialised: every slot is written before it is read).
  tbb::enumerable_thread_specific<TableVector<uint64_t>> scratch;
  tbb::parallel_for(0, num_tables, [&](int t) {
    if (t > 0 && !layout.Holds(t)) return;  // partial: table 0's directory only
    if (t > 0) {
      TableVector<uint64_t>& mine = scratch.local();
      mine.resize(num_fps);
      owned->tables[t].resize(num_fps);
      SortPermuted(owned->fps, layout.table(t).forward, mine.data(), owned->tables[t].data());
    }
    owned->lines[t].resize(NumLines(line_bits[t]));
    BuildLines(t == 0 ? std::span<const uint64_t>(owned->fps) : owned->tables[t], line_bits[t],
               owned->lines[t]);
  });
  return FromOwned(std::move(owned), std::move(line_bits));
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

  const int run_bits = RunLineBits(owned->fps.size());
  const int num_tables = layout.num_tables();
  std::vector<int> line_bits(num_tables);
  for (int t = 0; t < num_tables; ++t) line_bits[t] = TableLineBits(layout, run_bits, t);
  owned->tables.resize(num_tables);
  owned->lines.resize(num_tables);
  tbb::parallel_for(0, num_tables, [&](int t) {
    if (t > 0 && !layout.Holds(t)) return;  // partial: table 0's directory only
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
    owned->lines[t].resize(NumLines(line_bits[t]));
    BuildLines(t == 0 ? std::span<const uint64_t>(owned->fps) : owned->tables[t], line_bits[t],
               owned->lines[t]);
  });
  return FromOwned(std::move(owned), std::move(line_bits));
}

size_t HammingRun::MemoryBytes() const {
  size_t bytes = arrays_.fps.size_bytes() + arrays_.id_begin.size_bytes() +
                 arrays_.ids.size_bytes() + dead_.size() * sizeof(uint64_t);
  for (size_t t = 1; t < arrays_.tables.size(); ++t) bytes += arrays_.tables[t].size_bytes();
  for (const auto& lines : arrays_.lines) bytes += lines.size_bytes();
  return bytes;
}

std::optional<size_t> HammingRun::FindFingerprint(uint64_t fingerprint) const {
  if (arrays_.fps.empty()) return std::nullopt;
  const size_t h = fingerprint >> (64 - arrays_.line_bits[0]);
  const size_t end = LineEnd(arrays_.lines[0], h, arrays_.fps.size());
  const size_t begin = std::min<size_t>(arrays_.lines[0][h].begin, end);
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

void HammingRun::ReserveTombstones() {
  if (dead_.empty()) dead_.assign((num_ids() + 63) / 64, 0);
}

void HammingRun::MarkDead(size_t pos) {
  ReserveTombstones();
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
  thread_local std::vector<BatchHit> batch_hits;
  batch_hits.clear();
  ScanBatchImpl(arrays_, layout, &query, 1, &batch_hits);
  for (const BatchHit& hit : batch_hits) hits->push_back({hit.fingerprint, hit.distance});
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
