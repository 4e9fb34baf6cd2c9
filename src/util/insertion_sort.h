// Insertion sort of a[0, n) into ascending order: the finishing pass of the
// bucket sorts (bottom-k values, chunk-set hash IDs), whose input is already
// sorted by bucket, so each value moves past at most a few others. O(n^2) on
// arbitrary input; callers bound the disorder.
#ifndef NEARDUP_UTIL_INSERTION_SORT_H_
#define NEARDUP_UTIL_INSERTION_SORT_H_

#include <cstddef>

namespace neardup::internal {

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

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_INSERTION_SORT_H_
