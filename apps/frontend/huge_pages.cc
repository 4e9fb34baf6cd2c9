#include "huge_pages.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <sys/auxv.h>
#include <unistd.h>
#endif

namespace neardup::cli {

std::optional<std::string> TunablesWithMallocHugePages(const char* tunables,
                                                       std::string_view thp_enabled) {
  if (thp_enabled.find("[madvise]") == std::string_view::npos) return std::nullopt;
  const std::string before = tunables != nullptr ? tunables : "";
  if (before.find("glibc.malloc.hugetlb") != std::string::npos) return std::nullopt;
  return before + (before.empty() ? "" : ":") + "glibc.malloc.hugetlb=1";
}

bool GlibcReadsMallocHugePages(std::string_view version) {
  int major = 0;
  int minor = 0;
  const char* const end = version.data() + version.size();
  const auto [dot, major_error] = std::from_chars(version.data(), end, major);
  if (major_error != std::errc() || dot == end || *dot != '.') return false;
  if (std::from_chars(dot + 1, end, minor).ec != std::errc()) return false;
  return major > 2 || (major == 2 && minor >= 35);
}

void RestartWithMallocHugePages(char** argv, const char* off_variable, const char* restarted_marker,
                                const char* thp_enabled_path) {
#if defined(__GLIBC__)
  if (std::getenv(restarted_marker) != nullptr) {
    // The restarted process: its children need not see the marker.
    unsetenv(restarted_marker);
    return;
  }
  const char* off = std::getenv(off_variable);
  if (off != nullptr && std::strcmp(off, "0") == 0) return;
  // Started through the dynamic loader: /proc/self/exe is the loader, which
  // would take argv[1] for the program.
  if (getauxval(AT_BASE) == 0) return;
  // Under valgrind (its preloaded libraries): /proc/self/exe is the tool,
  // which refuses to run without valgrind's launcher.
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "/vgpreload_") != nullptr) return;
  if (!GlibcReadsMallocHugePages(gnu_get_libc_version())) return;
  std::FILE* file = std::fopen(thp_enabled_path, "r");
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
  if (setenv(restarted_marker, "1", 1) == 0 && setenv("GLIBC_TUNABLES", value->c_str(), 1) == 0) {
    execv("/proc/self/exe", argv);
  }
  // Not restarted: go on with the pages as they are, the environment as it was.
  unsetenv(restarted_marker);
  if (before) {
    setenv("GLIBC_TUNABLES", before->c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
  (void)off_variable;
  (void)restarted_marker;
  (void)thp_enabled_path;
#endif
}

}  // namespace neardup::cli
