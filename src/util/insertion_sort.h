// Insertion sorts for the finishing pass of the bucket sorts (bottom-k
// values, chunk-set IDs), whose input is already sorted by bucket, so each
// value moves past at most a few others.
#ifndef NEARDUP_UTIL_INSERTION_SORT_H_
#define NEARDUP_UTIL_INSERTION_SORT_H_

#include <cstddef>
#include <utility>

namespace neardup::internal {

// Sorts a[0, n) ascending. O(n^2) on arbitrary input; callers bound the
// disorder (or n).
template <typename T>
inline void InsertionSort(T* a, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    const T v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

// InsertionSort for bucket-sorted input, with a budget: gives up after 8n
// moves (at most 9n in all), returning false with a[] a permutation of its
// input, so the caller can finish with std::sort and clustered input is
// never quadratic. Returns true with a[] sorted otherwise. The branch on
// "moves at all" mispredicts for about 1 value in 5-6 of uniform bucketed
// input; InsertionSortNearlySorted below avoids that with conditional moves,
// and is faster for bottom-k's uint64 values but measured slower for chunk
// sets' uint32 IDs (sketch_bench BM_ChunkSetBuild, Session 13), which use
// this one.
template <typename T>
inline bool InsertionSortWithBudget(T* a, size_t n) {
  size_t budget = 8 * n;
  for (size_t i = 1; i < n; ++i) {
    const T v = a[i];
    if (!(a[i - 1] > v)) continue;
    size_t j = i;
    do {
      a[j] = a[j - 1];
      --j;
    } while (j > 0 && a[j - 1] > v);
    a[j] = v;
    const size_t moved = i - j;
    if (moved > budget) return false;
    budget -= moved;
  }
  return true;
}

// InsertionSort for input where almost every value moves by at most one
// place (a bucket pass's output: a move means an earlier value of the same
// bucket is larger). The last two sorted values stay in registers and the
// zero-or-one-move case is conditional moves, not the inner loop's
// mispredicted exit; a value moving two or more places takes the ordinary
// loop. Gives up after 8n moves of that loop (at most 9n moves in all),
// returning false with a[] a permutation of its input, so the caller can
// finish with std::sort and clustered input is never quadratic. Returns
// true with a[] sorted otherwise.
template <typename T>
inline bool InsertionSortNearlySorted(T* a, size_t n) {
  if (n < 3) {
    InsertionSort(a, n);
    return true;
  }
  if (a[0] > a[1]) std::swap(a[0], a[1]);
  T before_last = a[0];
  T last = a[1];
  size_t budget = 8 * n;
  for (size_t i = 2; i < n; ++i) {
    const T v = a[i];
    const bool past_last = last > v;
    const bool past_before_last = before_last > v;
    if (past_before_last) {
      // Two or more places: shift the larger ones up.
      size_t j = i;
      while (j > 0 && a[j - 1] > v) {
        a[j] = a[j - 1];
        --j;
      }
      a[j] = v;
      if (i - j > budget) return false;
      budget -= i - j;
      before_last = a[i - 1];
      last = a[i];
      continue;
    }
    // v goes after before_last: either last, v or v, last.
    const T middle = past_last ? v : last;
    const T top = past_last ? last : v;
    a[i - 1] = middle;
    a[i] = top;
    before_last = middle;
    last = top;
  }
  return true;
}

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_INSERTION_SORT_H_
