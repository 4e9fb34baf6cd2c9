// Memory handed to the process' exit rather than freed: a rank's big
// containers (its share's ids, records and sketches: ~10^6 strings and
// vectors) go back with the address space when the process ends, without a
// free() each. On half of the 1M corpus at 2 ranks (dedup, loaded), every
// rank spent 0.10-0.14 s destroying the verification set between the pairs
// and cluster stages, and 0.13-0.18 s destroying the corpus after the
// output was written, before MPI_Finalize; ~0.3 ms each when left here,
// peak RSS the same there (docs/DISTRIBUTED.md, "Running it", Exit). Only
// for what is not needed again, and only where what is left stays mapped
// through no stage that allocates more than was held beside it: a value
// left here counts in every later stage's peak. So the corpus is left
// after the output, and the verification set is not (mpi_jobs.cc frees
// it after the pairs stage: dedup's and pairs' output stages and
// clusters' cluster stage can allocate more than it).
// The values stay reachable (from a static pointer), so LeakSanitizer
// reports nothing. Main thread only.
#ifndef NEARDUP_APPS_MPI_LEFT_TO_EXIT_H_
#define NEARDUP_APPS_MPI_LEFT_TO_EXIT_H_

#include <utility>
#include <vector>

namespace neardup::mpi {

template <typename T>
void LeaveToExit(T value) {
  // Never destroyed: no destructor runs at exit either.
  static auto* const left = new std::vector<T>();
  left->push_back(std::move(value));
}

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_LEFT_TO_EXIT_H_
