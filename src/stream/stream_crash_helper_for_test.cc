// Crash-test helper (stream_crash_test.cc): opens the durable stream in
// argv[1] and adds the planted documents 0..argv[2]-1 of seed argv[3] in
// order, writing "index status of similarity" to stdout once each answer is
// acknowledged (durable), until done or killed. It writes "ready" once the
// stream is open. Documents already present
// return their stored answers (idempotent retries), so a restarted helper
// continues where the last one stopped. With argv[5] (a batch size B > 1) it
// adds B documents at a time with AddBatch and writes the batch's lines
// once the batch is acknowledged. With argv[6] "grows", the stream keeps
// snapshot_grows_with_state (its default): a window that only grows is never
// snapshotted, and its log is rolled over into a new file every
// SNAPSHOT_LOG_BYTES instead. With argv[7] "writers", background_snapshots
// is false: the writers make the next log ahead of each roll-over (the
// snapshot thread does by default, session 20).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "neardup/stream.h"
#include "support/planted_corpus.h"

int main(int argc, char** argv) {
  if (argc < 5 || argc > 8) {
    std::fprintf(stderr, "usage: %s DIR COUNT SEED SNAPSHOT_LOG_BYTES [BATCH [grows [writers]]]\n",
                 argv[0]);
    return 2;
  }
  const size_t count = std::strtoull(argv[2], nullptr, 10);
  const auto texts =
      neardup::test_support::PlantedTexts(count, std::strtoull(argv[3], nullptr, 10));
  neardup::StreamOpenOptions options;
  options.snapshot_log_bytes = std::strtoull(argv[4], nullptr, 10);
  // Snapshots all through the run, or (grows) log roll-overs.
  options.snapshot_grows_with_state = argc >= 7 && std::string(argv[6]) == "grows";
  options.background_snapshots = !(argc == 8 && std::string(argv[7]) == "writers");
  auto stream = neardup::NearDuplicateStream::OpenExisting(argv[1], options);
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.status().ToString().c_str());
    return 1;
  }
  // The parent times its kill from here, so that kills land among the adds
  // however slow the start (sanitizers, a loaded machine).
  if (::write(1, "ready\n", 6) != 6) return 1;
  const size_t batch = argc >= 6 ? std::strtoull(argv[5], nullptr, 10) : 1;
  std::vector<std::string> ids;
  for (size_t i = 0; i < count; ++i) ids.push_back(neardup::test_support::PlantedId(i));
  for (size_t first = 0; first < count; first += batch) {
    const size_t last = std::min(count, first + batch);
    neardup::Result<std::vector<neardup::StreamAnswer>> answers =
        std::vector<neardup::StreamAnswer>();
    if (batch == 1) {
      auto answer = (*stream)->Add(ids[first], texts[first], static_cast<int64_t>(first));
      if (answer.ok()) answers->push_back(*answer);
      if (!answer.ok()) answers = answer.status();
    } else {
      std::vector<neardup::StreamDocument> documents;
      for (size_t i = first; i < last; ++i) {
        documents.push_back(neardup::StreamDocument{ids[i], texts[i], static_cast<int64_t>(i)});
      }
      answers = (*stream)->AddBatch(documents);
    }
    if (!answers.ok()) {
      std::fprintf(stderr, "%s\n", answers.status().ToString().c_str());
      return 1;
    }
    std::string lines;
    for (size_t i = first; i < last; ++i) {
      const neardup::StreamAnswer& answer = (*answers)[i - first];
      char line[256];
      std::snprintf(line, sizeof(line), "%zu %s %s %.17g\n", i,
                    std::string(neardup::StreamStatusName(answer.status)).c_str(),
                    answer.of.empty() ? "-" : answer.of.c_str(), answer.similarity);
      lines += line;
    }
    // One write per batch: the parent sees whole lines only.
    if (::write(1, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) return 1;
  }
  return 0;
}
