// A one-line progress display on stderr, redrawn at most a few times a
// second, shown only when stderr is a terminal and --quiet was not given.
#ifndef NEARDUP_APPS_CLI_PROGRESS_H_
#define NEARDUP_APPS_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>

namespace neardup::cli {

class Progress {
 public:
  explicit Progress(bool quiet);
  ~Progress();

  void Update(uint64_t documents, uint64_t bytes);
  // Clears the line (the summary follows).
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_PROGRESS_H_
