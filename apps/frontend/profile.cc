#include "profile.h"

#include <cstdio>
#include <string>

#include "neardup/effective_threads.h"

namespace neardup::cli {

void PrintProfile(const std::vector<std::pair<const char*, StageTime>>& stages,
                  uint64_t documents) {
  const size_t threads = EffectiveThreads();
  std::string line = "neardup: profile (" + std::to_string(threads) +
                     " threads; wall/cpu/main-thread cpu/serial cpu s):";
  StageTime total;
  char buffer[96];
  for (const auto& [name, time] : stages) {
    std::snprintf(buffer, sizeof(buffer), " %s %.3f/%.3f/%.3f/%.3f,", name, time.wall_seconds,
                  time.cpu_seconds, time.main_cpu_seconds, time.serial_cpu_seconds);
    line += buffer;
    total += time;
  }
  const uint64_t peak = PeakResidentBytes();
  std::snprintf(buffer, sizeof(buffer),
                " total %.3f/%.3f/%.3f/%.3f; peak RSS %.1f MB, %.0f bytes/document",
                total.wall_seconds, total.cpu_seconds, total.main_cpu_seconds,
                total.serial_cpu_seconds, static_cast<double>(peak) / 1e6,
                documents == 0 ? 0.0 : static_cast<double>(peak) / static_cast<double>(documents));
  line += buffer;
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace neardup::cli
