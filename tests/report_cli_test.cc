// `neardup report` end to end (issue 17): the page from `pairs`/`clusters`
// output and from a collection, and the usage errors. The page in a real
// browser: report_browser_test.js.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"

namespace {

using neardup::testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;

class ReportCliTest : public neardup::testing::CliTestBase {};

TEST_F(ReportCliTest, FromPairsAndClusters) {
  const std::string pairs = (dir_ / "pairs.jsonl").string();
  const std::string clusters = (dir_ / "clusters.jsonl").string();
  const std::string report = (dir_ / "report.html").string();
  ASSERT_EQ(Neardup("pairs -q --threshold 0.5 " + Example() + " -o " + pairs).exit_code, 0);
  ASSERT_EQ(Neardup("clusters -q --threshold 0.5 " + Example() + " -o " + clusters).exit_code, 0);
  const size_t num_pairs = Lines(Read(pairs)).size();
  const size_t num_clusters = Lines(Read(clusters)).size();
  ASSERT_GT(num_pairs, 0u);

  CommandResult run = Neardup("report --pairs " + pairs + " --clusters " + clusters + " " +
                              Example() + " -o " + report);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("report of " + std::to_string(num_pairs) + " pairs"));
  const std::string html = Read(report);
  EXPECT_THAT(html, HasSubstr("data-key=\"pairs\">" + std::to_string(num_pairs) + "</dd>"));
  EXPECT_THAT(html, HasSubstr("data-key=\"clusters\">" + std::to_string(num_clusters) + "</dd>"));
  EXPECT_THAT(html, HasSubstr("data-key=\"documents\">12</dd>"));
  EXPECT_THAT(html, HasSubstr("harbor-wall-1"));
  // Self-contained: nothing is fetched.
  EXPECT_THAT(html, Not(HasSubstr("src=\"http")));
  EXPECT_THAT(html, Not(HasSubstr("href=\"http")));

  // Without --clusters they are formed from the pairs (leader rule): the same count.
  CommandResult formed = Neardup("report -q --pairs " + pairs + " " + Example());
  ASSERT_EQ(formed.exit_code, 0) << formed.err;
  EXPECT_THAT(formed.out,
              HasSubstr("data-key=\"clusters\">" + std::to_string(num_clusters) + "</dd>"));
}

TEST_F(ReportCliTest, FromACollection) {
  const std::string collection = (dir_ / "archive").string();
  ASSERT_EQ(Neardup("index create " + collection).exit_code, 0);
  ASSERT_EQ(Neardup("index add " + collection + " " + Example()).exit_code, 0);
  CommandResult run = Neardup("report -q --collection " + collection + " --top 3 --min 0.5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"kind\":\"containment\""));
  EXPECT_THAT(run.out, HasSubstr("id=\"plot-best\""));
  EXPECT_THAT(run.out, HasSubstr("bread-recipe-copy"));
}

TEST_F(ReportCliTest, UsageErrors) {
  const std::string pairs =
      Write("pairs.jsonl", "{\"a\":\"harbor-wall-1\",\"b\":\"nope\",\"similarity\":0.9}\n");
  // Exactly one source.
  EXPECT_EQ(Neardup("report -q " + Example()).exit_code, 2);
  EXPECT_EQ(Neardup("report -q --pairs " + pairs + " --collection x " + Example()).exit_code, 2);
  EXPECT_EQ(Neardup("report -q --pairs " + pairs).exit_code, 2);
  EXPECT_EQ(Neardup("report -q --collection x --keep longest").exit_code, 2);
  // An id that is not among the inputs, and a line that is not a pair.
  CommandResult unknown = Neardup("report -q --pairs " + pairs + " " + Example());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("\"nope\""));
  const std::string bad = Write("bad.jsonl", "{\"a\":1}\n");
  CommandResult malformed = Neardup("report -q --pairs " + bad + " " + Example());
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, HasSubstr("line 1"));
  EXPECT_EQ(Neardup("report -q --pairs " + (dir_ / "missing").string() + " " + Example()).exit_code,
            3);
  EXPECT_EQ(Neardup("report -q --collection " + (dir_ / "missing").string()).exit_code, 3);
}

}  // namespace
