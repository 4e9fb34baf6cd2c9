// BuildStreamReport and the report's live navigation (neardup/report.h): a
// page of a stream's answers becomes exactly its pairs, clusters, times and
// passages, and navigation values stay text and on the server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <memory>
#include <string>
#include <vector>

#include "neardup/report.h"
#include "neardup/stream.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Words(int first, int count) {
  std::string text;
  for (int i = first; i < first + count; ++i) text += "word" + std::to_string(i) + " ";
  return text;
}

// Two kept documents and three near-duplicates (one with hostile markup).
std::unique_ptr<NearDuplicateStream> PlantedStream(bool keep_texts) {
  StreamConfig config;
  config.threshold = 0.5;
  config.keep_texts = keep_texts;
  auto stream = std::move(NearDuplicateStream::Create(config)).value();
  const std::string one = Words(0, 80), two = Words(1000, 80);
  EXPECT_EQ(stream->Add("kept-1", one, 100)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("kept-2", two, 110)->status, StreamStatus::kNew);
  EXPECT_EQ(stream->Add("copy-1a", one + "tail words", 120)->status, StreamStatus::kNearDuplicate);
  EXPECT_EQ(stream->Add("copy-2", "<script>document.title='PWNED'</script> " + two, 130)->status,
            StreamStatus::kNearDuplicate);
  EXPECT_EQ(stream->Add("copy-1b", "head words " + one, 140)->status, StreamStatus::kNearDuplicate);
  return stream;
}

TEST(StreamReportTest, APageOfAnswersIsItsPairsClustersTimesAndPassages) {
  std::unique_ptr<NearDuplicateStream> stream = PlantedStream(true);
  StreamListOptions list;
  list.detail.passages = true;
  const StreamPage page = *stream->List(list);
  ASSERT_EQ(page.entries.size(), 3u);
  Result<StreamReport> report = BuildStreamReport(*stream, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const ReportData& data = report->data;
  EXPECT_EQ(report->next_cursor, "");
  ASSERT_EQ(data.pairs.size(), 3u);
  for (size_t i = 0; i < page.entries.size(); ++i) {
    const StreamEntry& entry = page.entries[i];
    const ReportPair& pair = data.pairs[i];  // newest first, as listed
    EXPECT_EQ(data.documents[pair.a].id, entry.answer.of);
    EXPECT_EQ(data.documents[pair.b].id, entry.answer.id);
    EXPECT_EQ(data.documents[pair.b].time, entry.answer.time);
    EXPECT_EQ(data.documents[pair.a].time, entry.of_time);
    EXPECT_EQ(data.documents[pair.b].text, entry.text);
    EXPECT_EQ(data.documents[pair.a].text, entry.of_text);
    EXPECT_DOUBLE_EQ(pair.similarity, entry.answer.similarity);
    // The kept document is A: the passages' sides swapped.
    ASSERT_EQ(pair.passages.size(), entry.passages.size());
    ASSERT_FALSE(pair.passages.empty());
    for (size_t k = 0; k < pair.passages.size(); ++k) {
      EXPECT_EQ(pair.passages[k].query_begin, entry.passages[k].match_begin);
      EXPECT_EQ(pair.passages[k].match_end, entry.passages[k].query_end);
    }
  }
  // One cluster per kept document on the page, kept first.
  ASSERT_EQ(data.clusters.size(), 2u);
  EXPECT_EQ(data.documents[data.clusters[0].kept].id, "kept-1");  // copy-1b is the newest
  ASSERT_EQ(data.clusters[0].members.size(), 3u);
  EXPECT_EQ(data.documents[data.clusters[1].kept].id, "kept-2");
  EXPECT_EQ(data.summary.documents, 5u);
  EXPECT_EQ(data.summary.cluster_rule, "leader");

  Result<std::string> html = RenderReport(data, {});
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, Not(HasSubstr("<script>document")));  // the hostile text stays data
  const std::string open = "<script type=\"application/json\" id=\"neardup-data\">";
  const size_t begin = html->find(open) + open.size();
  simdjson::dom::parser parser;
  simdjson::dom::element root =
      parser.parse(html->substr(begin, html->find("</script>", begin) - begin));
  simdjson::dom::array docs = root["docs"];
  for (size_t d = 0; d < data.documents.size(); ++d) {
    EXPECT_EQ(docs.at(d).at(5).get_int64().value(), *data.documents[d].time);
  }
}

TEST(StreamReportTest, PagesFollowTheCursorAndAStreamWithoutTextsShowsIdsTimesScores) {
  std::unique_ptr<NearDuplicateStream> stream = PlantedStream(false);
  StreamListOptions options;
  options.limit = 2;
  Result<StreamReport> first = BuildStreamReport(*stream, options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->data.pairs.size(), 2u);
  ASSERT_FALSE(first->next_cursor.empty());
  options.cursor = first->next_cursor;
  Result<StreamReport> second = BuildStreamReport(*stream, options);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->data.pairs.size(), 1u);
  EXPECT_EQ(second->next_cursor, "");
  const ReportData& data = second->data;
  EXPECT_EQ(data.documents[data.pairs[0].b].id, "copy-1a");
  EXPECT_EQ(data.documents[data.pairs[0].b].time, 120);
  EXPECT_EQ(data.documents[data.pairs[0].a].time, 100);
  EXPECT_GE(data.pairs[0].similarity, 0.5);
  EXPECT_EQ(data.documents[data.pairs[0].b].text, std::nullopt);
  EXPECT_TRUE(data.pairs[0].passages.empty());
  EXPECT_TRUE(RenderReport(data, {}).ok());
  options.limit = 0;
  EXPECT_EQ(BuildStreamReport(*stream, options).status().code(), StatusCode::kInvalidArgument);
}

TEST(StreamReportTest, NavigationStaysTextAndOnTheServer) {
  ReportData data;
  data.navigation.facts = {{"<b>label</b>", "\"onload=x"}};
  data.navigation.links = {{"next <i>page</i>", "/ui/streams/s?cursor=1.2&q=%3Cx%3E"},
                           {"away", "//evil.example/"},
                           {"script", "javascript:alert(1)"},
                           {"backslash", "/\\evil.example"}};
  data.navigation.form_action = "/ui/streams/s";
  data.navigation.form_fields = {{"q", "search", "\"><script>alert(1)</script>"}};
  Result<std::string> html = RenderReport(data, {});
  ASSERT_TRUE(html.ok());
  EXPECT_THAT(*html, HasSubstr("&lt;b&gt;label&lt;/b&gt;"));
  EXPECT_THAT(*html, HasSubstr("&quot;onload=x"));
  EXPECT_THAT(*html, HasSubstr("href=\"/ui/streams/s?cursor=1.2&amp;q=%3Cx%3E\">next "
                               "&lt;i&gt;page&lt;/i&gt;</a>"));
  EXPECT_THAT(*html, Not(HasSubstr("evil")));
  EXPECT_THAT(*html, Not(HasSubstr("javascript:")));
  EXPECT_THAT(*html, HasSubstr("action=\"/ui/streams/s\""));
  EXPECT_THAT(*html, HasSubstr("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""));
  size_t scripts = 0;
  for (size_t at = html->find("<script"); at != std::string::npos;
       at = html->find("<script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);
  // A form that would leave the server is left out.
  data.navigation.form_action = "https://evil.example/";
  EXPECT_THAT(*RenderReport(data, {}), Not(HasSubstr("<form")));
  // A report file has no live section at all.
  EXPECT_THAT(*RenderReport(ReportData{}, {}), Not(HasSubstr("id=\"live\"")));
}

}  // namespace
}  // namespace neardup
