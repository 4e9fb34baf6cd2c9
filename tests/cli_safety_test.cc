// End-to-end tests of the `neardup` binary used as a careless or hostile user
// would (issue 12): outputs that name inputs, failed runs over a good output,
// a full stdout, bad numbers, busy collections, duplicate ids, inputs that
// never end, and directories holding what is not a file.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using neardup::testing::CommandResult;

class CliSafetyTest : public neardup::testing::CliTestBase {
 protected:
  // A corpus copied into the test directory, so a test may damage it.
  std::string Corpus(const std::string& name = "x.jsonl") { return Write(name, Read(Example())); }

  // Names in the test directory that look like leftover temporaries.
  std::vector<std::string> Temporaries() const {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      if (entry.path().filename().string().find(".neardup-") != std::string::npos) {
        found.push_back(entry.path().string());
      }
    }
    return found;
  }

#ifdef NEARDUP_TEST_OUTPUT_LOCK_HOOKS
  // `dedup -q FLAGS` of the example to out.jsonl with the output lock hook
  // (tests/hooks/output_lock_hooks.cc) preloaded, sweeping at the rename,
  // and `env` set: it exits 0, the hook writes `hook_line`, and the output
  // is `expected`'s (an unhooked run's).
  void DedupUnderLockHook(const std::string& env, const std::string& flags,
                          const std::string& expected, const std::string& hook_line) {
    const std::string output = (dir_ / "out.jsonl").string();
    CommandResult run = NeardupWithEnv(
        "LD_PRELOAD='" NEARDUP_TEST_OUTPUT_LOCK_HOOKS "' NEARDUP_TEST_SWEEP_AT_RENAME=1" + env,
        "dedup -q" + flags + " -o " + output + " " + Example());
    EXPECT_EQ(run.exit_code, 0) << flags << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr(hook_line)) << flags;
    EXPECT_TRUE(Read(output) == Read(expected)) << flags;
  }
#endif
};

// Item 1: `-o` naming an input destroyed it (truncated to 0 bytes, exit 0).
TEST_F(CliSafetyTest, OutputNamingAnInputIsRefusedAndTheInputKept) {
  const std::string input = Corpus();
  const std::string original = Read(input);
  ASSERT_EQ(std::system(("gzip -k " + input).c_str()), 0);
  ASSERT_EQ(std::system(("ln -s " + input + " " + (dir_ / "link.jsonl").string()).c_str()), 0);
  ASSERT_EQ(std::system(("ln " + input + " " + (dir_ / "hard.jsonl").string()).c_str()), 0);
  Write("tree/inside.jsonl", original);
  const std::string tree = (dir_ / "tree").string();
  struct Case {
    std::string args;
    std::string victim;
  };
  const std::vector<Case> cases = {
      {"dedup -q -o " + input + " " + input, input},
      {"dedup -q --strict -o " + input + " " + input, input},
      {"fingerprint -q -o " + input + " " + input, input},
      {"pairs -q -o " + input + " " + input, input},
      {"dedup -q -o " + input + ".gz " + input + ".gz", input + ".gz"},
      {"dedup -q -o " + (dir_ / "link.jsonl").string() + " " + input, input},
      {"dedup -q -o " + input + " " + (dir_ / "hard.jsonl").string(), input},
      {"dedup -q -o " + tree + "/inside.jsonl " + tree, tree + "/inside.jsonl"},
      {"dedup -q -o " + input + " " + Example() + " " + tree + "/../x.jsonl", input},
  };
  for (const Case& c : cases) {
    const std::string before = Read(c.victim);
    CommandResult run = Neardup(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("refusing to overwrite an input")) << c.args;
    EXPECT_EQ(Read(c.victim), before) << c.args;
  }
  EXPECT_EQ(Read(input), original);
  // A new file inside an input directory would be read as an input too.
  CommandResult fresh = Neardup("dedup -q -o " + tree + "/new.jsonl " + tree);
  EXPECT_EQ(fresh.exit_code, 2) << fresh.err;
  EXPECT_FALSE(std::filesystem::exists(tree + "/new.jsonl"));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

// Item 2: a failed run emptied the previous good output.
TEST_F(CliSafetyTest, FailedRunsLeaveThePreviousOutputUntouched) {
  const std::string output = (dir_ / "out.jsonl").string();
  ASSERT_EQ(Neardup("fingerprint -q -o " + output + " " + Example()).exit_code, 0);
  const std::string good = Read(output);
  ASSERT_EQ(Lines(good).size(), 12u);

  // A truncated gzip input: exit 4, and the old output stays whole.
  std::string corpus;
  for (int i = 0; i < 20000; ++i) {
    corpus += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"text " +
              std::to_string(i * 7919) + "\"}\n";
  }
  const std::string plain = Write("big.jsonl", corpus);
  ASSERT_EQ(std::system(("gzip " + plain).c_str()), 0);
  const std::string gz = Read(plain + ".gz");
  const std::string cut = Write("cut.jsonl.gz", gz.substr(0, gz.size() / 2));
  CommandResult truncated = Neardup("fingerprint -q -o " + output + " " + cut);
  EXPECT_EQ(truncated.exit_code, 4) << truncated.err;
  EXPECT_EQ(Read(output), good);

  // A bad flag, a missing input, skipped records under --strict.
  EXPECT_EQ(Neardup("fingerprint -q --no-such-flag -o " + output + " " + Example()).exit_code, 2);
  EXPECT_EQ(Neardup("fingerprint -q -o " + output + " " + (dir_ / "absent").string()).exit_code, 3);
  const std::string bad = Write("bad.jsonl", "{\"id\": \"ok\", \"text\": \"x\"}\nnot json\n");
  EXPECT_EQ(Neardup("dedup -q --strict -o " + output + " " + bad).exit_code, 5);
  EXPECT_EQ(Read(output), good);
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());

  // A run that succeeds replaces it, keeping the file's permissions.
  ASSERT_EQ(::chmod(output.c_str(), 0640), 0);
  ASSERT_EQ(Neardup("fingerprint -q -o " + output + " " + bad).exit_code, 0);
  EXPECT_EQ(Lines(Read(output)).size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(output.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  // Outputs that are not regular files are written in place.
  EXPECT_EQ(Neardup("fingerprint -q -o /dev/null " + Example()).exit_code, 0);
}

// Item 2: a run killed mid-way leaves the old output, not a partial one.
TEST_F(CliSafetyTest, KilledRunLeavesThePreviousOutput) {
  const std::string output = (dir_ / "out.jsonl").string();
  ASSERT_EQ(Neardup("fingerprint -q -o " + output + " " + Example()).exit_code, 0);
  const std::string good = Read(output);
  const std::string fifo = (dir_ / "slow.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer sends 3000 records (more than one pipeline batch) and then
  // holds the FIFO open; the run is killed while it waits for more.
  std::string records;
  for (int i = 0; i < 3000; ++i) {
    records +=
        "{\"id\": \"k" + std::to_string(i) + "\", \"text\": \"words " + std::to_string(i) + "\"}\n";
  }
  const std::string feed = Write("feed.jsonl", records);
  const std::string command = "(cat " + feed + "; exec sleep 30) > " + fifo + " & echo $! > " +
                              (dir_ / "writer.pid").string() + "; " + NEARDUP_CLI +
                              " fingerprint -q -o " + output + " " + fifo + " & echo $! > " +
                              (dir_ / "run.pid").string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string run_pid = Read((dir_ / "run.pid").string());
  const std::string writer_pid = Read((dir_ / "writer.pid").string());
  ASSERT_EQ(std::system(("kill -9 " + run_pid).c_str()), 0);
  ASSERT_EQ(std::system(("kill " + writer_pid).c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Read(output), good);
  // The killed run's hidden temporary is left beside the output; the next
  // run of the same output removes it (no process holds it any more).
  EXPECT_THAT(Temporaries(), ::testing::SizeIs(1));
  ASSERT_EQ(Neardup("fingerprint -q -o " + output + " " + Example()).exit_code, 0);
  EXPECT_EQ(Read(output), good);
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

// A run writing `-o FILE` removes the temporaries of FILE that no process
// holds (a killed run's), whether it succeeds or not, and leaves those of a
// run still writing FILE (it holds its temporary's flock), those of other
// outputs, and names that only look alike.
TEST_F(CliSafetyTest, ARunRemovesOnlyItsOutputsAbandonedTemporaries) {
  const std::string output = (dir_ / "out.jsonl").string();
  const std::string stale = Write(".out.jsonl.neardup-AbC123", "partial");
  const std::string stale_empty = Write(".out.jsonl.neardup-000000", "");
  const std::string live = Write(".out.jsonl.neardup-Live01", "still being written");
  const std::string other = Write(".other.jsonl.neardup-XyZ789", "another output's");
  const std::string unlike = Write(".out.jsonl.neardup-AbC12", "not a temporary's name");
  const std::string unlike2 = Write(".out.jsonl.neardup-AbC123.x", "nor this");
  const std::string unlocked = Write(".out.jsonl.neardup-AbC123.unlocked", "a lockless writer's");
  // A link that carries a temporary's name is left, and so is its target.
  const std::string target = Write("target.jsonl", "the link's target");
  const std::string link = (dir_ / ".out.jsonl.neardup-Sym001").string();
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const int held = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);  // as a live writer holds its own
  namespace fs = std::filesystem;
  // A failed run (--strict, a skipped record) sweeps too.
  const std::string bad = Write("bad.jsonl", "{\"id\": \"a\", \"text\": \"one two\"}\n{oops\n");
  EXPECT_EQ(Neardup("fingerprint -q --strict -o " + output + " " + bad).exit_code, 5);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_empty));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_FALSE(fs::exists(output));
  ASSERT_EQ(Neardup("dedup -q -o " + output + " " + Example()).exit_code, 0);
  EXPECT_TRUE(fs::exists(output));
  for (const std::string& kept : {live, other, unlike, unlike2, unlocked, target}) {
    EXPECT_TRUE(fs::exists(kept)) << kept;
  }
  EXPECT_TRUE(fs::is_symlink(link));
  ::close(held);  // the writer is gone: the next run removes its temporary
  ASSERT_EQ(Neardup("dedup -q -o " + output + " " + Example()).exit_code, 0);
  EXPECT_FALSE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

// The sweep decides by lstat before it opens anything: a FIFO that carries
// a temporary's name is never opened (a writer blocked opening it stays
// blocked), nor would a device node be.
TEST_F(CliSafetyTest, TheSweepOpensOnlyRegularFiles) {
  const std::string output = (dir_ / "out.jsonl").string();
  const std::string fifo = (dir_ / ".out.jsonl.neardup-Fifo01").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string opened = (dir_ / "opened").string();
  // Opening the FIFO for writing waits until some process opens it for
  // reading; then the marker is written.
  ASSERT_EQ(
      std::system(("(exec 3>" + fifo + "; echo yes > " + opened + ") >/dev/null 2>&1 &").c_str()),
      0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(Neardup("fingerprint -q -o " + output + " " + Example()).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(std::filesystem::exists(opened));
  EXPECT_TRUE(std::filesystem::exists(fifo));
  // Release the waiting writer.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  for (int i = 0; i < 50 && !std::filesystem::exists(opened); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::close(reader);
}

// A writer keeps its temporary's lock until the temporary is renamed: a
// sweep by another run of the same output at that moment (the test hook
// tests/hooks/output_lock_hooks.cc, preloaded into neardup, does one right
// before the rename) finds it locked. Before, closing the stream dropped
// the lock first, and the sweep removed the finished output.
TEST_F(CliSafetyTest, AFinishedTemporaryStaysLockedUntilItsRename) {
#ifndef NEARDUP_TEST_OUTPUT_LOCK_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded hook "
                  "(tests/hooks/output_lock_hooks.cc) that this test needs is not built";
#else
  const std::string expected = (dir_ / "expected.jsonl").string();
  ASSERT_EQ(Neardup("dedup -q -o " + expected + " " + Example()).exit_code, 0);
  for (const std::string fsync : {"", " --no-fsync"}) {
    DedupUnderLockHook("", fsync, expected, "neardup test hook: temporary locked at its rename");
    EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
  }
#endif
}

// Where the writer cannot lock its temporary (the hook fails every
// exclusive flock, as a lock manager out of locks would), the temporary
// gets a name no sweep removes, and the run sweeps nothing.
TEST_F(CliSafetyTest, AnUnlockedTemporaryIsNeverSwept) {
#ifndef NEARDUP_TEST_OUTPUT_LOCK_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded hook "
                  "(tests/hooks/output_lock_hooks.cc) that this test needs is not built";
#else
  const std::string expected = (dir_ / "expected.jsonl").string();
  ASSERT_EQ(Neardup("dedup -q -o " + expected + " " + Example()).exit_code, 0);
  const std::string stale = Write(".out.jsonl.neardup-AbC123", "partial");
  DedupUnderLockHook(" NEARDUP_TEST_EXCLUSIVE_FLOCK_FAILS=1", "", expected,
                     "neardup test hook: temporary not a sweep's name at its rename");
  EXPECT_TRUE(std::filesystem::exists(stale));  // no lock of its own: no sweep
  EXPECT_THAT(Temporaries(), ::testing::ElementsAre(stale));
#endif
}

// Item 10: printf output and --help exited 0 on a full stdout.
TEST_F(CliSafetyTest, FullStandardOutputIsAnError) {
  const std::string collection = (dir_ / "c").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  for (const std::string& args :
       std::vector<std::string>{"recipe show", "recipe list", "--help", "fingerprint --help",
                                "index stats " + collection, "fingerprint -q " + Example(),
                                "pairs -q --threshold 0.5 " + Example()}) {
    CommandResult run = Neardup(args + " > /dev/full");
    EXPECT_EQ(run.exit_code, 3) << args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("cannot write to standard output")) << args;
  }
}

// Item 8: numbers that wrapped, were negative or nan, or did not apply.
TEST_F(CliSafetyTest, NumericOptionsAreValidatedInOnePlace) {
  const std::string input = Example();
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"fingerprint --max-document-mb 17592186044416 " + input,
       "--max-document-mb: (17592186044416) must be in [1, 16777216]"},
      {"fingerprint --max-document-mb -5 " + input, "(-5) is not a whole number >= 0"},
      {"fingerprint --max-document-mb 0 " + input, "must be in [1, 16777216]"},
      {"fingerprint --max-document-mb 1.5 " + input, "is not a whole number"},
      {"fingerprint --threads -1 " + input, "--threads: (-1) must be in [0, 4096]"},
      {"pairs --threshold nan " + input, "--threshold: (nan) is not a finite number"},
      {"pairs --threshold 0 " + input, "--threshold: (0) must be in (0, 1)"},
      {"pairs --threshold 1 " + input, "--threshold: (1) must be in (0, 1)"},
      {"pairs --fp-weight inf " + input, "is not a finite number"},
      {"pairs --method simhash --max-distance 64 " + input, "must be in [0, 63]"},
      {"pairs --method minhash --max-distance 5 " + input,
       "--max-distance applies to --method simhash only"},
      {"pairs --blocks 8 " + input, "--blocks applies to --method simhash only"},
      {"clusters --method simhash --threshold 0.5 " + input,
       "--threshold applies to --method minhash only"},
      {"dedup --method simhash --verify exact " + input, "--verify applies to --method minhash"},
      {"index add c --commit-growth nan " + input, "--commit-growth: (nan) is not a finite"},
      {"index add c --commit-every -3 " + input, "(-3) is not a whole number >= 0"},
      {"index create c --max-df -1", "(-1) is not a whole number >= 0"},
      {"similar c --min nan", "is not a finite number"},
      {"query c --top 0 " + input, "must be in [1, "},
      {"index add c --wait -1 " + input, "--wait: (-1) must be in [0, "},
  };
  for (const Case& c : cases) {
    CommandResult run = Neardup(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr(c.message)) << c.args;
  }
  // Help, parser and message give the same range.
  EXPECT_THAT(Neardup("pairs --help").out, HasSubstr("--threshold FLOAT:in (0, 1)"));
  EXPECT_EQ(Neardup("pairs -q --threshold 0.99 " + input).exit_code, 0);
}

// Item 11: a busy collection was exit 2 (usage); now 6, or a wait.
TEST_F(CliSafetyTest, BusyCollectionHasItsOwnExitCodeAndCanBeWaitedFor) {
  const std::string collection = (dir_ / "c").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  const std::string ready = (dir_ / "locked").string();
  const std::string release = (dir_ / "release").string();
  // Another writer: flock(1) holds the collection's LOCK until the test
  // creates `release` (at most 60 s, so that it never outlives the test). Not
  // a fixed time: the busy checks below may take long on a loaded machine.
  ASSERT_EQ(std::system(("flock " + collection + "/LOCK -c 'touch " + ready +
                         "; for i in $(seq 600); do [ -e " + release +
                         " ] && break; sleep 0.1; done' >/dev/null 2>&1 &")
                            .c_str()),
            0);
  for (int i = 0; i < 100 && !std::filesystem::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(std::filesystem::exists(ready));
  for (const std::string& args : std::vector<std::string>{
           "index add " + collection + " " + Example(), "index remove " + collection + " some-id",
           "index compact " + collection, "similar " + collection}) {
    CommandResult busy = Neardup(args);
    EXPECT_EQ(busy.exit_code, 6) << args << "\n" << busy.err;
    EXPECT_THAT(busy.err, HasSubstr("is open for writing by another process")) << args;
  }
  // The other writer lets go two seconds after the waiting add starts.
  ASSERT_EQ(std::system(("(sleep 2; touch " + release + ") >/dev/null 2>&1 &").c_str()), 0);
  CommandResult waited = Neardup("index add --wait 30 " + collection + " " + Example());
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_THAT(waited.err, HasSubstr("12 added"));
}

// Item 11: other codes that were 2.
TEST_F(CliSafetyTest, ExitCodesForAFileAndChangedInputs) {
  const std::string file = Write("plain.txt", "I am a file");
  CommandResult create = Neardup("index create " + file);
  EXPECT_EQ(create.exit_code, 3) << create.err;
  EXPECT_THAT(create.err, HasSubstr("it exists and is not a directory"));
  EXPECT_EQ(Read(file), "I am a file");
  // Still a usage error: a collection that is already there.
  const std::string collection = (dir_ / "c").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  EXPECT_EQ(Neardup("index create " + collection).exit_code, 2);
}

// Item 11: inputs that changed while being read were exit 2 (usage).
TEST_F(CliSafetyTest, InputsThatChangeBetweenDedupPassesAreDataLoss) {
  // dedup reads a JSONL input twice (fingerprints, then the kept records); a
  // FIFO serves different records to the two passes.
  const std::string first = Write("first.jsonl", Read(Example()));
  const std::string second =
      Write("second.jsonl", "{\"id\": \"other\", \"text\": \"something else entirely\"}\n");
  const std::string fifo = (dir_ / "changing.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::system(("(cat " + first + " > " + fifo + "; sleep 2; cat " + second + " > " +
                         fifo + ") >/dev/null 2>&1 &")
                            .c_str()),
            0);
  const std::string output = Write("kept.jsonl", "previous\n");
  CommandResult run = Neardup("dedup -q -o " + output + " " + fifo, 60);
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the inputs changed between passes over them (document "));
  EXPECT_EQ(Read(output), "previous\n");
}

// Item 11: memory running out aborted (exit 134) through an uncaught
// std::bad_alloc.
TEST_F(CliSafetyTest, MemoryRunningOutIsAnExitCodeNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan reserves more address space than the limit allows";
#else
  // A 2000 MB document from /dev/zero under a 400 MB address-space limit.
  const std::string script = "ulimit -v 400000; " + std::string(NEARDUP_CLI) +
                             " fingerprint -q --max-document-mb 2000 /dev/zero 2>" +
                             (dir_ / "oom.txt").string();
  const int status = std::system(("bash -c '" + script + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_THAT(Read((dir_ / "oom.txt").string()), HasSubstr("out of memory"));
#endif
}

// Item 7: duplicate ids kept the last record silently ("6 read: 3 added").
TEST_F(CliSafetyTest, DuplicateIdsAreCountedReportedAndFailStrict) {
  const std::string kFirst =
      "the first version of document a talks about rivers bridges ferries and harbours";
  const std::string kSecond =
      "a completely different second version mentions deserts camels dunes and oases";
  const std::string kOther = "some other document with words of its own numbered";
  const std::string collection = (dir_ / "c").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  const std::string input = Write("dups.jsonl", "{\"id\": \"a\", \"text\": \"" + kFirst +
                                                    "\"}\n"
                                                    "{\"id\": \"b\", \"text\": \"" +
                                                    kOther +
                                                    " b\"}\n"
                                                    "{\"id\": \"a\", \"text\": \"" +
                                                    kSecond +
                                                    "\"}\n"
                                                    "{\"id\": 1, \"text\": \"" +
                                                    kOther +
                                                    " one\"}\n"
                                                    "{\"id\": \"1\", \"text\": \"" +
                                                    kOther +
                                                    " uno\"}\n"
                                                    "{\"id\": \"c\", \"text\": \"" +
                                                    kOther + " c\"}\n");
  CommandResult add = Neardup("index add " + collection + " " + input);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.err, HasSubstr("6 documents read: 4 added, 0 modified, 0 unchanged, 2 duplicate "
                                 "ids not added"));
  EXPECT_THAT(add.err, HasSubstr("(id a): duplicate id"));
  EXPECT_THAT(add.err, HasSubstr("(id 1): duplicate id"));
  // The first record of an id is the one added.
  CommandResult query =
      Neardup("query -q " + collection + " --min 0.9 - --input-format jsonl < " +
              Write("q.jsonl", "{\"id\": \"q\", \"text\": \"" + kFirst + "\"}\n"));
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_THAT(query.out, HasSubstr("\"b\":\"a\",\"a_in_b\":1"));

  const std::string other = (dir_ / "d").string();
  ASSERT_EQ(Neardup("index create " + other).exit_code, 0);
  EXPECT_EQ(Neardup("index add -q --strict " + other + " " + input).exit_code, 5);
}

// Item 9: /dev/zero and a FIFO that never closes ran forever.
TEST_F(CliSafetyTest, InputsThatNeverEndStopAtTheLimit) {
  CommandResult zero = Neardup("fingerprint --max-document-mb 1 /dev/zero", 60);
  EXPECT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_THAT(zero.err, HasSubstr("/dev/zero"));
  EXPECT_THAT(zero.err, HasSubstr("may never end"));
  EXPECT_THAT(zero.err, HasSubstr("1 records skipped"));
  CommandResult zero_jsonl =
      Neardup("fingerprint -q --max-document-mb 1 --input-format jsonl /dev/zero", 60);
  EXPECT_EQ(zero_jsonl.exit_code, 3) << zero_jsonl.err;
  EXPECT_THAT(zero_jsonl.err, HasSubstr("line 1 is longer than max_document_bytes"));

  const std::string fifo = (dir_ / "endless.txt").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // `yes` writes forever and never closes; it dies of SIGPIPE once the
  // reader stops.
  ASSERT_EQ(std::system(("timeout 60 yes > " + fifo + " 2>/dev/null &").c_str()), 0);
  auto started = std::chrono::steady_clock::now();
  CommandResult run = Neardup("fingerprint --max-document-mb 1 " + fifo, 60);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("may never end"));
}

// Item 12: `index add C C` indexed the collection's own files; entries that
// are not files vanished without being counted; invalid UTF-8 in JSONL was a
// skip; a line starting with `t` was "a boolean".
TEST_F(CliSafetyTest, IndexAddSkipsItsOwnCollectionAndCountsOddEntries) {
  const std::string corpus = (dir_ / "corpus").string();
  Write("corpus/a.txt", "the first document of the corpus about rivers and bridges");
  Write("corpus/b.txt", "the second document of the corpus about mountains and lakes");
  const std::string collection = corpus + "/coll";
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  std::filesystem::create_directory_symlink(dir_, corpus + "/up");  // a loop if followed
  ASSERT_EQ(::mkfifo((corpus + "/pipe").c_str(), 0600), 0);
  CommandResult add = Neardup("index add " + collection + " " + corpus + " " + collection);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.err, HasSubstr("2 documents read: 2 added"));
  EXPECT_THAT(add.err, HasSubstr("4 other records skipped"));
  EXPECT_THAT(add.err, HasSubstr("the collection being added to"));
  EXPECT_THAT(add.err, HasSubstr("symbolic link to a directory"));
  EXPECT_THAT(add.err, HasSubstr("FIFO"));
  EXPECT_EQ(Neardup("index add -q --strict " + collection + " " + corpus).exit_code, 5);
}

TEST_F(CliSafetyTest, JsonlInvalidUtf8IsReplacedAndPlainTextIsInvalidJson) {
  const std::string input = Write("u.jsonl",
                                  "{\"id\": \"latin1\", \"text\": \"caf\xe9 cr\xe8me\"}\n"
                                  "this is not json\n"
                                  "{\"id\": \"fine\", \"text\": \"caf\xef\xbf\xbd cr\xef\xbf\xbd"
                                  "me\"}\n");
  CommandResult run = Neardup("fingerprint " + input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 2u);
  // The replaced text fingerprints as U+FFFD typed in directly.
  auto simhash = [](const std::string& line) { return line.substr(line.find("\"simhash\"")); };
  EXPECT_EQ(simhash(lines[0]), simhash(lines[1]));
  EXPECT_THAT(run.err, HasSubstr("1 with invalid UTF-8, 1 records skipped"));
  EXPECT_THAT(run.err, HasSubstr("u.jsonl:2: invalid JSON: the line is not a JSON value"));
  EXPECT_THAT(run.err, Not(HasSubstr("boolean")));
}

// Session 11: an input truncated while it was read through its mapping
// killed the process with SIGBUS (exit 135, no message, a half-written
// output left). The truncation happens right after the file is mapped, by
// the test hook tests/hooks/mapped_input_hooks.cc preloaded into neardup
// (NEARDUP_TEST_SHRINK_MAPPED_INPUT="<bytes>@<n>": the n-th file mapped):
// fingerprint's only pass, and dedup's first and second passes (the second
// maps the file again to copy the kept records).
TEST_F(CliSafetyTest, AnInputTruncatedWhileReadIsDataLossNotSigbus) {
#ifndef NEARDUP_TEST_MAPPED_INPUT_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded shrink hook "
                  "(tests/hooks/mapped_input_hooks.cc) that this test needs is not built";
#else
  const std::string big = ExampleRepeatedTo(300000);
  const std::string size = std::to_string(big.size());
  struct Case {
    std::string command;  // after the environment, before the input
    std::string shrink;
  };
  const Case cases[] = {
      {"fingerprint --simhash --threads 2", "100037"},
      {"fingerprint --simhash --threads 2", "0"},
      {"dedup -q --threads 2 -o " + (dir_ / "kept.jsonl").string(), "100037@1"},
      {"dedup -q --threads 2 -o " + (dir_ / "kept.jsonl").string(), "100037@2"},
  };
  for (const Case& c : cases) {
    const std::string input = Write("big.jsonl", big);
    Write("kept.jsonl", "previous\n");
    const std::string left = c.shrink.substr(0, c.shrink.find('@'));
    CommandResult run = NeardupWithEnv("LD_PRELOAD='" NEARDUP_TEST_MAPPED_INPUT_HOOKS
                                       "' NEARDUP_TEST_SHRINK_MAPPED_INPUT=" +
                                           c.shrink,
                                       c.command + " " + input + " >/dev/null", 60);
    EXPECT_EQ(run.exit_code, 4) << c.command << " " << c.shrink << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("input " + input + " shrank while it was read (" + size +
                                   " -> " + left + " bytes)"))
        << c.shrink;
    EXPECT_EQ(Read((dir_ / "kept.jsonl").string()), "previous\n");
    EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
  }
#endif
}

// Session 12: the shrink hook used to be read by the library itself, so a
// stray NEARDUP_TEST_SHRINK_MAPPED_INPUT in a user's environment cut their
// input. neardup alone (no preloaded hook) now ignores it.
TEST_F(CliSafetyTest, TheShrinkVariableAloneLeavesTheInputWhole) {
  const std::string big = ExampleRepeatedTo(300000);
  const std::string input = Write("big.jsonl", big);
  CommandResult run = NeardupWithEnv("NEARDUP_TEST_SHRINK_MAPPED_INPUT=100037",
                                     "fingerprint --simhash --threads 2 " + input, 60);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Read(input), big);
  EXPECT_EQ(Lines(run.out).size(), Lines(big).size());
}

// An input written in place while it was read (NEARDUP_TEST_REWRITE_MAPPED_INPUT
// ="<n>" of the preloaded hook: the n-th file mapped is written at its size,
// its modification time a second on) or appended to (the shrink hook
// "truncating" it to more bytes): exit 4 with the message and the previous
// output kept, for fingerprint's pass and dedup's first and second (or
// deferred sketches') pass. The hook writes the same byte back, so this
// covers the metadata check; ShrinkingInputTest changes the content.
TEST_F(CliSafetyTest, AnInputChangedWhileReadIsDataLoss) {
#ifndef NEARDUP_TEST_MAPPED_INPUT_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded rewrite hook "
                  "(tests/hooks/mapped_input_hooks.cc) that this test needs is not built";
#else
  const std::string big = ExampleRepeatedTo(300000);
  const std::string size = std::to_string(big.size());
  const std::string dedup = "dedup -q --threads 2 -o " + (dir_ / "kept.jsonl").string();
  struct Case {
    std::string command;  // after the environment, before the input
    std::string variable;
    std::string value;
    std::string detail;  // the message's parenthesis
  };
  const std::string same = "written or its status changed at the same size, " + size + " bytes";
  const std::string grew = "it grew from " + size + " to " + std::to_string(big.size() + 1000) +
                           " bytes: appended to or rewritten";
  const Case cases[] = {
      {"fingerprint --simhash --threads 2 -o " + (dir_ / "kept.jsonl").string(),
       "NEARDUP_TEST_REWRITE_MAPPED_INPUT", "1", same},
      {dedup, "NEARDUP_TEST_REWRITE_MAPPED_INPUT", "1", same},
      {dedup, "NEARDUP_TEST_REWRITE_MAPPED_INPUT", "2", same},
      {dedup, "NEARDUP_TEST_SHRINK_MAPPED_INPUT", std::to_string(big.size() + 1000) + "@1", grew},
  };
  for (const Case& c : cases) {
    const std::string input = Write("big.jsonl", big);
    Write("kept.jsonl", "previous\n");
    CommandResult run = NeardupWithEnv(
        "LD_PRELOAD='" NEARDUP_TEST_MAPPED_INPUT_HOOKS "' " + c.variable + "=" + c.value,
        c.command + " " + input + " >/dev/null", 60);
    EXPECT_EQ(run.exit_code, 4) << c.command << " " << c.value << ": " << run.err;
    EXPECT_THAT(run.err,
                HasSubstr("input " + input + " changed while it was read (" + c.detail + ")"))
        << c.command << " " << c.value;
    EXPECT_EQ(Read((dir_ / "kept.jsonl").string()), "previous\n");
    EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
  }
#endif
}

// `pairs`/`dedup` predicted every input could be located (deferred
// sketches, band keys only), but the second input turned into a gzip before
// it was opened (NEARDUP_TEST_RENAME_AFTER_MAPPING of the preloaded hook:
// renamed over it once the first input is mapped): the command falls back
// to fingerprinting everything again with every sketch (and no band keys:
// near_duplicate_commands.cc) and writes the bytes of a run that saw the
// gzip from the start.
TEST_F(CliSafetyTest, AnInputThatTurnsUnlocatableFallsBackToOnePass) {
#ifndef NEARDUP_TEST_MAPPED_INPUT_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded rename hook "
                  "(tests/hooks/mapped_input_hooks.cc) that this test needs is not built";
#else
  const std::string big = ExampleRepeatedTo(300000);
  const std::string first = Write("a.jsonl", big);
  const std::string plain = Read(Example());
  const std::string second = (dir_ / "b.jsonl").string();
  const std::string gzipped = (dir_ / "b.gz.tmp").string();
  for (const std::string command :
       {"pairs --threads 1", "pairs --threads 2", "dedup -q --threads 2", "clusters --threads 2"}) {
    Write("b.jsonl", plain);
    ASSERT_EQ(std::system(("gzip -c " + second + " > " + gzipped).c_str()), 0);
    // The reference: the gzip in place from the start (one pass).
    ASSERT_EQ(std::rename(gzipped.c_str(), second.c_str()), 0);
    CommandResult reference = Neardup(command + " " + first + " " + second, 60);
    ASSERT_EQ(reference.exit_code, 0) << command << ": " << reference.err;
    ASSERT_FALSE(reference.out.empty()) << command;
    Write("b.jsonl", plain);
    ASSERT_EQ(std::system(("gzip -c " + second + " > " + gzipped).c_str()), 0);
    CommandResult run = NeardupWithEnv("LD_PRELOAD='" NEARDUP_TEST_MAPPED_INPUT_HOOKS
                                       "' NEARDUP_TEST_RENAME_AFTER_MAPPING=1:" +
                                           gzipped + ":" + second,
                                       command + " " + first + " " + second, 60);
    EXPECT_FALSE(std::filesystem::exists(gzipped)) << command << ": the hook did not rename";
    EXPECT_EQ(run.exit_code, 0) << command << ": " << run.err;
    EXPECT_TRUE(run.out == reference.out) << command;
  }
  // The fall-back ran (no sketch stage: every sketch was computed again),
  // where with the plain second input the deferred path sketches.
  Write("b.jsonl", plain);
  ASSERT_EQ(std::system(("gzip -c " + second + " > " + gzipped).c_str()), 0);
  CommandResult profiled = NeardupWithEnv(
      "LD_PRELOAD='" NEARDUP_TEST_MAPPED_INPUT_HOOKS "' NEARDUP_TEST_RENAME_AFTER_MAPPING=1:" +
          gzipped + ":" + second,
      "pairs --profile --threads 2 " + first + " " + second, 60);
  EXPECT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_THAT(profiled.err, HasSubstr("fingerprint "));
  EXPECT_THAT(profiled.err, ::testing::Not(HasSubstr("sketch "))) << profiled.err;
  Write("b.jsonl", plain);
  CommandResult deferred = Neardup("pairs --profile --threads 2 " + first + " " + second, 60);
  EXPECT_EQ(deferred.exit_code, 0) << deferred.err;
  EXPECT_THAT(deferred.err, HasSubstr("sketch ")) << deferred.err;
#endif
}

// The path of this program's interpreter (PT_INTERP: the dynamic loader
// that neardup, built alike, names too); empty when statically linked.
std::string ProgramInterpreter() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_INTERP) {
            *static_cast<std::string*>(out) =
                reinterpret_cast<const char*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          }
        }
        return 1;  // the first object is the program
      },
      &found);
  return found;
}

// Started through the dynamic loader (`ld-linux-x86-64.so.2 ./neardup
// dedup ...`), a corpus-wide command runs: /proc/self/exe is then the
// loader, and the huge-page restart (docs/CLI.md) would start the loader
// with `dedup` as its program (exit 127) where the kernel gives huge pages
// on request. Without that restart it is skipped here too.
TEST_F(CliSafetyTest, ACorpusCommandRunsThroughTheDynamicLoader) {
  const std::string loader = ProgramInterpreter();
  if (loader.empty()) GTEST_SKIP() << "statically linked: no dynamic loader";
  const std::string direct = (dir_ / "direct.jsonl").string();
  CommandResult plain = Neardup("dedup -q -o " + direct + " " + Example());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string through = (dir_ / "through.jsonl").string();
  const std::string err = (dir_ / "through.err").string();
  // Under ASan, LeakSanitizer reports the loader's own allocation for a
  // program it was asked to start (glibc's dl-open add_to_global_resize),
  // not neardup's: leak checks are off for this one process.
  const int status =
      std::system(("ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" " + loader + " " +
                   NEARDUP_CLI + " dedup -q -o " + through + " " + Example() + " 2>" + err)
                      .c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << Read(err);
  EXPECT_EQ(Read(through), Read(direct));
}

}  // namespace
