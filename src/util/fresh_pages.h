// GrowFaultingInParallel: grows a list to n elements, its new pages faulted
// in on all cores first; ConcatenateInParallel: lists joined that way.
//
// Why: a list of hundreds of MB in fresh memory, value-initialised by
// std::vector::resize on one thread, spends most of that time in the
// kernel's page faults (each page zeroed in clear_page): on the 1M-document
// corpus (46M candidate pairs, 736 MB a list) the candidates stage's
// resizes left the second thread idle for about a quarter of the stage (a
// loaded perf trace, docs/PARALLELISM.md). Here the
// pages are faulted in by MADV_POPULATE_WRITE (Linux 5.14) in 4 MiB steps on
// all cores, then resize() value-initialises the elements over present
// pages (a memset). The populate is a hint: a kernel that refuses it leaves
// the pages to fault in as resize() writes them, as before.
// Cost: the list's existing elements are copied once when n exceeds its
// capacity (reserve(n), serial), so this is meant for lists grown once from
// empty. Thread safety: as std::vector::resize.
#ifndef NEARDUP_UTIL_FRESH_PAGES_H_
#define NEARDUP_UTIL_FRESH_PAGES_H_

#include <sys/mman.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL): a hint
#endif

namespace neardup::internal {

// Below this many new bytes the faults are left to resize(): a parallel loop
// would cost more than it saves.
inline constexpr size_t kParallelFaultBytes = size_t{16} << 20;

template <typename T>
void GrowFaultingInParallel(std::vector<T>* list, size_t n) {
  if (n > list->size() && (n - list->size()) * sizeof(T) >= kParallelFaultBytes) {
    if (n > list->capacity()) list->reserve(n);
    constexpr uintptr_t kPage = 4096;
    constexpr uintptr_t kStep = uintptr_t{4} << 20;
    const uintptr_t begin =
        (reinterpret_cast<uintptr_t>(list->data() + list->size()) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(list->data() + n) & ~(kPage - 1);
    if (end > begin) {
      tbb::parallel_for(uintptr_t{0}, (end - begin + kStep - 1) / kStep, [&](uintptr_t step) {
        const uintptr_t from = begin + step * kStep;
        (void)::madvise(reinterpret_cast<void*>(from), std::min(kStep, end - from),
                        MADV_POPULATE_WRITE);
      });
    }
  }
  list->resize(n);
}

// The lists one after another in one allocation (its pages faulted in on
// all cores as above), each list copied on all cores. The result is
// allocated before any list is freed (a peak of about twice the total at
// the start); with a span of non-const lists each list is freed as soon as
// it is copied.
template <typename List>
std::vector<std::remove_const_t<typename List::value_type>> ConcatenateInParallel(
    std::span<List> lists) {
  std::vector<size_t> offsets(lists.size() + 1, 0);
  for (size_t i = 0; i < lists.size(); ++i) offsets[i + 1] = offsets[i] + lists[i].size();
  std::vector<std::remove_const_t<typename List::value_type>> all;
  GrowFaultingInParallel(&all, offsets.back());
  tbb::parallel_for(size_t{0}, lists.size(), [&](size_t i) {
    std::copy(lists[i].begin(), lists[i].end(), all.begin() + offsets[i]);
    if constexpr (!std::is_const_v<List>) std::remove_const_t<List>().swap(lists[i]);
  });
  return all;
}

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_FRESH_PAGES_H_
