// `neardup dedup` writes the kept records into a regular file at their
// offsets from every core (neardup/positioned_output.h): the bytes are those
// of the ordered write into a pipe, whether the file is `-o FILE` (a
// temporary renamed at the end), standard output redirected with `>`
// (written in place, after whatever the shell's descriptor already holds,
// and leaving its offset after the records), or `>>` (O_APPEND: written in
// order). A write that fails midway (a file size limit) leaves `-o FILE`
// untouched and no temporary, and `> FILE` a strict prefix of the output.
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

}  // namespace
}  // namespace neardup::testing
