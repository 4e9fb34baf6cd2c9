// The one place where a library Status becomes a process exit code.
//   0  success
//   1  internal error (a bug: please report)
//   2  usage error: bad flags, bad recipe, bad parameter
//   3  input not found or unreadable (I/O error)
//   4  corrupt or truncated input (data loss); output up to the damage is kept
//   5  records were skipped and --strict was given
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

int ExitCodeFor(const Status& status);

// Prints "neardup: <message>" to stderr and returns ExitCodeFor(status).
int ReportError(const Status& status);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_EXIT_CODES_H_
