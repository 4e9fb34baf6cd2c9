#include "neardup/malloc_tuning.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
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

std::optional<std::string> TunablesWithMallocHugePages(const char* tunables,
                                                       std::string_view thp_enabled) {
  if (thp_enabled.find("[madvise]") == std::string_view::npos) return std::nullopt;
  const std::string before = tunables != nullptr ? tunables : "";
  if (before.find("glibc.malloc.hugetlb") != std::string::npos) return std::nullopt;
  return before + (before.empty() ? "" : ":") + "glibc.malloc.hugetlb=1";
}

void RestartWithMallocHugePages(char** argv, const char* off_variable) {
#if defined(__GLIBC__)
  // Off, or this is the restarted process.
  if (std::getenv(off_variable) != nullptr) return;
  std::FILE* file = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (file == nullptr) return;
  char line[128] = {};
  const bool read = std::fgets(line, sizeof(line), file) != nullptr;
  std::fclose(file);
  if (!read) return;
  // Copied: setenv may free the string getenv returned.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> before =
      tunables != nullptr ? std::optional<std::string>(tunables) : std::nullopt;
  const std::optional<std::string> value =
      TunablesWithMallocHugePages(before ? before->c_str() : nullptr, line);
  if (!value) return;
  if (setenv(off_variable, "1", 1) == 0 && setenv("GLIBC_TUNABLES", value->c_str(), 1) == 0) {
    execv("/proc/self/exe", argv);
  }
  // Not restarted: go on with the pages as they are, the environment as it was.
  unsetenv(off_variable);
  if (before) {
    setenv("GLIBC_TUNABLES", before->c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
  (void)off_variable;
#endif
}

}  // namespace neardup
