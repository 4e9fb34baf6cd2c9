// The reproduction of issue 12, item 6, as processes: a `query` loop and an
// `index stats` loop run while `index add`, `index remove` and `index
// compact` loop on the same collection. Before snapshots, readers printed
// "b":"" (an id looked up after a writer retired the document) or failed to
// open a file the writer had just deleted. Now every reader run must exit 0
// and print no empty id. Bounded in time (about three seconds).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"

extern char** environ;

namespace {

using neardup::testing::CommandResult;

class CollectionRaceCliTest : public neardup::testing::CliTestBase {
 protected:
  // Runs `neardup args` (no shell; safe from several threads), output in
  // files named after `tag`.
  CommandResult Run(const std::vector<std::string>& args, const std::string& tag) {
    const std::string out_path = (dir_ / (tag + ".out")).string();
    const std::string err_path = (dir_ / (tag + ".err")).string();
    std::vector<std::string> argv_storage = {NEARDUP_CLI};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    CommandResult result;
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      result.err = "spawn failed";
      return result;
    }
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = Read(out_path);
    result.err = Read(err_path);
    return result;
  }
};

TEST_F(CollectionRaceCliTest, ReadersNeverFailNorPrintEmptyIdsWhileWritersLoop) {
  const std::string dir = (dir_ / "archive").string();
  ASSERT_EQ(Run({"index", "create", dir}, "create").exit_code, 0);
  ASSERT_EQ(Run({"index", "add", "-q", dir, Example()}, "seed").exit_code, 0);
  // Documents that copy the example's texts, so that queries match them.
  std::vector<std::string> batches;
  const std::vector<std::string> examples = Lines(Read(Example()));
  for (int b = 0; b < 4; ++b) {
    std::string jsonl;
    for (size_t i = 0; i < examples.size(); ++i) {
      std::string line = examples[i];
      const size_t id = line.find("\"id\": \"");
      ASSERT_NE(id, std::string::npos);
      line.insert(id + 7, "copy" + std::to_string(b) + "-");
      jsonl += line + "\n";
    }
    batches.push_back(Write("batch" + std::to_string(b) + ".jsonl", jsonl));
  }

  std::atomic<bool> done{false};
  std::atomic<int> writes{0};
  std::atomic<int> queries{0}, stats{0};
  std::string writer_failure;
  std::thread writer([&] {
    // About three seconds, but until each loop ran a few times (a loaded
    // machine starts processes slowly), at most 30 s.
    const auto start = std::chrono::steady_clock::now();
    auto enough = [&] {
      const auto elapsed = std::chrono::steady_clock::now() - start;
      if (elapsed > std::chrono::seconds(30)) return true;
      return elapsed > std::chrono::seconds(3) && writes >= 12 && queries >= 5 && stats >= 5;
    };
    for (int i = 0; !enough(); ++i) {
      const std::string batch = batches[i % batches.size()];
      CommandResult add = Run({"index", "add", "-q", dir, batch}, "add");
      // Remove what the batch added, so every round really retires rows.
      std::vector<std::string> remove = {"index", "remove", "-q", dir};
      for (const std::string& line : Lines(Read(batch))) {
        const size_t at = line.find("\"id\": \"") + 7;
        remove.push_back(line.substr(at, line.find('"', at) - at));
      }
      CommandResult removed = Run(remove, "remove");
      CommandResult compact = Run({"index", "compact", "-q", dir}, "compact");
      if (add.exit_code != 0 || removed.exit_code != 0 || compact.exit_code != 0) {
        writer_failure = add.err + removed.err + compact.err;
        break;
      }
      writes += 3;
    }
    done = true;
  });
  std::vector<std::string> failures;
  std::mutex failures_mutex;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(failures_mutex);
    failures.push_back(what);
  };
  std::thread query_loop([&] {
    while (!done) {
      CommandResult q = Run({"query", dir, "--top", "20", "--min", "0.01", Example()}, "query");
      if (q.exit_code != 0) fail("query exit " + std::to_string(q.exit_code) + ": " + q.err);
      if (q.out.find("\"b\":\"\"") != std::string::npos) fail("query printed an empty id");
      if (q.exit_code == 0 && Lines(q.out).size() != Lines(Read(Example())).size()) {
        fail("query printed " + std::to_string(Lines(q.out).size()) + " lines");
      }
      ++queries;
    }
  });
  std::thread stats_loop([&] {
    while (!done) {
      CommandResult s = Run({"index", "stats", dir}, "stats");
      if (s.exit_code != 0) fail("stats exit " + std::to_string(s.exit_code) + ": " + s.err);
      ++stats;
    }
  });
  writer.join();
  query_loop.join();
  stats_loop.join();
  EXPECT_EQ(writer_failure, "");
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, the first: " << failures[0];
  EXPECT_GT(writes.load(), 3);
  EXPECT_GT(queries.load(), 3);
  EXPECT_GT(stats.load(), 3);
  CommandResult verify = Run({"index", "verify", dir}, "verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
}

}  // namespace
