// --profile of `neardup`'s commands (fingerprint, pairs, clusters, dedup):
// one line on stderr with each stage's times and the peak memory.
#ifndef NEARDUP_APPS_CLI_PROFILE_H_
#define NEARDUP_APPS_CLI_PROFILE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "neardup/stage_time.h"

namespace neardup::cli {

// Prints, for each stage in order, its wall seconds, CPU seconds of every
// thread (cpu / wall is the stage's parallelism), of the main thread (the
// stage's serial part, when more than one thread runs) and of its
// pipelines' serial filters on whichever thread, then their total, the
// peak RSS and the peak memory per document (0 when `documents` is 0).
void PrintProfile(const std::vector<std::pair<const char*, StageTime>>& stages, uint64_t documents);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_PROFILE_H_
