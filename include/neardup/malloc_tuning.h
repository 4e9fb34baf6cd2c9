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
//
// Transparent huge pages for malloc's blocks (RestartWithMallocHugePages):
// where the kernel gives huge pages only on request (THP "madvise", the
// default of Debian and most distributions), glibc (2.35+) asks for them
// on its mmapped blocks and heap with the tunable glibc.malloc.hugetlb=1,
// which it reads only at start-up. The batch front ends (neardup-mpi's
// ranks, neardup's corpus-wide commands) start themselves again once with
// it set: `neardup dedup` of a 1M-document corpus took 1.76M minor faults
// with 4 KiB pages against 44-71K, and huge pages cut its CPU 13-20% at
// one thread and 21-24% at two (two loaded pairs each; docs/DISTRIBUTED.md,
// "Output and errors").
#ifndef NEARDUP_MALLOC_TUNING_H_
#define NEARDUP_MALLOC_TUNING_H_

#include <optional>
#include <string>
#include <string_view>

namespace neardup {

// A long-running server with many small, short-lived requests: a 4 MiB
// top pad, blocks over 4 MiB mmapped, at most 16 MiB kept free at the top
// of an arena (docs/SERVER.md).
bool TuneMallocForServer();

// The GLIBC_TUNABLES value that adds glibc.malloc.hugetlb=1 to `tunables`
// (the variable's value; null when unset), or nullopt where nothing is to
// change: `thp_enabled` (the text of
// /sys/kernel/mm/transparent_hugepage/enabled) does not select [madvise]
// ([always] gives huge pages without asking, [never] none), or `tunables`
// names glibc.malloc.hugetlb already (its value, whatever it is, is kept).
std::optional<std::string> TunablesWithMallocHugePages(const char* tunables,
                                                       std::string_view thp_enabled);

// Starts this process again once, with GLIBC_TUNABLES as above:
// execv("/proc/self/exe", argv), the same process id and environment, the
// environment variable `off_variable` set to 1 so that the new process
// goes on. Returns (without a restart, the environment as it was) where
// `off_variable` is set (to any value: the way to turn this off), where
// TunablesWithMallocHugePages gives nullopt, or where the exec fails (no
// /proc, say). Without glibc, returns at once.
// REQUIRES: called early in main(), before other threads start and before
// any input is read (the new process starts over).
void RestartWithMallocHugePages(char** argv, const char* off_variable);

}  // namespace neardup

#endif  // NEARDUP_MALLOC_TUNING_H_
