// How many batches the fingerprint pipeline and dedup's copy by location
// keep in flight: FingerprintPipelineOptions::max_batches_in_flight, or by
// default one per thread plus one being read (more only adds memory, and
// fresh pages to fault in, without adding work to steal).
#ifndef NEARDUP_ENGINE_BATCHES_IN_FLIGHT_H_
#define NEARDUP_ENGINE_BATCHES_IN_FLIGHT_H_

#include <algorithm>
#include <cstddef>

#include "io/effective_threads.h"
#include "neardup/fingerprint_pipeline.h"

namespace neardup::internal {

inline size_t BatchesInFlight(const FingerprintPipelineOptions& options) {
  if (options.max_batches_in_flight != 0) return options.max_batches_in_flight;
  return std::max<size_t>(2, EffectiveThreads() + 1);
}

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_BATCHES_IN_FLIGHT_H_
