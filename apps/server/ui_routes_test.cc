// The report pages at /ui/ through the real server: a collection's page is
// exactly the library's report of the commit it was served from (and
// follows adds), hostile texts stay text, the index and a stream's page show
// the live counts, and bad names and parameters get the service's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <regex>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "neardup/report.h"
#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

class UiRoutesTest : public test_util::ServerTest {
 protected:
  void StartWithCollection() {
    collection_dir_ = archive_.Path("archive");
    ASSERT_TRUE(Collection::Create(collection_dir_, *PresetRecipe("default"), {}).ok());
    ServiceOptions options;
    options.collections = {{"archive", collection_dir_}};
    StartServer(options);
  }

  // The page `neardup report --collection` renders for the collection as it
  // is now, with the command line the server puts in it.
  std::string LibraryReport(const std::string& target, size_t top) const {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(collection_dir_, {});
    EXPECT_TRUE(reader.ok()) << reader.status();
    CollectionReportOptions options;
    options.top_n = top;
    Result<ReportData> data = BuildCollectionReport(**reader, options);
    EXPECT_TRUE(data.ok()) << data.status();
    data->summary.command_line = "neardup serve: GET " + target + " (live)";
    Result<std::string> html = RenderReport(*data, {});
    EXPECT_TRUE(html.ok()) << html.status();
    return *html;
  }

  httplib::Result Get(const std::string& path) { return NewClient()->Get(path); }

  TempDir archive_;
  std::string collection_dir_;
};

TEST_F(UiRoutesTest, CollectionPageIsTheLibraryReportOfTheLiveCollection) {
  StartWithCollection();
  const std::vector<std::string> texts = PlantedTexts(30, 7);
  std::string lines;
  for (size_t i = 0; i < 20; ++i) lines += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
  // A hostile id and text, and a copy of them under a second id, so that
  // the hostile document is in a pair (its text is embedded).
  const std::string hostile = "<script>alert(1)</script> \"onload=alert(2) " + texts[20];
  lines += DocumentJson("<img src=x onerror=alert(3)>", hostile, 0) + "\n";
  lines += DocumentJson("copy", hostile, 0) + "\n";
  ASSERT_EQ(Call("POST", "/v1/collections/archive/documents", lines, "application/x-ndjson").first,
            200);

  const std::string target = "/ui/collections/archive?top=3";
  httplib::Result page = Get(target);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 200) << page->body;
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(page->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'none'"));
  EXPECT_EQ(page->body, LibraryReport(target, 3));
  // The hostile texts are in the page only as escaped data: the page's own
  // two script elements and no markup of theirs.
  const std::string& body = page->body;
  EXPECT_NE(body.find("\\u003cscript\\u003ealert(1)"), std::string::npos);
  EXPECT_NE(body.find("\\u003cimg src=x onerror=alert(3)\\u003e"), std::string::npos);
  const size_t first_script = body.find("<script");
  const size_t second_script = body.find("<script", first_script + 1);
  ASSERT_NE(second_script, std::string::npos);
  EXPECT_EQ(body.find("<script", second_script + 1), std::string::npos);
  EXPECT_EQ(body.find("<img"), std::string::npos);

  // Live: after an add, the page is the report of the new commit.
  std::string more;
  for (size_t i = 20; i < 30; ++i) more += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
  more += DocumentJson("copy-of-3", texts[3], 0) + "\n";
  ASSERT_EQ(Call("POST", "/v1/collections/archive/documents", more, "application/x-ndjson").first,
            200);
  httplib::Result after = Get(target);
  ASSERT_TRUE(after);
  EXPECT_NE(after->body, page->body);
  EXPECT_EQ(after->body, LibraryReport(target, 3));
  EXPECT_THAT(after->body, HasSubstr("copy-of-3"));

  // Parameters are checked like the other routes'.
  EXPECT_EQ(Call("GET", "/ui/collections/archive?top=0").first, 400);
  EXPECT_EQ(Call("GET", "/ui/collections/archive?top=2.5").first, 400);
  EXPECT_EQ(Call("GET", "/ui/collections/archive?min=1.5").first, 400);
  EXPECT_EQ(Call("GET", "/ui/collections/archive?max_text_kb=x").first, 400);
  EXPECT_EQ(Call("GET", "/ui/collections/nope").first, 404);
  EXPECT_EQ(Call("GET", "/ui/collections/bad%21name").first, 400);
  EXPECT_EQ(Call("POST", "/ui/collections/archive").first, 405);
}

TEST_F(UiRoutesTest, IndexAndStreamPagesShowTheLiveCounts) {
  StartWithCollection();
  ASSERT_EQ(Call("PUT", "/v1/streams/news", R"({"threshold": 0.8})").first, 201);
  const std::vector<std::string> texts = PlantedTexts(2, 3);
  ASSERT_EQ(Call("POST", "/v1/streams/news/documents", DocumentJson("a", texts[0], 1)).first, 200);
  ASSERT_EQ(Call("POST", "/v1/streams/news/documents", DocumentJson("b", texts[1], 2)).first, 200);
  ASSERT_EQ(Call("POST", "/v1/streams/news/documents", DocumentJson("a2", texts[0], 3)).first, 200);

  auto [status, index] = Call("GET", "/ui/");
  ASSERT_EQ(status, 200);
  EXPECT_THAT(index, HasSubstr("<a href=\"/ui/collections/archive\">collection archive</a>"));
  EXPECT_THAT(index, HasSubstr("<a href=\"/ui/streams/news\">stream news</a>"));
  EXPECT_THAT(index, HasSubstr("<dt>documents in the window</dt><dd>3</dd>"));
  EXPECT_THAT(index, HasSubstr("<dt>near-duplicates in the window</dt><dd>1</dd>"));

  auto [stream_status, stream] = Call("GET", "/ui/streams/news");
  ASSERT_EQ(stream_status, 200);
  EXPECT_THAT(stream, HasSubstr("<dt>kept (indexed)</dt><dd data-key=\"kept (indexed)\">2</dd>"));
  EXPECT_THAT(stream, HasSubstr("minhash, Jaccard at least 0.8"));
  EXPECT_EQ(Call("GET", "/ui/streams/nope").first, 404);

  // The answer in the window is the page's one pair (no texts: ids only).
  EXPECT_THAT(stream, HasSubstr("\"docs\":[[\"a\",0,null,0,0,1],[\"a2\",0,null,0,0,3]]"));
  EXPECT_THAT(stream, HasSubstr("not kept by this stream"));

  httplib::Result redirect = Get("/ui");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 302);
  EXPECT_EQ(redirect->get_header_value("Location"), "/ui/");
}

// A stream that keeps texts: its page is the report of its near-duplicate
// answers, a page at a time, searchable, with the two texts and their
// passages, and hostile texts stay text.
TEST_F(UiRoutesTest, StreamPagesListTheAnswersWithTextsAndPassages) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/s", R"({"keep_texts": true, "threshold": 0.5})").first, 201);
  const std::vector<std::string> texts = PlantedTexts(2, 33);
  const std::string hostile = "<script>alert(1)</script> \"onload=alert(2) ";
  std::string lines = DocumentJson("kept-0", texts[0], 10) + "\n" +
                      DocumentJson("kept-1", texts[1], 11) + "\n" +
                      DocumentJson("copy-0", hostile + texts[0], 12) + "\n" +
                      DocumentJson("<img src=x onerror=alert(3)>", texts[1] + hostile, 13) + "\n";
  ASSERT_EQ(Call("POST", "/v1/streams/s/documents", lines, "application/x-ndjson").first, 200);

  // Two answers, one per page: the newest first, then the link to the next.
  auto [status, first] = Call("GET", "/ui/streams/s?limit=1");
  ASSERT_EQ(status, 200) << first;
  EXPECT_THAT(first, HasSubstr("\"pairs\":[[0,1,"));
  EXPECT_THAT(first, HasSubstr("[\"kept-1\","));
  EXPECT_THAT(first, Not(HasSubstr("copy-0")));
  const std::string next = "<a href=\"/ui/streams/s?limit=1&amp;cursor=13.3\">next page</a>";
  ASSERT_THAT(first, HasSubstr(next));
  auto [next_status, second] = Call("GET", "/ui/streams/s?limit=1&cursor=13.3");
  ASSERT_EQ(next_status, 200);
  EXPECT_THAT(second, HasSubstr("[\"copy-0\","));
  EXPECT_THAT(second, Not(HasSubstr("next page")));
  // The passages are the JSON route's (one passage: 4 UTF-16 offsets, the
  // texts being ASCII equal to the byte offsets, kept document first).
  const std::string entry = Call("GET", "/v1/streams/s/documents/copy-0?passages=true").second;
  std::smatch passage;
  ASSERT_TRUE(std::regex_search(
      entry, passage,
      std::regex(R"("passages":\[\{"query":\[(\d+),(\d+)\],"match":\[(\d+),(\d+)\]\}\])")));
  EXPECT_THAT(second,
              HasSubstr("[" + std::string(passage[3]) + "," + std::string(passage[4]) + "," +
                        std::string(passage[1]) + "," + std::string(passage[2]) + "]]]"));
  // Search across the window, and the form keeps what was asked.
  auto [found_status, found] = Call("GET", "/ui/streams/s?q=COPY");
  ASSERT_EQ(found_status, 200);
  EXPECT_THAT(found, HasSubstr("[\"copy-0\","));
  EXPECT_THAT(found, Not(HasSubstr("onerror=alert(3)")));
  EXPECT_THAT(found, HasSubstr("name=\"q\" value=\"COPY\""));
  // Hostile ids and texts: only the page's two scripts, no markup of theirs.
  auto [all_status, all] = Call("GET", "/ui/streams/s?q=%22%3E%3Cscript%3E");
  ASSERT_EQ(all_status, 200);
  EXPECT_THAT(all, HasSubstr("value=\"&quot;&gt;&lt;script&gt;\""));
  for (const std::string& page : {first, second, found, all}) {
    const size_t one = page.find("<script");
    const size_t two = page.find("<script", one + 1);
    ASSERT_NE(two, std::string::npos);
    EXPECT_EQ(page.find("<script", two + 1), std::string::npos);
    EXPECT_EQ(page.find("<img"), std::string::npos);
  }
  EXPECT_THAT(Call("GET", "/ui/streams/s").second,
              HasSubstr("\\u003cimg src=x onerror=alert(3)\\u003e"));
  // Parameters are checked.
  for (const char* bad : {"limit=0", "order=up", "from=x", "cursor=abc", "max_text_kb=0"}) {
    EXPECT_EQ(Call("GET", std::string("/ui/streams/s?") + bad).first, 400) << bad;
  }
}

}  // namespace
}  // namespace neardup::server
