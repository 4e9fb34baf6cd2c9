// How many threads neardup's parallel work may use right now, for a front
// end that sizes its own parallel work the way the library sizes its
// pipelines (batches and decoder frames in flight): the calling thread's
// task arena's concurrency, lowered by an active tbb::global_control limit
// (the front ends' --threads), which the arena's own figure does not see.
// Cost: two reads of oneTBB's state. Thread safety: any thread.
#ifndef NEARDUP_EFFECTIVE_THREADS_H_
#define NEARDUP_EFFECTIVE_THREADS_H_

#include <cstddef>

namespace neardup {

// At least 1.
size_t EffectiveThreads();

}  // namespace neardup

#endif  // NEARDUP_EFFECTIVE_THREADS_H_
