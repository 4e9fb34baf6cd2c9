// ChooseLshParams without its pruning: every (b, r) evaluated, for the tests
// that check the pruned search chooses the same bits.
#ifndef NEARDUP_INDEX_LSH_PARAMS_EXHAUSTIVE_H_
#define NEARDUP_INDEX_LSH_PARAMS_EXHAUSTIVE_H_

#include "neardup/lsh_params.h"
#include "neardup/status.h"

namespace neardup::internal {

// As ChooseLshParams, evaluating every shape (5.5-11 times its CPU time at
// 128 hashes, ~20 times at 1024; docs/BENCHMARKS.md "Session 15, serve").
Result<LshParamsChoice> ChooseLshParamsExhaustive(const LshParamsOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_PARAMS_EXHAUSTIVE_H_
