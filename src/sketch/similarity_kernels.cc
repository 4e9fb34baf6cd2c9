#include "sketch/similarity_kernels.h"

#include <algorithm>
#include <array>

#include "hash/cpu_features.h"
#include "neardup/check.h"

namespace neardup::internal {

PrefixCounts PrefixFilterScalar(const uint64_t* probe, const uint64_t* build, size_t prefix) {
  const uint64_t cut = probe[prefix - 1];
  // Bucket = the low 8 bits of a value: word (bits 6-7), bit (bits 0-5).
  uint64_t bitmap[4] = {0, 0, 0, 0};
  size_t below = 0;
  for (size_t j = 0; j < prefix; ++j) {
    const uint64_t y = build[j];
    bitmap[(y >> 6) & 3] |= uint64_t{1} << (y & 63);
    below += static_cast<size_t>(y <= cut);
  }
  size_t maybe = 0;
  for (size_t i = 0; i < prefix; ++i) {
    const uint64_t x = probe[i];
    maybe += static_cast<size_t>((bitmap[(x >> 6) & 3] >> (x & 63)) & 1);
  }
  return PrefixCounts{below, maybe};
}

size_t CountAtMost(const uint64_t* values, size_t n, uint64_t bound) {
  // Invariant: values[0, base) <= bound, and the answer is at most base + n.
  size_t base = 0;
  while (n > 1) {
    const size_t half = n / 2;
    base = values[base + half - 1] <= bound ? base + half : base;
    n -= half;
  }
  return base + static_cast<size_t>(n == 1 && values[base] <= bound);
}

PrefixFilterFn PrefixFilterFor(const CpuFeatures& f) {
#if defined(__x86_64__)
  if (f.avx512f && f.avx512bw && f.avx512vl) return &PrefixFilterAvx512;
#else
  (void)f;
#endif
  return &PrefixFilterScalar;
}

WalkCount MergeWalkReference(const uint64_t* a, size_t na, const uint64_t* b, size_t nb,
                             size_t limit) {
  size_t i = 0;
  size_t j = 0;
  size_t steps = 0;
  while (i < na && j < nb && steps < limit) {
    const uint64_t x = a[i];
    const uint64_t y = b[j];
    i += static_cast<size_t>(x <= y);
    j += static_cast<size_t>(y <= x);
    ++steps;
  }
  // Each step consumes one element of each side, two when they are equal.
  const size_t matches = i + j - steps;
  // Once one side is exhausted the rest of the union holds no common element.
  steps = std::min(limit, steps + (na - i) + (nb - j));
  return WalkCount{steps, matches};
}

namespace {

// One branch-free merge step: consumes the smaller head (both when equal).
// Matches need no counter: after t steps, matches = consumed - t.
#define NEARDUP_SPLIT_STEP(a, i, b, j)  \
  do {                                  \
    const uint64_t x = (a)[i];          \
    const uint64_t y = (b)[j];          \
    (i) += static_cast<size_t>(x <= y); \
    (j) += static_cast<size_t>(y <= x); \
  } while (false)

}  // namespace

WalkCount MergeWalkSplit(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t limit) {
  NEARDUP_CHECK(limit <= kMaxSplitLimit)
      << "split walk limit (" << limit << ") above " << kMaxSplitLimit;
  // Cut at the value c = a[p - 1]: every union value <= c precedes every
  // union value > c, so the union's smallest elements are walk 1's (A[0, p)
  // with B[0, q), q = |B <= c|) followed by walk 2's (A[p, na) with
  // B[q, nb)). Walk 2 needs limit - (walk 1's union size) steps, known only
  // at the end, so it runs to an upper bound and keeps its history.
  const size_t p = std::min(na, limit) / 2;
  if (p < 8 || nb < 16) return MergeWalkReference(a, na, b, nb, limit);
  const uint64_t cut = a[p - 1];
  const size_t q = CountAtMost(b, nb, cut);

  // Walk 1 state: i1 in [0, p], j1 in [0, q], s1 steps taken.
  size_t i1 = 0;
  size_t j1 = 0;
  size_t s1 = 0;
  // Walk 2 state: i2 in [p, na], j2 in [q, nb], s2 steps taken. Walk 1's
  // union has at least max(p, q) elements, so walk 2 never needs more than
  // cap2 steps. history[t] = elements walk 2 consumed after t steps.
  size_t i2 = p;
  size_t j2 = q;
  size_t s2 = 0;
  const size_t cap2 = limit - std::min(limit, std::max(p, q));
  std::array<uint16_t, kMaxSplitLimit + 1> history;
  history[0] = 0;

  // Joint phases: n steps of each walk with no bounds test inside (a step
  // advances each index by at most one, so n below every remaining length
  // keeps every read in range).
  for (;;) {
    const size_t n1 = std::min({p - i1, q - j1, limit - s1});
    const size_t n2 = std::min({na - i2, nb - j2, cap2 - s2});
    const size_t n = std::min(n1, n2);
    if (n == 0) break;
    for (size_t t = 0; t < n; ++t) {
      NEARDUP_SPLIT_STEP(a, i1, b, j1);
      NEARDUP_SPLIT_STEP(a, i2, b, j2);
      history[s2 + t + 1] = static_cast<uint16_t>(i2 - p + j2 - q);
    }
    s1 += n;
    s2 += n;
  }
  // Whichever walk is left finishes alone.
  while (i1 < p && j1 < q && s1 < limit) {
    NEARDUP_SPLIT_STEP(a, i1, b, j1);
    ++s1;
  }
  while (i2 < na && j2 < nb && s2 < cap2) {
    NEARDUP_SPLIT_STEP(a, i2, b, j2);
    ++s2;
    history[s2] = static_cast<uint16_t>(i2 - p + j2 - q);
  }

  const size_t matches1 = i1 + j1 - s1;
  const size_t steps1 = std::min(limit, s1 + (p - i1) + (q - j1));
  if (steps1 == limit) return WalkCount{steps1, matches1};
  // Walk 2 with limit L2: its first min(L2, s2) steps are the ones taken.
  const size_t limit2 = limit - steps1;
  if (limit2 <= s2) return WalkCount{limit, matches1 + history[limit2] - limit2};
  const size_t matches2 = (i2 - p) + (j2 - q) - s2;
  const size_t steps2 = std::min(limit2, s2 + (na - i2) + (nb - j2));
  return WalkCount{steps1 + steps2, matches1 + matches2};
}

#undef NEARDUP_SPLIT_STEP

namespace {
bool HasAvx512Walk(const CpuFeatures& f) { return f.avx512f && f.avx512dq && f.popcnt; }
}  // namespace

MergeWalkFn MergeWalkFor(const CpuFeatures& f) {
#if defined(__x86_64__)
  if (HasAvx512Walk(f)) return &MergeWalkAvx512;
#else
  (void)f;
#endif
  return &MergeWalkSplit;
}

std::vector<MergeWalkFn> SupportedMergeWalks() {
  std::vector<MergeWalkFn> walks = {&MergeWalkSplit};
#if defined(__x86_64__)
  if (HasAvx512Walk(HostCpuFeatures())) walks.push_back(&MergeWalkAvx512);
#endif
  return walks;
}

}  // namespace neardup::internal
