// glibc malloc settings for the front ends, applied once at start (before
// the first large allocation): one place for what was measured, so that
// `neardup serve` and `neardup-mpi` do not each carry their own mallopt
// calls. Each call leaves malloc as it is, and returns false, where
// GLIBC_TUNABLES names one of the settings it would change
// (glibc.malloc.top_pad, mmap_threshold, mmap_max, trim_threshold): the
// defaults can still be measured against, e.g. with
// GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072. Other tunables
// (glibc.malloc.hugetlb, which neardup-mpi sets) do not count. Without
// glibc, both do nothing and return false.
// Thread safety: call from main() before other threads allocate.
#ifndef NEARDUP_MALLOC_TUNING_H_
#define NEARDUP_MALLOC_TUNING_H_

namespace neardup {

// A long-running server with many small, short-lived requests: a 4 MiB
// top pad, blocks over 4 MiB mmapped, at most 16 MiB kept free at the top
// of an arena (docs/SERVER.md).
bool TuneMallocForServer();

// A batch job of one or a few threads whose working set is gigabytes of
// large vectors freed and allocated again stage after stage
// (docs/DISTRIBUTED.md): no block is mmapped, the heap's top is never given
// back (below 2 GiB - 1 free) and grows 64 MiB at a time, so that memory
// freed by one stage is reused by the next instead of being unmapped and
// faulted in, zeroed by the kernel, again. The cost: memory once used
// stays with the process until it exits, and fragments of the heap can
// raise the peak resident set.
bool TuneMallocForLargeWorkingSets();

}  // namespace neardup

#endif  // NEARDUP_MALLOC_TUNING_H_
