// /metrics against the Prometheus text exposition format (0.0.4). The
// checks promtool's `check metrics` makes that matter here are written out
// (Debian's promtool comes only in the `prometheus` package: a 19 MB
// download, 96 MB installed, a daemon and web assets -- too much for CI);
// where a promtool is found at configure time (NEARDUP_PROMTOOL) it also
// checks the same output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::TempDir;
using ::testing::IsEmpty;

// The breaches of the text format in `text`, one message each: a sample
// that does not parse; a family without a TYPE before its first sample, or
// with two; a family's lines not contiguous; a series twice; a counter not
// named *_total; histogram buckets not cumulative, or +Inf not equal to
// _count.
std::vector<std::string> FormatProblems(const std::string& text) {
  std::vector<std::string> problems;
  const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? ([-+]?[0-9.e+-]+|\+Inf|NaN)$)");
  const std::regex type_line(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$)");
  std::map<std::string, std::string> types;
  std::set<std::string> finished;  // families whose lines have ended
  std::string current;
  std::set<std::string> series;
  // Histogram state per (family, labels without le).
  std::map<std::string, std::pair<double, double>> last_bucket;  // le, count
  std::map<std::string, double> inf_bucket;
  std::map<std::string, double> counts;
  auto enter = [&](const std::string& family) {
    if (family == current) return;
    if (finished.count(family)) problems.push_back("family " + family + " is not contiguous");
    if (!current.empty()) finished.insert(current);
    current = family;
  };
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (std::regex_match(line, match, type_line)) {
      if (!types.emplace(match[1], match[2]).second) problems.push_back("two TYPEs: " + line);
      enter(match[1]);
      continue;
    }
    if (!std::regex_match(line, match, sample)) {
      problems.push_back("not a sample: " + line);
      continue;
    }
    const std::string name = match[1];
    std::string labels = match[3];
    if (!series.insert(name + "{" + labels + "}").second) problems.push_back("twice: " + line);
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          types.count(name.substr(0, name.size() - s.size())) &&
          types[name.substr(0, name.size() - s.size())] == "histogram") {
        family = name.substr(0, name.size() - s.size());
      }
    }
    if (!types.count(family)) {
      problems.push_back("no TYPE before " + line);
      continue;
    }
    enter(family);
    const double value = std::stod(match[4]);
    if (types[family] == "counter" &&
        (family.size() < 6 || family.compare(family.size() - 6, 6, "_total") != 0)) {
      problems.push_back("counter not named *_total: " + family);
    }
    if (types[family] != "histogram") continue;
    if (name == family + "_count") counts[family + "{" + labels + "}"] = value;
    if (name != family + "_bucket") continue;
    std::smatch le;
    const std::regex le_label(R"re((^|,)le="([^"]*)",?)re");
    if (!std::regex_search(labels, le, le_label)) {
      problems.push_back("bucket without le: " + line);
      continue;
    }
    const std::string bound = le[2];
    const std::string key =
        family + "{" + std::string(le.prefix()) + std::string(le.suffix()) + "}";
    const double upper = bound == "+Inf" ? HUGE_VAL : std::stod(bound);
    auto [it, first] = last_bucket.emplace(key, std::make_pair(upper, value));
    if (!first) {
      if (upper <= it->second.first || value < it->second.second) {
        problems.push_back("buckets not ascending and cumulative: " + line);
      }
      it->second = {upper, value};
    }
    if (bound == "+Inf") inf_bucket[key] = value;
  }
  for (const auto& [key, value] : inf_bucket) {
    auto count = counts.find(key);
    if (count == counts.end()) {
      problems.push_back("no _count for " + key);
    } else if (count->second != value) {
      problems.push_back("+Inf bucket != _count for " + key);
    }
  }
  return problems;
}

TEST(MetricsFormatTest, TheCheckerFindsEachKindOfBreach) {
  const std::string good =
      "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 3\n"
      "# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\n"
      "h_count 2\n";
  EXPECT_THAT(FormatProblems(good), IsEmpty());
  const std::vector<std::string> bad = {
      "a_total 1\n",                                                  // no TYPE
      "# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n",  // two TYPEs
      "# TYPE a counter\na 1\n",                                      // not *_total
      "# TYPE g gauge\ng{x=\"1\"} 1\ng{x=\"1\"} 2\n",                 // twice
      "# TYPE g gauge\n# TYPE f gauge\ng 1\nf 1\ng{y=\"2\"} 1\n",     // not contiguous
      "# TYPE g gauge\ng{x=1} 1\n",                                   // unquoted label
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n",
  };
  for (const std::string& text : bad)
    EXPECT_THAT(FormatProblems(text), ::testing::Not(IsEmpty())) << text;
}

class MetricsOutputTest : public test_util::ServerTest {};

TEST_F(MetricsOutputTest, MetricsOfStreamsCollectionsAndRequestsAreWellFormed) {
  TempDir archive;
  ASSERT_TRUE(Collection::Create(archive.Path("c"), *PresetRecipe("default"), {}).ok());
  ServiceOptions options;
  options.collections = {{"archive", archive.Path("c")}};
  StartServer(options);
  const std::vector<std::string> texts = PlantedTexts(10, 61);
  ASSERT_EQ(Call("PUT", "/v1/streams/a", "{}").first, 201);
  ASSERT_EQ(Call("PUT", "/v1/streams/b", R"({"method": "simhash"})").first, 201);
  for (size_t i = 0; i < texts.size(); ++i) {
    Call("POST", i % 2 ? "/v1/streams/a/documents" : "/v1/streams/b/documents",
         DocumentJson(PlantedId(i), texts[i], 1000 + i));
  }
  Call("GET", "/v1/streams/a/documents/none");
  Call("POST", "/v1/collections/archive/documents", DocumentJson("x", texts[0], 0));
  Call("POST", "/v1/collections/archive/query", DocumentJson("q", texts[0], 0));
  Call("GET", "/nothing");
  const std::string metrics = Call("GET", "/metrics").second;
  EXPECT_THAT(FormatProblems(metrics), IsEmpty()) << metrics;
  EXPECT_THAT(metrics,
              ::testing::HasSubstr("neardup_collection_documents{collection=\"archive\"} 1\n"));
#ifdef NEARDUP_PROMTOOL
  const std::string file = archive.Path("metrics.txt");
  std::ofstream(file) << metrics;
  auto [status, out] =
      test_util::RunCommand(std::string(NEARDUP_PROMTOOL) + " check metrics < " + file + " 2>&1");
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "");
#endif
}

}  // namespace
}  // namespace neardup::server
