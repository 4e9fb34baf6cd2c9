// `neardup dedup` writes the kept records into a regular file at their
// offsets from every core (neardup/positioned_output.h): the bytes are those
// of the ordered write into a pipe, whether the file is `-o FILE` (a
// temporary renamed at the end), standard output redirected with `>`
// (written in place, after whatever the shell's descriptor already holds,
// and leaving its offset after the records), or `>>` (O_APPEND: written in
// order). A write that fails midway (a file size limit) leaves `-o FILE`
// untouched and no temporary, and `> FILE` a strict prefix of the output.
// --no-fsync (every command with --output) gives the same bytes, skips the
// fsyncs and the writeback hints but not the rename (seen in an strace of
// the run), and still leaves no file at the output's name when the run fails
// after its temporary was sized.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "util/mix.h"

namespace neardup::testing {
namespace {

class PositionedWriteCliTest : public CliTestBase {
 protected:
  void SetUp() override {
    // ~2.4 MB of records: several 1 MiB ranges. Every fifth record repeats
    // an earlier one, so dedup drops some from the middle of ranges.
    internal::SplitMix64 rng(1310);
    std::string jsonl;
    std::vector<std::string> texts;
    for (int i = 0; i < 9000; ++i) {
      std::string text;
      if (i % 5 == 4) {
        text = texts[rng.Next() % texts.size()];
      } else {
        for (int w = 0; w < 60; ++w) {
          text += static_cast<char>('a' + rng.Next() % 26);
          text += static_cast<char>('a' + rng.Next() % 26);
          text += static_cast<char>('a' + rng.Next() % 26);
          text += ' ';
        }
        texts.push_back(text);
      }
      jsonl += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + text + "\"}" +
               (i % 3 == 0 ? "\r\n" : "\n");
    }
    corpus_ = Write("corpus.jsonl", jsonl);
  }

  // Runs `script` with sh; NEARDUP is the binary. The exit status.
  int RunShell(const std::string& script) {
    const std::string command = "NEARDUP='" + std::string(NEARDUP_CLI) + "' sh -c '" + script + "'";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string Dedup(int threads) const {
    return "$NEARDUP dedup -q --method simhash --threads " + std::to_string(threads) + " " +
           corpus_;
  }

  // `-o FILE` writes a temporary (".neardup-...") beside FILE and renames
  // it: none may be left, whether the run succeeded or failed.
  void ExpectNoTemporaryLeft() const {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      EXPECT_EQ(entry.path().filename().string().find(".neardup-"), std::string::npos)
          << entry.path();
    }
  }

  // The renames in an strace's output (rename, renameat or renameat2).
  static size_t Renames(const std::string& trace) {
    size_t n = 0;
    for (size_t at = trace.find(" rename"); at != std::string::npos;
         at = trace.find(" rename", at + 1)) {
      ++n;
    }
    return n;
  }

  std::string corpus_;
};

TEST_F(PositionedWriteCliTest, FilesGetTheBytesOfTheOrderedWrite) {
  const CommandResult piped = Neardup("dedup -q --method simhash --threads 1 " + corpus_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_GT(piped.out.size(), size_t{3} << 19);
  ASSERT_LT(piped.out.size(), Read(corpus_).size());  // some records dropped
  const std::string out = (dir_ / "out.jsonl").string();
  const std::string redirected = (dir_ / "redirected.jsonl").string();
  const std::string framed = (dir_ / "framed.jsonl").string();
  const std::string appended = (dir_ / "appended.jsonl").string();
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    ASSERT_EQ(RunShell(Dedup(threads) + " -o " + out), 0);
    EXPECT_TRUE(Read(out) == piped.out);
    ASSERT_EQ(RunShell(Dedup(threads) + " > " + redirected), 0);
    EXPECT_TRUE(Read(redirected) == piped.out);
    // Written in place after what the descriptor holds; the shell's next
    // write lands after the records.
    ASSERT_EQ(RunShell("{ printf before; " + Dedup(threads) + "; printf after; } > " + framed), 0);
    EXPECT_TRUE(Read(framed) == "before" + piped.out + "after");
    // O_APPEND: pwrite would append whatever the offset, so in order.
    Write("appended.jsonl", "kept: ");
    ASSERT_EQ(RunShell(Dedup(threads) + " >> " + appended), 0);
    EXPECT_TRUE(Read(appended) == "kept: " + piped.out);
  }
  // Only the records: no temporary left beside the output.
  ExpectNoTemporaryLeft();
}

TEST_F(PositionedWriteCliTest, AWriteFailingMidwayLeavesNoCompleteLookingFile) {
  const CommandResult piped = Neardup("dedup -q --method simhash " + corpus_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  const std::string out = (dir_ / "out.jsonl").string();
  const std::string redirected = (dir_ / "redirected.jsonl").string();
  const std::string err = (dir_ / "err.txt").string();
  // A file size limit of 1024 blocks (0.5 or 1 MB, as the shell counts
  // blocks), with SIGXFSZ ignored: writes past it fail with EFBIG.
  const std::string limit = "trap \"\" XFSZ; ulimit -f 1024; ";
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    Write("out.jsonl", "the previous output\n");
    EXPECT_NE(RunShell(limit + Dedup(threads) + " -o " + out + " 2> " + err), 0);
    EXPECT_NE(Read(err).find("File too large"), std::string::npos) << Read(err);
    EXPECT_EQ(Read(out), "the previous output\n");
    ExpectNoTemporaryLeft();
    // In place: cut back to a prefix, never the full size with a gap.
    EXPECT_NE(RunShell(limit + Dedup(threads) + " > " + redirected + " 2> " + err), 0);
    EXPECT_NE(Read(err).find("File too large"), std::string::npos) << Read(err);
    const std::string left = Read(redirected);
    EXPECT_LT(left.size(), piped.out.size());
    EXPECT_TRUE(piped.out.starts_with(left)) << left.size() << " bytes left";
  }
}

TEST_F(PositionedWriteCliTest, NoFsyncIsAcceptedByEveryCommandWithAnOutput) {
  for (const char* command :
       {"fingerprint", "pairs", "clusters", "dedup", "similar", "query", "report", "index list"}) {
    SCOPED_TRACE(command);
    const CommandResult help = Neardup(std::string(command) + " --help");
    ASSERT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("--output"), std::string::npos);
    EXPECT_NE(help.out.find("--no-fsync"), std::string::npos);
  }
  // Run: the same bytes with and without it.
  const std::string out = (dir_ / "out.txt").string();
  const std::string fast = (dir_ / "fast.txt").string();
  for (const char* command : {"fingerprint --simhash", "pairs --method simhash",
                              "clusters --method simhash", "dedup --method simhash"}) {
    SCOPED_TRACE(command);
    const std::string args = std::string(command) + " -q --threads 3 " + corpus_;
    const CommandResult durable = Neardup(args + " -o " + out);
    ASSERT_EQ(durable.exit_code, 0) << durable.err;
    const CommandResult quick = Neardup(args + " --no-fsync -o " + fast);
    ASSERT_EQ(quick.exit_code, 0) << quick.err;
    EXPECT_FALSE(Read(out).empty());
    EXPECT_TRUE(Read(fast) == Read(out));
  }
  ExpectNoTemporaryLeft();
}

// strace's options that keep a sanitizer build's neardup runnable under it:
// LeakSanitizer cannot run under ptrace and aborts the traced process at its
// exit, so the traced run leaves leak checking to the untraced tests.
constexpr const char* kStraceWithoutLeakCheck =
    "strace -E ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 ";

TEST_F(PositionedWriteCliTest, NoFsyncSkipsTheSyncsButNotTheRename) {
  // The syscalls as strace sees them; skipped where strace cannot trace
  // (not installed, or ptrace refused in a container).
  const std::string trace = (dir_ / "trace.txt").string();
  if (RunShell("strace -f -o /dev/null true 2>/dev/null") != 0) {
    GTEST_SKIP() << "strace cannot trace here";
  }
  const std::string out = (dir_ / "out.jsonl").string();
  const std::string fast = (dir_ / "fast.jsonl").string();
  // `/^rename`: rename, renameat or renameat2, whichever the C library calls.
  const std::string strace = std::string(kStraceWithoutLeakCheck) +
                             "-f -qq -e trace=fsync,fdatasync,sync_file_range,/^rename -o " + trace;
  auto count = [&](const std::string& call) {
    const std::string text = Read(trace);
    size_t n = 0;
    for (size_t at = text.find(call + "("); at != std::string::npos;
         at = text.find(call + "(", at + 1)) {
      ++n;
    }
    return n;
  };
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    // The durable default: the temporary and the directory are fsynced,
    // the ranges handed to writeback (the trace does see them).
    ASSERT_EQ(RunShell(strace + " " + Dedup(threads) + " -o " + out), 0);
    EXPECT_GE(count("fsync"), size_t{2});
    EXPECT_GE(count("sync_file_range"), size_t{1});
    EXPECT_EQ(Renames(Read(trace)), size_t{1}) << Read(trace);
    ASSERT_FALSE(Read(out).empty());
    ASSERT_EQ(RunShell(strace + " " + Dedup(threads) + " --no-fsync -o " + fast), 0);
    EXPECT_EQ(count("fsync"), size_t{0}) << Read(trace);
    EXPECT_EQ(count("fdatasync"), size_t{0}) << Read(trace);
    EXPECT_EQ(count("sync_file_range"), size_t{0}) << Read(trace);
    // Still the temporary renamed over the output.
    EXPECT_EQ(Renames(Read(trace)), size_t{1}) << Read(trace);
    EXPECT_TRUE(Read(fast) == Read(out));
  }
  ExpectNoTemporaryLeft();
}

// A run that fails after its -o temporary was sized and written to: the
// input changed while dedup copied its kept records (the preloaded hook's
// NEARDUP_TEST_REWRITE_MAPPED_INPUT=3: the third mapping of the input is the
// output stage's; DataLoss, exit 4). With --no-fsync (whose failure path is
// the durable one's) the previous output is left untouched, a new name is
// not created, and no temporary is left.
TEST_F(PositionedWriteCliTest, NoFsyncLeavesNoFileWhenTheRunFailsAfterSizing) {
#ifndef NEARDUP_TEST_MAPPED_INPUT_HOOKS
  GTEST_SKIP() << "built without NEARDUP_TEST_HOOKS: the preloaded rewrite hook "
                  "(tests/hooks/mapped_input_hooks.cc) that this test needs is not built";
#else
  const std::string big = ExampleRepeatedTo(300000);
  const std::string out = (dir_ / "out.jsonl").string();
  const std::string fresh = (dir_ / "fresh.jsonl").string();
  const std::string trace = (dir_ / "trace.txt").string();
  const bool traced = RunShell("strace -f -o /dev/null true 2>/dev/null") == 0;
  const std::string hook =
      "LD_PRELOAD='" NEARDUP_TEST_MAPPED_INPUT_HOOKS "' NEARDUP_TEST_REWRITE_MAPPED_INPUT=3";
  // Where strace can trace, the hook goes to neardup through strace (-E,
  // not preloaded into strace itself).
  const std::string traced_hook =
      std::string(kStraceWithoutLeakCheck) + "-f -qq -e trace=fallocate,ftruncate -o " + trace +
      " -E 'LD_PRELOAD=" NEARDUP_TEST_MAPPED_INPUT_HOOKS "' -E NEARDUP_TEST_REWRITE_MAPPED_INPUT=3";
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const std::string input = Write("big.jsonl", big);
    Write("out.jsonl", "the previous output\n");
    const std::string args =
        "dedup -q --no-fsync --threads " + std::to_string(threads) + " " + input + " -o ";
    CommandResult run = NeardupWithEnv(traced ? traced_hook : hook, args + out, 60);
    EXPECT_EQ(run.exit_code, 4) << run.err;
    EXPECT_NE(run.err.find("changed while it was read"), std::string::npos) << run.err;
    EXPECT_EQ(Read(out), "the previous output\n");
    // Where the preallocation ran (ext4), the temporary was given its full
    // size first and cut back after the failure: ftruncate to a size, then
    // to 0.
    const std::string calls = traced ? Read(trace) : "";
    const size_t preallocation = calls.find("fallocate(");
    if (preallocation != std::string::npos &&
        calls.substr(preallocation, calls.find('\n', preallocation) - preallocation)
            .ends_with(" = 0")) {
      std::vector<std::string> sizes;
      for (size_t at = calls.find("ftruncate("); at != std::string::npos;
           at = calls.find("ftruncate(", at + 1)) {
        const size_t comma = calls.find(", ", at);
        sizes.push_back(calls.substr(comma + 2, calls.find(')', comma) - comma - 2));
      }
      ASSERT_EQ(sizes.size(), size_t{2}) << calls;
      EXPECT_NE(sizes[0], "0") << calls;
      EXPECT_EQ(sizes[1], "0") << calls;
    }
    Write("big.jsonl", big);
    run = NeardupWithEnv(hook, args + fresh, 60);
    EXPECT_EQ(run.exit_code, 4) << run.err;
    EXPECT_FALSE(std::filesystem::exists(fresh));
    ExpectNoTemporaryLeft();
  }
#endif
}

}  // namespace
}  // namespace neardup::testing
