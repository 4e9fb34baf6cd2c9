// Transparent huge pages for malloc's blocks, asked for by the batch front
// ends (neardup's corpus-wide commands, neardup-mpi's ranks): where the
// kernel gives huge pages only on request (THP "madvise", the default of
// Debian and most distributions), glibc (2.35+) asks for them on its
// mmapped blocks and heap with the tunable glibc.malloc.hugetlb=1, which
// it reads only at start-up, so the process starts itself again once with
// it set. `neardup dedup` of a 1M-document corpus took 1.76M minor faults
// with 4 KiB pages against 44-71K; its CPU was 13-24% lower in two pairs
// of runs on a loaded machine, not yet confirmed by a quiet run
// (docs/DISTRIBUTED.md, "Output and errors"). A front-end concern (it
// replaces the calling process), so not in the library.
#ifndef NEARDUP_APPS_FRONTEND_HUGE_PAGES_H_
#define NEARDUP_APPS_FRONTEND_HUGE_PAGES_H_

#include <optional>
#include <string>
#include <string_view>

namespace neardup::cli {

// Where the kernel says when it gives transparent huge pages.
inline constexpr const char* kTransparentHugePagesEnabled =
    "/sys/kernel/mm/transparent_hugepage/enabled";

// The GLIBC_TUNABLES value that adds glibc.malloc.hugetlb=1 to `tunables`
// (the variable's value; null when unset), or nullopt where nothing is to
// change: `thp_enabled` (the text of kTransparentHugePagesEnabled) does not
// select [madvise] ([always] gives huge pages without asking, [never]
// none), or `tunables` names glibc.malloc.hugetlb already (its value,
// whatever it is, is kept). Pure.
std::optional<std::string> TunablesWithMallocHugePages(const char* tunables,
                                                       std::string_view thp_enabled);

// Whether glibc of version `version` (gnu_get_libc_version(): "2.36")
// reads glibc.malloc.hugetlb (2.35 and later). Pure.
bool GlibcReadsMallocHugePages(std::string_view version);

// Starts this process again once, with GLIBC_TUNABLES as above:
// execv("/proc/self/exe", argv), the same process id and environment, the
// variable `restarted_marker` set to 1 for the new process, which removes
// it and goes on. Returns (without a restart, the environment as it was)
// where `off_variable` is "0" (the user's switch; other values leave it
// on), where the marker is set, where the program was started through the
// dynamic loader (`ld-linux-x86-64.so.2 ./neardup ...`: /proc/self/exe is
// then the loader; seen as getauxval(AT_BASE) == 0, which a statically
// linked program shares), under valgrind (LD_PRELOAD names its vgpreload_
// libraries; /proc/self/exe is then the tool, which will not start
// alone), where glibc is older than 2.35, where
// `thp_enabled_path` cannot be read or TunablesWithMallocHugePages gives
// nullopt, or where the exec fails (no /proc, say). Without glibc, returns
// at once.
// REQUIRES: called early in main(), before other threads start and before
// any input is read (the new process starts over).
void RestartWithMallocHugePages(char** argv, const char* off_variable, const char* restarted_marker,
                                const char* thp_enabled_path = kTransparentHugePagesEnabled);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_FRONTEND_HUGE_PAGES_H_
