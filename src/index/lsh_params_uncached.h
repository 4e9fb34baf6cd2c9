// ChooseLshParams without its kept last choice: the search itself, for tests
// that must run it (its bits at every thread count) and for checking the
// kept choice against it.
#ifndef NEARDUP_INDEX_LSH_PARAMS_UNCACHED_H_
#define NEARDUP_INDEX_LSH_PARAMS_UNCACHED_H_

#include "neardup/lsh_params.h"
#include "neardup/status.h"

namespace neardup::internal {

// As ChooseLshParams, always searching.
Result<LshParamsChoice> ChooseLshParamsUncached(const LshParamsOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_PARAMS_UNCACHED_H_
