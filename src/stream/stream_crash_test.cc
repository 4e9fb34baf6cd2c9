// Kills a process that adds documents to a durable stream at random moments
// (SIGKILL, 25 times) and checks after each kill that every acknowledged
// answer is present and unchanged; then lets it finish and checks the whole
// stream equals an uninterrupted in-memory run; once adding one document at
// a time, once in batches (AddBatch); and once with a log that is rolled
// over into a new file every few documents instead of snapshotted. Since
// session 18 the kills leave the next log, made ahead of its roll-over,
// empty after the log that took the records (counted: with_spare); since
// session 20 the stream's snapshot thread makes it, and once more with the
// roll-overs the writers do (background_snapshots false).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "neardup/stream.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using test_support::PlantedId;
using test_support::PlantedTexts;

constexpr size_t kDocuments = 400;
constexpr uint64_t kSeed = 21;
constexpr const char* kSnapshotLogBytes = "30000";  // snapshots during the run too
constexpr const char* kRollLogBytes = "6000";       // a new log every few documents

struct Acknowledged {
  size_t index;
  std::string status;
  std::string of;
  double similarity;
};

// Runs the helper; kills it once it has acknowledged `kill_after` more
// documents (never when < 0): the kill lands while the helper is already in
// its next add, at a moment the scheduler picks. Counting answers rather than
// milliseconds keeps every round a kill however fast the disk syncs (a
// timed kill let a fast machine add every document and exit before it).
// Returns the answers it acknowledged.
// `batch` > 1: the helper adds with AddBatch, that many at a time.
// `rolls`: the stream keeps snapshot_grows_with_state, so the only-growing
// window is never snapshotted and its log rolls over every kRollLogBytes.
// `writers`: background_snapshots false (the writers make the next log).
std::vector<Acknowledged> RunHelper(const std::string& dir, int kill_after, int* exit_status,
                                    int batch = 1, bool rolls = false, bool writers = false) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  const std::string count = std::to_string(kDocuments);
  const std::string seed = std::to_string(kSeed);
  const std::string batch_size = std::to_string(batch);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::execl(NEARDUP_STREAM_CRASH_HELPER, NEARDUP_STREAM_CRASH_HELPER, dir.c_str(), count.c_str(),
            seed.c_str(), rolls ? kRollLogBytes : kSnapshotLogBytes, batch_size.c_str(),
            rolls ? "grows" : "snapshots", writers ? "writers" : "thread",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::string output;
  // The delay runs from the helper's "ready" (the stream is open), so kills
  // land among the adds however slow its start.
  bool killed = false;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;  // the helper exited or was killed
    output.append(buffer, static_cast<size_t>(n));
    const size_t ready = output.find("ready\n");
    if (kill_after >= 0 && !killed && ready != std::string::npos) {
      const auto answers =
          std::count(output.begin() + static_cast<std::ptrdiff_t>(ready) + 6, output.end(), '\n');
      if (answers >= kill_after) {
        ::kill(pid, SIGKILL);
        killed = true;
      }
    }
  }
  ::close(pipe_fds[0]);
  ::waitpid(pid, exit_status, 0);
  std::vector<Acknowledged> acknowledged;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line == "ready") continue;
    std::istringstream fields(line);
    Acknowledged a;
    fields >> a.index >> a.status >> a.of >> a.similarity;
    if (a.of == "-") a.of.clear();
    acknowledged.push_back(a);
  }
  return acknowledged;
}

// Whether the newest log of the stream in `dir` is empty: the next log made
// ahead of its roll-over (session 18), which recovery then goes on in.
bool NewestLogIsEmpty(const std::string& dir) {
  std::string newest;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("log-", 0) == 0 && name > newest) newest = name;
  }
  return !newest.empty() && std::filesystem::file_size(dir + "/" + newest) == 0;
}

// Kills the helper `rounds` times (adding `batch` documents at a time), then
// lets it finish; see the file comment.
void KillAndCheck(int rounds, int min_kills, int batch, bool rolls = false, bool writers = false) {
  test_support::TempDir dir;
  const std::string path = dir.Path("stream");
  ASSERT_TRUE(NearDuplicateStream::Open(path, {}).ok());
  std::mt19937 rng(5);
  int kills = 0;
  int with_spare = 0;  // rounds that left an empty newest log (a crash before its use)
  size_t most_acknowledged = 0;
  for (int round = 0; round < rounds; ++round) {
    int status = 0;
    // Kills after 0-14 answers, or 0-4 batches (the rounds stay inside the
    // 400 documents).
    const int kill_after = static_cast<int>(rng() % (batch == 1 ? 15 : 5)) * batch;
    std::vector<Acknowledged> acknowledged =
        RunHelper(path, kill_after, &status, batch, rolls, writers);
    kills += WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    most_acknowledged = std::max(most_acknowledged, acknowledged.size());
    with_spare += NewestLogIsEmpty(path);
    auto stream = NearDuplicateStream::OpenExisting(path);
    ASSERT_TRUE(stream.ok()) << stream.status();
    for (const Acknowledged& a : acknowledged) {
      Result<StreamAnswer> stored = (*stream)->Get(PlantedId(a.index));
      ASSERT_TRUE(stored.ok()) << "acknowledged document " << a.index << " lost in round " << round;
      EXPECT_EQ(StreamStatusName(stored->status), a.status);
      EXPECT_EQ(stored->of, a.of);
      EXPECT_EQ(stored->similarity, a.similarity);
    }
  }
  EXPECT_GE(kills, min_kills);
  EXPECT_GT(most_acknowledged, 0u);  // kills land while documents are being added
  // Recovery went on in a log made ahead, after an older log that took the
  // records (the next log is made after each run's first write: every round
  // of 25 and of 12 in a run of session 18).
  EXPECT_GT(with_spare, 0) << "of " << rounds;
  int status = 0;
  RunHelper(path, -1, &status, batch, rolls, writers);  // to the end
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Which files recovery reads: with roll-overs, many logs (about 120) and
  // no snapshot since the stream's creation.
  int logs = 0;
  int snapshots = 0;
  std::string names;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    names += name + " ";
    logs += name.rfind("log", 0) == 0;
    // Besides the empty one written at creation (generation 0).
    snapshots += name.rfind("snapshot", 0) == 0 && name != "snapshot-00000000000000000000";
  }
  if (rolls) {
    EXPECT_GE(logs, 20) << "the log was not rolled over";
    EXPECT_EQ(snapshots, 0) << names;
  }
  auto stream = std::move(NearDuplicateStream::OpenExisting(path)).value();
  auto memory = std::move(NearDuplicateStream::Create({})).value();
  const std::vector<std::string> texts = PlantedTexts(kDocuments, kSeed);
  for (size_t i = 0; i < kDocuments; ++i) {
    StreamAnswer expected = *memory->Add(PlantedId(i), texts[i], static_cast<int64_t>(i));
    EXPECT_EQ(*stream->Get(PlantedId(i)), expected) << i;
  }
}

TEST(StreamCrashTest, EveryAcknowledgedAnswerSurvivesSigkill) { KillAndCheck(25, 20, 1); }

// The same with AddBatch (one log write per batch here: 7 < kStreamBatchGroup):
// kills land inside batch writes; a batch's answers are acknowledged once
// AddBatch returns, and the documents of a batch cut by the kill come back
// as a prefix (or not at all) and are answered as in an uninterrupted run.
TEST(StreamCrashTest, EveryAcknowledgedBatchSurvivesSigkill) { KillAndCheck(12, 9, 7); }

// The same with a log rolled over into a new file every few documents (the
// helpers above pin snapshot_grows_with_state false, so they snapshot and
// never roll): kills land inside roll-overs too (the old log synced, the new
// one opened, the directory synced), and recovery replays every log after
// the last snapshot (here: all of them) with nothing acknowledged lost.
TEST(StreamCrashTest, EveryAcknowledgedAnswerSurvivesSigkillAcrossLogRollOvers) {
  KillAndCheck(25, 20, 1, /*rolls=*/true);
}

TEST(StreamCrashTest, EveryAcknowledgedBatchSurvivesSigkillAcrossLogRollOvers) {
  KillAndCheck(12, 9, 7, /*rolls=*/true);
}

// The roll-overs with the next log made by the writers after their sync
// (background_snapshots false; the default has the snapshot thread make
// it, as in the two tests above, and the writers only when it has not by
// an eighth of the log).
TEST(StreamCrashTest, EveryAcknowledgedAnswerSurvivesSigkillAcrossLogRollOversWithSparesByWriters) {
  KillAndCheck(25, 20, 1, /*rolls=*/true, /*writers=*/true);
}

}  // namespace
}  // namespace neardup
