// How many threads the parallel stages may use right now: the task arena's
// concurrency, lowered by a tbb::global_control limit (--threads), which the
// arena's own figure does not see. Read by the decoders (frames in flight)
// and by the engine's pipelines (batches in flight), so that both follow
// the same limit.
#ifndef NEARDUP_IO_EFFECTIVE_THREADS_H_
#define NEARDUP_IO_EFFECTIVE_THREADS_H_

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

namespace neardup::internal {

inline size_t EffectiveThreads() {
  return std::max<size_t>(
      1, std::min(static_cast<size_t>(tbb::this_task_arena::max_concurrency()),
                  tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
}

}  // namespace neardup::internal

#endif  // NEARDUP_IO_EFFECTIVE_THREADS_H_
