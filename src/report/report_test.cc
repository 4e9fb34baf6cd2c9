#include "neardup/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "neardup/containment_engine.h"
#include "neardup/format/wire_format.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The JSON between <script type="application/json" id="neardup-data"> and
// its </script>.
std::string EmbeddedJson(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"neardup-data\">";
  const size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t end = html.find("</script>", begin);
  return html.substr(begin + open.size(), end - begin - open.size());
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t count = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::vector<uint64_t> Units(simdjson::dom::element pair) {
  std::vector<uint64_t> units;
  for (simdjson::dom::element unit : pair.at(6).get_array()) units.push_back(unit.get_uint64());
  return units;
}

const char kHostileId[] = "</script><script>document.title='PWNED'</script>";
const char kHostileText[] =
    "\"onload=\"document.title='PWNED'\" <img src=x onerror=alert(1)> & <!--";

ReportData HostileData() {
  ReportData data;
  data.summary.command_line = "neardup report <b>bold</b> \"onload=x";
  data.summary.recipe_json = "{\"a\":\"</pre><script>x</script>\"}";
  data.summary.documents = 2;
  data.documents.push_back({kHostileId, sizeof kHostileText - 1, kHostileText, 0.0});
  data.documents.push_back({"plain", 5, "plain", 0.0});
  data.pairs.push_back({0, 1, 0.5, -1, -1, -1, {}});
  data.clusters.push_back({{0, 1}, 1, "longest </td><script>"});
  return data;
}

TEST(RenderReportTest, HostileTextsStayText) {
  Result<std::string> html = RenderReport(HostileData(), {});
  ASSERT_TRUE(html.ok()) << html.status();
  // The template's own two script elements and nothing more.
  EXPECT_EQ(Count(*html, "<script"), 2u);
  EXPECT_EQ(Count(*html, "</script>"), 2u);
  EXPECT_THAT(*html, Not(HasSubstr("<img")));
  EXPECT_THAT(*html, Not(HasSubstr("<b>")));
  EXPECT_THAT(*html, HasSubstr("neardup report &lt;b&gt;bold&lt;/b&gt; &quot;onload=x"));
  EXPECT_THAT(*html, HasSubstr("&lt;/pre&gt;&lt;script&gt;"));
  const std::string json = EmbeddedJson(*html);
  EXPECT_EQ(json.find('<'), std::string::npos);
  // Parsed back, the JSON holds the texts exactly.
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(json);
  EXPECT_EQ(std::string_view(root["docs"].at(0).at(0).get_string()), kHostileId);
  EXPECT_EQ(std::string_view(root["docs"].at(0).at(2).get_string()), kHostileText);
  EXPECT_EQ(std::string_view(root["clusters"].at(0).at(1).get_string()), "longest </td><script>");
  EXPECT_EQ(root["kind"].get_string().value(), "near-duplicates");
}

TEST(RenderReportTest, SummaryCountsAndBytesRemoved) {
  ReportData data = HostileData();
  data.summary.bytes_total = 1000;
  Result<std::string> html = RenderReport(data, {});
  ASSERT_TRUE(html.ok());
  EXPECT_THAT(*html, HasSubstr("data-key=\"pairs\">1</dd>"));
  EXPECT_THAT(*html, HasSubstr("data-key=\"clusters\">1</dd>"));
  // Document 0 is not kept: its length is removed.
  EXPECT_THAT(*html, HasSubstr("data-key=\"bytes_removed\">" +
                               std::to_string(sizeof kHostileText - 1) + "</dd>"));
  // The plots: one pair in the 0.50-0.55 bin, one cluster of size 2.
  EXPECT_THAT(*html, HasSubstr("<title>0.50-0.55: 1</title>"));
  EXPECT_THAT(*html, HasSubstr("<title>2: 1</title>"));
}

TEST(RenderReportTest, PassageOffsetsAreUtf16UnitsOfMultiByteTexts) {
  // "é" is 2 bytes and 1 unit; "😀" 4 bytes and 2 units.
  const std::string a = "\xC3\xA9\xC3\xA9 shared words \xF0\x9F\x98\x80 end";
  const std::string b = "\xF0\x9F\x98\x80 x shared words";
  ReportData data;
  data.documents.push_back({"a", a.size(), a, 0.0});
  data.documents.push_back({"b", b.size(), b, 0.0});
  // "shared words": bytes [5, 17) of a, [7, 19) of b; "end" of a after the emoji.
  data.pairs.push_back({0, 1, 0.9, -1, -1, -1, {{5, 17, 7, 19, 2}, {23, 26, 7, 8, 1}}});
  Result<std::string> html = RenderReport(data, {});
  ASSERT_TRUE(html.ok()) << html.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(EmbeddedJson(*html));
  // a: "éé " is 3 units; the emoji counts 2: "end" starts at unit 3+12+1+2+1 = 19.
  // b: "😀 x " is 5 units.
  EXPECT_THAT(Units(root["pairs"].at(0)), ElementsAre(3, 15, 5, 17, 19, 22, 5, 6));
}

TEST(RenderReportTest, LongTextsAreCutAndPassagesClipped) {
  const std::string a = std::string(10, 'x') + "\xC3\xA9" + std::string(10, 'y');  // 22 bytes
  ReportData data;
  data.documents.push_back({"a", a.size(), a, 0.0});
  data.documents.push_back({"b", 3, "abc", 0.0});
  // Passage 1 inside the cut, passage 2 across it, passage 3 past it on a
  // (b's side stays, so the link does not vanish), passage 4 past it on both.
  data.pairs.push_back({0,
                        1,
                        0.5,
                        -1,
                        -1,
                        -1,
                        {{0, 5, 0, 1, 1}, {8, 20, 1, 2, 1}, {15, 20, 2, 3, 1}, {15, 20, 3, 3, 1}}});
  ReportOptions options;
  options.max_text_bytes = 11;  // inside "é" (bytes 10-11): cut to 10 bytes
  Result<std::string> html = RenderReport(data, options);
  ASSERT_TRUE(html.ok()) << html.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(EmbeddedJson(*html));
  EXPECT_EQ(std::string_view(root["docs"].at(0).at(2).get_string()), std::string(10, 'x'));
  EXPECT_EQ(uint64_t(root["docs"].at(0).at(1).get_uint64()), 22u);  // the full length
  EXPECT_EQ(uint64_t(root["docs"].at(0).at(3).get_uint64()), 1u);   // cut
  EXPECT_EQ(uint64_t(root["docs"].at(1).at(3).get_uint64()), 0u);
  EXPECT_THAT(Units(root["pairs"].at(0)), ElementsAre(0, 5, 0, 1, 8, 10, 1, 2, 10, 10, 2, 3));
}

TEST(RenderReportTest, RefusesIndexesOutOfRange) {
  ReportData data = HostileData();
  data.pairs.push_back({0, 7, 0.5, -1, -1, -1, {}});
  EXPECT_EQ(RenderReport(data, {}).status().code(), StatusCode::kInvalidArgument);
  data = HostileData();
  data.clusters[0].kept = 5;
  EXPECT_EQ(RenderReport(data, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(RenderReportIndexTest, NamesAndFactsStayTextAndLinksStayOnTheServer) {
  std::vector<ReportIndexEntry> entries = {
      {"<script>alert(1)</script>", "/ui/collections/a", {{"documents", "\"onload=alert(2) x"}}},
      {"offsite", "//evil.example/x", {}},
      {"scheme", "javascript:alert(3)", {}},
      {"backslash", "/\\evil.example", {}},
  };
  const std::string html = RenderReportIndex("neardup <serve>", "live & well", entries);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("<dd>&quot;onload=alert(2) x</dd>"));
  EXPECT_THAT(html, HasSubstr("<title>neardup &lt;serve&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("live &amp; well"));
  // Only the local path is a link.
  EXPECT_EQ(Count(html, "<a href="), 1u);
  EXPECT_THAT(html, HasSubstr("<a href=\"/ui/collections/a\">"));
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
  EXPECT_THAT(RenderReportIndex("t", "n", {}), HasSubstr("Nothing here."));
}

TEST(ReportJsonlTest, ReadsBackWhatTheWireFormatWrites) {
  std::string lines;
  format::AppendPairLine(&lines, "a\"1", "b</script>", {0, 1, 0.820896, -1});
  format::AppendPairLine(&lines, "c", "d", {2, 3, 0.953125, 3});
  lines += "\n";
  Result<std::vector<PairLine>> pairs = ParsePairLines(lines);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].a, "a\"1");
  EXPECT_EQ((*pairs)[0].b, "b</script>");
  EXPECT_DOUBLE_EQ((*pairs)[0].similarity, 0.820896);
  EXPECT_EQ((*pairs)[0].distance, -1);
  EXPECT_EQ((*pairs)[1].distance, 3);

  std::string clusters;
  format::AppendClusterLine(&clusters, 0, {"x", "y", "z"});
  Result<std::vector<std::vector<std::string>>> parsed = ParseClusterLines(clusters);
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(*parsed, ElementsAre(ElementsAre("x", "y", "z")));

  Result<std::vector<PairLine>> bad = ParsePairLines(lines + "{\"a\":\"x\"}\n");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("line 4"));
  EXPECT_FALSE(ParsePairLines("not json\n").ok());
  EXPECT_FALSE(ParseClusterLines("{\"cluster\":0,\"ids\":[\"only\"]}\n").ok());
}

class ReportBuilderTest : public ::testing::Test {
 protected:
  std::unique_ptr<DocumentReader> Reader(const std::string& jsonl) {
    const std::string path = temp_.Write("in" + std::to_string(files_++) + ".jsonl", jsonl);
    Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, {});
    EXPECT_TRUE(reader.ok());
    return std::move(reader).value();
  }
  test_support::TempDir temp_;
  int files_ = 0;
};

const char kShared[] =
    "the quick brown fox jumps over the lazy dog while seven wise owls watch in silence";

TEST_F(ReportBuilderTest, NearDuplicatePassagesClustersAndKeptMember) {
  const std::string a = std::string("Alpha begins here. ") + kShared + " Alpha ends.";
  const std::string b = std::string("Beta opens differently, and at length. ") + kShared;
  const std::string jsonl = "{\"id\":\"a\",\"text\":\"" + a + "\"}\n" +
                            "{\"id\":\"lonely\",\"text\":\"nothing in common\"}\n" +
                            "{\"id\":\"b\",\"text\":\"" + b + "\"}\n";
  NearDuplicateReportOptions options;
  options.recipe = *PresetRecipe("default");
  options.keep_rule = KeepRule::kLongest;
  auto reader = Reader(jsonl);
  Result<ReportData> data = BuildNearDuplicateReport(*reader, {{"a", "b", 0.7, -1}}, {}, options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->summary.documents, 3u);
  EXPECT_EQ(data->summary.bytes_total, a.size() + b.size() + 17);
  ASSERT_EQ(data->documents.size(), 2u);  // only the documents of a result
  ASSERT_EQ(data->pairs.size(), 1u);
  const ReportPair& pair = data->pairs[0];
  EXPECT_EQ(data->documents[pair.a].id, "a");
  ASSERT_EQ(pair.passages.size(), 1u);
  const Passage& passage = pair.passages[0];
  EXPECT_EQ(a.substr(passage.query_begin, passage.query_end - passage.query_begin), kShared);
  EXPECT_EQ(b.substr(passage.match_begin, passage.match_end - passage.match_begin), kShared);
  // Formed with the leader rule; --keep longest keeps b.
  ASSERT_EQ(data->clusters.size(), 1u);
  EXPECT_EQ(data->documents[data->clusters[0].kept].id, "b");
  EXPECT_THAT(data->clusters[0].why, HasSubstr("longest, " + std::to_string(b.size())));

  auto unknown = Reader(jsonl);
  EXPECT_EQ(
      BuildNearDuplicateReport(*unknown, {{"a", "nope", 0.7, -1}}, {}, options).status().code(),
      StatusCode::kInvalidArgument);
}

TEST_F(ReportBuilderTest, CollectionPairsAndPassagesAreTheEngines) {
  const std::string dir = temp_.Path("collection");
  ASSERT_TRUE(Collection::Create(dir, *PresetRecipe("default"), {}).ok());
  std::string jsonl;
  for (int i = 0; i < 6; ++i) {
    // Words of its own, then for even documents the shared sentence.
    std::string text;
    for (int k = 0; k < 12; ++k) text += "own" + std::to_string(i) + "w" + std::to_string(k) + " ";
    if (i % 2 == 0) text += kShared;
    jsonl += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"" + text + "\"}\n";
  }
  {
    Collection::OpenOptions open;
    open.mode = Collection::Mode::kReadWrite;
    Result<std::unique_ptr<Collection>> writer = Collection::Open(dir, open);
    ASSERT_TRUE(writer.ok());
    auto reader = Reader(jsonl);
    ASSERT_TRUE(AddDocuments(*reader, **writer, {}).ok());
  }
  Result<std::unique_ptr<Collection>> collection = Collection::Open(dir, {});
  ASSERT_TRUE(collection.ok());
  Result<ReportData> data = BuildCollectionReport(**collection, CollectionReportOptions{5, 0.1});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->kind, ReportKind::kContainment);
  EXPECT_EQ(data->summary.documents, 6u);
  // The three documents with the shared sentence pair up: 3 pairs.
  ASSERT_EQ(data->pairs.size(), 3u);
  Result<std::vector<SimilarityRow>> rows =
      ComputeAllSimilarities(**collection, SimilarOptions{5, 0.1, false});
  ASSERT_TRUE(rows.ok());
  for (const ReportPair& pair : data->pairs) {
    const ReportDocument& a = data->documents[pair.a];
    const ReportDocument& b = data->documents[pair.b];
    ASSERT_TRUE(a.text && b.text);
    Result<std::optional<DocumentInfo>> info = (*collection)->FindDocument(b.id);
    ASSERT_TRUE(info.ok() && info->has_value());
    Result<std::vector<Passage>> passages = MatchingPassages(**collection, *a.text, (*info)->doc);
    ASSERT_TRUE(passages.ok());
    EXPECT_EQ(pair.passages, *passages);
    ASSERT_FALSE(pair.passages.empty());
    const Passage& p = pair.passages[0];
    EXPECT_THAT(a.text->substr(p.query_begin, p.query_end - p.query_begin), HasSubstr(kShared));
    EXPECT_GT(a.best_score, 0.0);
    bool found = false;
    for (const SimilarityRow& row : *rows) {
      Result<std::optional<DocumentInfo>> row_a = (*collection)->FindDocument(a.id);
      if (row.a == (*row_a)->doc && row.b == (*info)->doc) {
        found = true;
        EXPECT_DOUBLE_EQ(pair.a_in_b, row.a_in_b);
        EXPECT_DOUBLE_EQ(pair.b_in_a, row.b_in_a);
      }
    }
    EXPECT_TRUE(found) << a.id << " " << b.id;
  }
}

}  // namespace
}  // namespace neardup
