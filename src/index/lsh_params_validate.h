// The checks ChooseLshParams makes of its options, for code that takes a
// recorded choice instead of choosing (a corpus of band keys: its
// ChosenLshParams is refused unless its options pass them).
#ifndef NEARDUP_INDEX_LSH_PARAMS_VALIDATE_H_
#define NEARDUP_INDEX_LSH_PARAMS_VALIDATE_H_

#include "neardup/lsh_params.h"
#include "neardup/status.h"

namespace neardup::internal {

// InvalidArgument, with ChooseLshParams' message, for options outside the
// REQUIRES of LshParamsOptions; Ok otherwise.
Status ValidateLshParamsOptions(const LshParamsOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_PARAMS_VALIDATE_H_
