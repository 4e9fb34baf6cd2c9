// The one place where a library Status becomes a process exit code.
//   0  success
//   1  internal error (a bug: please report)
//   2  usage error: bad flags, bad recipe, bad parameter
//   3  input not found or unreadable, output not writable, or a place that
//      cannot hold a collection (I/O error)
//   4  corrupt, truncated or changed-while-read input or collection (data
//      loss); stdout keeps what was written before the damage, a -o file
//      is left as it was
//   5  records were skipped and --strict was given
//   6  the collection is being written by another process (busy; --wait)
// (Memory running out is 3, like a full disk; no path ends in an abort.)
#ifndef NEARDUP_APPS_CLI_EXIT_CODES_H_
#define NEARDUP_APPS_CLI_EXIT_CODES_H_

#include "neardup/status.h"

namespace neardup::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;
inline constexpr int kExitDataLoss = 4;
inline constexpr int kExitSkipped = 5;
inline constexpr int kExitBusy = 6;

int ExitCodeFor(const Status& status);

// Prints "neardup: <message>" to stderr and returns ExitCodeFor(status).
int ReportError(const Status& status);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_EXIT_CODES_H_
