#include "io/effective_threads.h"

#include "neardup/effective_threads.h"

namespace neardup {

size_t EffectiveThreads() { return internal::EffectiveThreads(); }

}  // namespace neardup
