// Crash safety of the collection: a child process commits batches of adds,
// modifications and removals and reports each acknowledged commit through a
// pipe; the parent kills it with SIGKILL at a random moment, then checks that
// the collection opens, passes Verify, and holds exactly the state after the
// last acknowledged commit or the one after it (the commit in flight may or
// may not have reached the catalog) -- never less, never a mixture. The
// child also brings the similarity table up to date every fourth step, so
// kills land inside those transactions too; after each kill an incremental
// update must still equal a full recomputation.
//
// The child is this test binary re-executed (fork + exec), so it starts with
// a fresh process image: oneTBB's worker pool is not fork-safe.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "util/mix.h"

namespace neardup {
namespace {

constexpr int kStepsPerChild = 200;
const SimilarOptions kSimilar{.top_n = 5, .min_similarity = 0.05};

std::vector<uint32_t> ChunksOf(const std::string& text) {
  std::set<uint32_t> chunks;
  uint64_t h = 0;
  for (char ch : text) {
    if (ch == ' ') {
      chunks.insert(static_cast<uint32_t>(h));
      h = 0;
    } else {
      h = internal::Mix64(h + static_cast<uint8_t>(ch));
    }
  }
  chunks.insert(static_cast<uint32_t>(h));
  return {chunks.begin(), chunks.end()};
}

std::string Text(int step, int k) {
  std::string text;
  internal::SplitMix64 rng(static_cast<uint64_t>(step) * 7 + static_cast<uint64_t>(k));
  for (int i = 0; i < 60; ++i) text += "w" + std::to_string(rng.Next() % 500) + " ";
  return text;
}

struct Step {
  std::vector<std::pair<std::string, std::string>> upserts;  // id, text
  std::vector<std::string> removals;
};

// Step s adds two documents, modifies d0 every third step and removes the
// document added four steps earlier every fifth step.
Step MakeStep(int s) {
  Step step;
  step.upserts.push_back({"d" + std::to_string(2 * s), Text(s, 0)});
  step.upserts.push_back({"d" + std::to_string(2 * s + 1), Text(s, 1)});
  if (s % 3 == 2) step.upserts.push_back({"d0", Text(s, 2)});
  if (s % 5 == 4 && s >= 5) step.removals.push_back("d" + std::to_string(2 * (s - 4)));
  return step;
}

// id -> text after steps [0, last].
std::map<std::string, std::string> Expected(int last) {
  std::map<std::string, std::string> state;
  for (int s = 0; s <= last; ++s) {
    Step step = MakeStep(s);
    for (auto& [id, text] : step.upserts) state[id] = text;
    for (auto& id : step.removals) state.erase(id);
  }
  return state;
}

// Child mode: NEARDUP_CRASH_CHILD="<dir>|<first step>|<fd>".
[[noreturn]] void RunChild(const std::string& spec) {
  size_t a = spec.find('|');
  size_t b = spec.find('|', a + 1);
  const std::string dir = spec.substr(0, a);
  const int first = std::stoi(spec.substr(a + 1, b - a - 1));
  const int fd = std::stoi(spec.substr(b + 1));
  Collection::OpenOptions options;
  options.mode = Collection::Mode::kReadWrite;
  Result<std::unique_ptr<Collection>> c = Collection::Open(dir, options);
  if (!c.ok()) _exit(2);
  for (int s = first; s < first + kStepsPerChild; ++s) {
    Step step = MakeStep(s);
    std::vector<IncomingDocument> docs;
    for (auto& [id, text] : step.upserts) docs.push_back({id, id, text, ChunksOf(text), 0});
    if (!(*c)->Commit(docs, step.removals).ok()) _exit(3);
    if (write(fd, &s, sizeof(s)) != sizeof(s)) _exit(4);
    if (s % 4 == 3 && !ComputeSimilarities(**c, kSimilar).ok()) _exit(6);
  }
  _exit(0);
}

const bool kChildChecked = [] {
  const char* spec = std::getenv("NEARDUP_CRASH_CHILD");
  if (spec != nullptr) RunChild(spec);
  return true;
}();

std::map<std::string, std::string> State(const Collection& c) {
  std::map<std::string, std::string> state;
  Result<std::vector<DocumentInfo>> docs = c.ListDocuments();
  EXPECT_TRUE(docs.ok()) << docs.status();
  for (const DocumentInfo& info : *docs) state[info.id] = *c.Text(info.doc);
  return state;
}

TEST(CrashCollectionTest, SigkillAtRandomPointsLosesNoAcknowledgedCommit) {
  ASSERT_TRUE(kChildChecked);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("neardup_crash_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(Collection::Create(dir.string(), *PresetRecipe("default"), {}).ok());

  internal::SplitMix64 rng(42);
  int last_state = -1;  // the collection holds steps [0, last_state]
  int kills = 0;
  int incremental_checks = 0;
  for (int round = 0; round < 8; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const std::string spec =
        dir.string() + "|" + std::to_string(last_state + 1) + "|" + std::to_string(pipe_fds[1]);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pipe_fds[0]);
      setenv("NEARDUP_CRASH_CHILD", spec.c_str(), 1);
      execl("/proc/self/exe", "crash_collection_test", static_cast<char*>(nullptr));
      _exit(5);
    }
    close(pipe_fds[1]);
    // Wait for 2-4 acknowledgements (so every round makes progress however
    // slow the machine: a sanitizer build on a loaded CI runner), then kill
    // after a random delay, which lands in a commit or a similarity update.
    int acked = last_state;
    int step;
    const int wait_for = 2 + static_cast<int>(rng.Next() % 3);
    for (int k = 0; k < wait_for; ++k) {
      if (read(pipe_fds[0], &step, sizeof(step)) != sizeof(step)) break;
      acked = step;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng.Next() % 40000));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) ++kills;
    while (read(pipe_fds[0], &step, sizeof(step)) == sizeof(step)) acked = step;
    close(pipe_fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
        << "child failed with status " << status;

    Collection::OpenOptions options;
    options.mode = Collection::Mode::kReadWrite;
    Result<std::unique_ptr<Collection>> c = Collection::Open(dir.string(), options);
    ASSERT_TRUE(c.ok()) << "round " << round << ": " << c.status();
    Status verified = (*c)->Verify();
    ASSERT_TRUE(verified.ok()) << "round " << round << ": " << verified;
    std::map<std::string, std::string> state = State(**c);
    if (state == Expected(acked)) {
      last_state = acked;
    } else {
      ASSERT_EQ(state, Expected(acked + 1))
          << "round " << round << ": the collection lost acknowledged step " << acked;
      last_state = acked + 1;
    }
    // The similarity bookkeeping survived the kill: the incremental update
    // (a full one when the table was never stored) equals a recomputation.
    SimilarStats stats;
    ASSERT_TRUE(ComputeSimilarities(**c, kSimilar, &stats).ok()) << "round " << round;
    if (!stats.full) ++incremental_checks;
    Result<std::vector<SimilarityRow>> full = ComputeAllSimilarities(**c, kSimilar);
    ASSERT_TRUE(full.ok());
    ASSERT_EQ(*(*c)->ReadSimilarities(), *full) << "round " << round;
  }
  EXPECT_GE(incremental_checks, 6);
  EXPECT_GE(kills, 6);
  EXPECT_GE(last_state, 15);  // at least two acknowledged steps per round
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neardup
