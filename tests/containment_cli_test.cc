// End-to-end tests of `neardup index`, `neardup similar` and `neardup query`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli_test_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

using neardup::testing::CommandResult;

class ContainmentCliTest : public neardup::testing::CliTestBase {
 protected:
  std::string Collection() const { return (dir_ / "archive").string(); }
};

TEST_F(ContainmentCliTest, HelpOnEveryCommand) {
  for (const char* args :
       {"index --help", "index create --help", "index add --help", "index remove --help",
        "index compact --help", "index stats --help", "index maintain --help",
        "index verify --help", "similar --help", "query --help"}) {
    CommandResult run = Neardup(args);
    EXPECT_EQ(run.exit_code, 0) << args;
    EXPECT_THAT(run.out, HasSubstr("Usage")) << args;
  }
}

TEST_F(ContainmentCliTest, CreateAddSimilarQueryStats) {
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  CommandResult add = Neardup("index add " + Collection() + " " + Example());
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.err, HasSubstr("12 added"));

  CommandResult similar = Neardup("similar -q " + Collection() + " --top 2 --min 0.5");
  ASSERT_EQ(similar.exit_code, 0) << similar.err;
  std::vector<std::string> lines = Lines(similar.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], MatchesRegex("\\{\"a\":\"harbor-wall-1\",\"b\":\"harbor-wall-[23]\","
                                     "\"a_in_b\":[0-9.]+,\"b_in_a\":[0-9.]+\\}"));
  EXPECT_THAT(similar.out, HasSubstr("{\"a\":\"bread-recipe\",\"b\":\"bread-recipe-copy\""));

  CommandResult csv = Neardup("similar -q " + Collection() + " --top 2 --min 0.5 --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> csv_lines = Lines(csv.out);
  ASSERT_EQ(csv_lines.size(), lines.size() + 1);
  EXPECT_EQ(csv_lines[0], "a,b,a_in_b,b_in_a");

  std::string query_file =
      Write("q.jsonl", "{\"id\":\"q1\",\"text\":\"nothing at all in common zebra quantum\"}\n");
  CommandResult query =
      Neardup("query " + Collection() + " --top 1 " + Example() + " " + query_file);
  ASSERT_EQ(query.exit_code, 0) << query.err;
  std::vector<std::string> q = Lines(query.out);
  ASSERT_EQ(q.size(), 13u);
  EXPECT_THAT(q[0], MatchesRegex("\\{\"query\":\"harbor-wall-1\",\"chunks\":[0-9]+,\"matches\":"
                                 "\\[\\{\"b\":\"harbor-wall-1\",\"a_in_b\":1,\"b_in_a\":1,"
                                 "\"passages\":\\[\\{\"query\":\\[[0-9]+,[0-9]+\\],\"match\":\\["
                                 "[0-9]+,[0-9]+\\]\\}\\]\\}\\]\\}"));
  EXPECT_THAT(q[12], MatchesRegex("\\{\"query\":\"q1\",\"chunks\":[0-9]+,\"matches\":\\[\\]\\}"));

  CommandResult stats = Neardup("index stats " + Collection());
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("\"documents\":12,"));
  EXPECT_THAT(stats.out, HasSubstr("\"similarity_rows\":"));
}

// `index verify` passes a sound collection and, after one flipped byte of a
// segment, exits 4 naming the file; a query touching the damage fails too
// (issue 12, item 3).
TEST_F(ContainmentCliTest, IndexVerifyNamesTheDamagedFile) {
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  ASSERT_EQ(Neardup("index add -q " + Collection() + " " + Example()).exit_code, 0);
  CommandResult sound = Neardup("index verify " + Collection());
  EXPECT_EQ(sound.exit_code, 0) << sound.err;
  EXPECT_THAT(sound.err, HasSubstr("is sound: 12 documents"));
  ASSERT_EQ(Neardup("index remove -q " + Collection() + " bread-recipe").exit_code, 0);

  const std::string segment = Collection() + "/data/seg-1.nds";
  std::fstream file(segment, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(200);
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x10);
  file.seekp(200);
  file.write(&byte, 1);
  file.close();

  CommandResult damaged = Neardup("index verify " + Collection());
  EXPECT_EQ(damaged.exit_code, 4) << damaged.err;
  EXPECT_THAT(damaged.err, HasSubstr("seg-1.nds"));
  EXPECT_THAT(damaged.err, HasSubstr("checksum"));
  CommandResult query = Neardup("query " + Collection() + " " + Example());
  EXPECT_EQ(query.exit_code, 4) << query.err;
  CommandResult compact = Neardup("index compact " + Collection());
  EXPECT_EQ(compact.exit_code, 4) << compact.err;
  EXPECT_EQ(Neardup("index verify " + Collection()).exit_code, 4);  // still reported
}

// Readers need no writer lock (issue 12, item 5): while another process
// holds it, `similar` prints an up-to-date stored table, and `query` and
// `index stats` work; a writer is refused.
TEST_F(ContainmentCliTest, ReadersWorkWhileTheWriterLockIsHeld) {
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  ASSERT_EQ(Neardup("index add -q " + Collection() + " " + Example()).exit_code, 0);
  CommandResult computed = Neardup("similar -q " + Collection() + " --top 2 --min 0.5");
  ASSERT_EQ(computed.exit_code, 0) << computed.err;

  const std::string lock = Collection() + "/LOCK";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  CommandResult stored = Neardup("similar " + Collection() + " --top 2 --min 0.5");
  EXPECT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_EQ(stored.out, computed.out);
  EXPECT_THAT(stored.err, HasSubstr("up to date"));
  EXPECT_EQ(Neardup("index stats " + Collection()).exit_code, 0);
  EXPECT_EQ(Neardup("query " + Collection() + " " + Example()).exit_code, 0);
  EXPECT_NE(Neardup("index add -q " + Collection() + " " + Example()).exit_code, 0);
  // Other parameters need a recomputation, hence the lock.
  EXPECT_NE(Neardup("similar -q " + Collection() + " --top 3 --min 0.5").exit_code, 0);
  ::close(fd);
}

// A new document pastes two paragraphs of an archived one: `query` reports
// them as passages, byte offsets into both original texts.
TEST_F(ContainmentCliTest, QueryReportsPastedParagraphsAsPassages) {
  const std::string p1 =
      "The r\u00e9sum\u00e9 of the expedition lists seven glaciers measured every spring";
  const std::string p2 = "Harbour cranes were replaced in the winter of the flood year";
  const std::string p3 = "Ice cores from the northern ridge were stored at minus thirty degrees";
  const std::string archived = "Opening words of the thesis. " + p1 + ". " + p2 + ". " + p3 + ".";
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  std::string input = Write("archive.jsonl", "{\"id\":\"thesis\",\"text\":\"" + archived +
                                                 "\"}\n{\"id\":\"other\",\"text\":\"bread "
                                                 "with rye flour and salt and water\"}\n");
  ASSERT_EQ(Neardup("index add -q " + Collection() + " " + input).exit_code, 0);
  const std::string query = "A new essay begins here! " + p1 + " and in between, " + p3 + " END";
  std::string query_file = Write("query.jsonl", "{\"id\":\"essay\",\"text\":\"" + query + "\"}\n");
  CommandResult run = Neardup("query " + Collection() + " " + query_file);
  ASSERT_EQ(run.exit_code, 0) << run.err;

  // Offsets are bytes of the decoded UTF-8 (each \u00e9 is 2 bytes).
  auto decode = [](std::string s) {
    for (size_t at; (at = s.find("\\u00e9")) != std::string::npos;) s.replace(at, 6, "\xC3\xA9");
    return s;
  };
  const std::string q = decode(query), a = decode(archived), d1 = decode(p1), d3 = decode(p3);
  auto range = [](const std::string& text, const std::string& part) {
    const size_t begin = text.find(part);
    return "[" + std::to_string(begin) + "," + std::to_string(begin + part.size()) + "]";
  };
  EXPECT_THAT(run.out,
              HasSubstr("\"passages\":[{\"query\":" + range(q, d1) + ",\"match\":" + range(a, d1) +
                        "},{\"query\":" + range(q, d3) + ",\"match\":" + range(a, d3) + "}]"))
      << run.out;
  CommandResult none = Neardup("query " + Collection() + " --passages 0 " + query_file);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, ::testing::Not(HasSubstr("passages")));
}

TEST_F(ContainmentCliTest, IncrementalSimilarEqualsFull) {
  ASSERT_EQ(Neardup("index create --max-df 3 " + Collection()).exit_code, 0);
  ASSERT_EQ(Neardup("index add -q " + Collection() + " " + Example()).exit_code, 0);
  ASSERT_EQ(Neardup("similar -q " + Collection() + " --min 0.01").exit_code, 0);

  std::string changes = Write(
      "changes.jsonl",
      "{\"id\":\"harbor-wall-2\",\"text\":\"a completely rewritten story about the harbor\"}\n"
      "{\"id\":\"new-doc\",\"text\":\"the harbor wall collapsed after the storm surge\"}\n"
      // Quotes the weather report (no other document shares it): its score
      // is merged into weather-report's stored list, not recomputed.
      "{\"id\":\"weather-quote\",\"text\":\"Our readers asked about the forecast. Heavy rain "
      "is expected across the northern valleys tonight, with up to sixty millimetres in the "
      "hills by Thursday morning, says the weather service.\"}\n");
  CommandResult add = Neardup("index add " + Collection() + " " + changes);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.err, HasSubstr("2 added, 1 modified"));
  ASSERT_EQ(Neardup("index remove -q " + Collection() + " bread-recipe").exit_code, 0);
  ASSERT_EQ(Neardup("index compact -q " + Collection()).exit_code, 0);

  CommandResult incremental = Neardup("similar " + Collection() + " --min 0.01");
  ASSERT_EQ(incremental.exit_code, 0) << incremental.err;
  EXPECT_THAT(incremental.err, HasSubstr("incremental update"));
  EXPECT_THAT(incremental.err, ::testing::Not(HasSubstr("merged new scores into 0 ")));
  CommandResult full = Neardup("similar " + Collection() + " --min 0.01 --full");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_THAT(full.err, HasSubstr("full recomputation"));
  EXPECT_EQ(incremental.out, full.out);
  EXPECT_THAT(full.out, ::testing::Not(HasSubstr("\"bread-recipe\"")));
  EXPECT_THAT(full.out, HasSubstr("{\"a\":\"weather-report\",\"b\":\"weather-quote\""));
}

// `index maintain --full` merges the index tiers of many small commits into
// one (dropping a removed document's postings); queries answer the same.
TEST_F(ContainmentCliTest, MaintainFullLeavesOneTierAndTheSameAnswers) {
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  ASSERT_EQ(
      Neardup("index add -q --commit-every 1 --commit-growth 0 " + Collection() + " " + Example())
          .exit_code,
      0);
  ASSERT_EQ(Neardup("index remove -q " + Collection() + " bread-recipe").exit_code, 0);
  CommandResult before = Neardup("query " + Collection() + " --top 3 " + Example());
  ASSERT_EQ(before.exit_code, 0) << before.err;
  CommandResult policy = Neardup("index maintain " + Collection());
  ASSERT_EQ(policy.exit_code, 0) << policy.err;
  // The policy leaves several tiers (else --full would show nothing).
  const size_t arrow = policy.err.rfind("-> ");
  ASSERT_NE(arrow, std::string::npos) << policy.err;
  const int left = std::stoi(policy.err.substr(arrow + 3));
  ASSERT_GT(left, 1) << policy.err;
  CommandResult full = Neardup("index maintain --full " + Collection());
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_THAT(full.err, HasSubstr("index tiers " + std::to_string(left) + " -> 1\n"));
  CommandResult stats = Neardup("index stats " + Collection());
  EXPECT_THAT(stats.out, HasSubstr("\"index_tiers\":1,"));
  EXPECT_THAT(stats.out, HasSubstr("\"index_dead_postings\":0}"));
  CommandResult after = Neardup("query " + Collection() + " --top 3 " + Example());
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(Neardup("index verify " + Collection()).exit_code, 0);
}

TEST_F(ContainmentCliTest, ErrorsAreClear) {
  CommandResult missing = Neardup("similar " + (dir_ / "nothing").string());
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("not a neardup collection"));

  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  CommandResult again = Neardup("index create " + Collection());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("not empty"));

  CommandResult remove = Neardup("index remove " + Collection() + " no-such-id");
  EXPECT_EQ(remove.exit_code, 3);
  EXPECT_THAT(remove.err, HasSubstr("no-such-id"));

  CommandResult recipe = Neardup("query " + Collection() + " --preset paper " + Example());
  EXPECT_EQ(recipe.exit_code, 2);
  EXPECT_THAT(recipe.err, HasSubstr("is not the recipe of collection"));

  const std::string bare = (dir_ / "bare").string();
  ASSERT_EQ(Neardup("index create --no-texts " + bare).exit_code, 0);
  EXPECT_EQ(Neardup("query " + bare + " " + Example()).exit_code, 0);
  CommandResult passages = Neardup("query " + bare + " --passages 1 " + Example());
  EXPECT_NE(passages.exit_code, 0);
  EXPECT_THAT(passages.err, HasSubstr("does not store texts"));

  EXPECT_EQ(Neardup("similar " + Collection() + " --top 0").exit_code, 2);
  EXPECT_EQ(Neardup("similar " + Collection() + " --min 2").exit_code, 2);
}

}  // namespace
