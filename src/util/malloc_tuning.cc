#include "neardup/malloc_tuning.h"

#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace neardup {
namespace {

// Whether GLIBC_TUNABLES names a malloc setting that these calls change.
bool TunablesNameMallocSettings() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables == nullptr) return false;
  const std::string_view value(tunables);
  for (const std::string_view name :
       {"glibc.malloc.top_pad", "glibc.malloc.mmap_threshold", "glibc.malloc.trim_threshold"}) {
    if (value.find(name) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

bool TuneMallocForServer() {
#if defined(__GLIBC__)
  if (TunablesNameMallocSettings()) return false;
  constexpr int kMiB = 1 << 20;
  mallopt(M_TOP_PAD, 4 * kMiB);
  mallopt(M_MMAP_THRESHOLD, 4 * kMiB);
  mallopt(M_TRIM_THRESHOLD, 16 * kMiB);
  return true;
#else
  return false;
#endif
}

}  // namespace neardup
