// Crash-test helper (stream_crash_test.cc): opens the durable stream in
// argv[1] and adds the planted documents 0..argv[2]-1 of seed argv[3] in
// order, writing "index status of similarity" to stdout once each answer is
// acknowledged (durable), until done or killed. It writes "ready" once the
// stream is open. Documents already present
// return their stored answers (idempotent retries), so a restarted helper
// continues where the last one stopped.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "neardup/stream.h"
#include "support/planted_corpus.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DIR COUNT SEED SNAPSHOT_LOG_BYTES\n", argv[0]);
    return 2;
  }
  const size_t count = std::strtoull(argv[2], nullptr, 10);
  const auto texts =
      neardup::test_support::PlantedTexts(count, std::strtoull(argv[3], nullptr, 10));
  neardup::StreamOpenOptions options;
  options.snapshot_log_bytes = std::strtoull(argv[4], nullptr, 10);
  options.snapshot_grows_with_state = false;  // snapshots all through the run
  auto stream = neardup::NearDuplicateStream::OpenExisting(argv[1], options);
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.status().ToString().c_str());
    return 1;
  }
  // The parent times its kill from here, so that kills land among the adds
  // however slow the start (sanitizers, a loaded machine).
  if (::write(1, "ready\n", 6) != 6) return 1;
  for (size_t i = 0; i < count; ++i) {
    auto answer =
        (*stream)->Add(neardup::test_support::PlantedId(i), texts[i], static_cast<int64_t>(i));
    if (!answer.ok()) {
      std::fprintf(stderr, "%s\n", answer.status().ToString().c_str());
      return 1;
    }
    char line[256];
    const int n = std::snprintf(line, sizeof(line), "%zu %s %s %.17g\n", i,
                                std::string(neardup::StreamStatusName(answer->status)).c_str(),
                                answer->of.empty() ? "-" : answer->of.c_str(), answer->similarity);
    // One write per line: the parent sees whole lines only.
    if (::write(1, line, static_cast<size_t>(n)) != n) return 1;
  }
  return 0;
}
