// glibc malloc settings for the front ends, applied once at start (before
// the first large allocation): one place for what was measured, not
// mallopt calls in each front end. (A setting for neardup-mpi's batch
// stages, nothing mmapped and the heap's top kept, was measured in session
// 13 and not applied: docs/DISTRIBUTED.md "Fresh memory".) The call
// leaves malloc as it is, and returns false, where GLIBC_TUNABLES names
// one of the settings it would change (glibc.malloc.top_pad,
// mmap_threshold, trim_threshold): the defaults can still be measured
// against, e.g. with GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072.
// Other tunables (glibc.malloc.hugetlb, mmap_max) do not count. Without
// glibc, it does nothing and returns false.
// Thread safety: call from main() before other threads allocate.
#ifndef NEARDUP_MALLOC_TUNING_H_
#define NEARDUP_MALLOC_TUNING_H_

namespace neardup {

// A long-running server with many small, short-lived requests: a 4 MiB
// top pad, blocks over 4 MiB mmapped, at most 16 MiB kept free at the top
// of an arena (docs/SERVER.md).
bool TuneMallocForServer();

}  // namespace neardup

#endif  // NEARDUP_MALLOC_TUNING_H_
