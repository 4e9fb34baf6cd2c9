// A stream's list of near-duplicate answers and a document's passages
// through the real server (GET /v1/streams/NAME/near_duplicates, GET
// .../documents/ID?passages=true): the list equals the library's list of
// the same stream fed the same documents, page by page and across a
// restart; the passages equal the two-text MatchingPassages of the stored
// texts; bad parameters get the service's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "neardup/json_writer.h"
#include "neardup/passages.h"
#include "neardup/stream.h"
#include "server_test_util.h"
#include "stream_answers.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using ::testing::HasSubstr;
using ::testing::Not;

class StreamAnswersTest : public test_util::ServerTest {
 protected:
  // Every page of `path` (which has a query string), following next_cursor;
  // the answers' JSON objects, in order.
  std::vector<std::string> AllPages(const std::string& path) {
    std::vector<std::string> answers;
    std::string cursor;
    for (int pages = 0; pages < 1000; ++pages) {
      auto [status, body] = Call("GET", path + (cursor.empty() ? "" : "&cursor=" + cursor));
      EXPECT_EQ(status, 200) << body;
      if (status != 200) break;
      std::smatch list;
      EXPECT_TRUE(std::regex_search(
          body, list,
          std::regex(
              R"(^\{"answers":\[(.*)\],"next_cursor":(null|"[-0-9.]+"),"scanned":\d+\}\n$)")))
          << body;
      const std::string items = list[1];
      // The objects hold no nested braces here (no texts asked for).
      static const std::regex kObject(R"(\{[^{}]*\})");
      for (std::sregex_iterator it(items.begin(), items.end(), kObject), end; it != end; ++it) {
        answers.push_back(it->str());
      }
      if (list[2] == "null") break;
      cursor = std::string(list[2]).substr(1, list[2].length() - 2);
    }
    return answers;
  }
};

// What the route writes for an entry without texts.
std::string Expected(const StreamEntry& entry) {
  std::string out;
  AppendAnswer(&out, entry.answer);
  out.pop_back();
  out += ",\"of_time\":" + (entry.of_time ? std::to_string(*entry.of_time) : "null") + "}";
  return out;
}

TEST_F(StreamAnswersTest, TheListIsTheLibrarysPageByPageAndAfterARestart) {
  StartServer();
  const std::string config = R"({"threshold": 0.5, "window_seconds": 300, "max_documents": 70})";
  ASSERT_EQ(Call("PUT", "/v1/streams/s", config).first, 201);
  StreamConfig library_config;
  library_config.threshold = 0.5;
  library_config.window_seconds = 300;
  library_config.max_documents = 70;
  auto library = std::move(NearDuplicateStream::Create(library_config)).value();
  const std::vector<std::string> texts = PlantedTexts(150, 31);
  std::string lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    const int64_t time = static_cast<int64_t>(i * 3 % 7 + i * 2);
    lines += DocumentJson(PlantedId(i), texts[i], time) + "\n";
    ASSERT_TRUE(library->Add(PlantedId(i), texts[i], time).ok());
  }
  ASSERT_EQ(Call("POST", "/v1/streams/s/documents", lines, "application/x-ndjson").first, 200);
  ASSERT_EQ(Call("DELETE", "/v1/streams/s/documents/" + PlantedId(149)).first, 204);
  ASSERT_TRUE(library->Remove(PlantedId(149)).ok());

  for (const char* query :
       {"limit=6", "limit=4&order=oldest", "limit=3&q=DOC-1", "limit=5&from=200&to=260"}) {
    SCOPED_TRACE(query);
    StreamListOptions options;
    options.limit = kMaxStreamListLimit;
    const std::string_view asked = query;
    options.oldest_first = asked.find("oldest") != std::string::npos;
    if (asked.find("q=") != std::string::npos) options.search = "doc-1";
    if (asked.find("from=") != std::string::npos) {
      options.from_time = 200;
      options.to_time = 260;
    }
    std::vector<std::string> expected;
    const StreamPage page = *library->List(options);
    for (const StreamEntry& entry : page.entries) {
      expected.push_back(Expected(entry));
    }
    ASSERT_GT(expected.size(), 2u);
    EXPECT_EQ(AllPages(std::string("/v1/streams/s/near_duplicates?") + query), expected);
  }
  const std::vector<std::string> before = AllPages("/v1/streams/s/near_duplicates?limit=9");
  StopServer();
  StartServer();
  EXPECT_EQ(AllPages("/v1/streams/s/near_duplicates?limit=9"), before);
  // Empty values are the defaults (a submitted search form's empty fields).
  EXPECT_EQ(Call("GET", "/v1/streams/s/near_duplicates?limit=9&q=&from=&to=&order=&cursor=").second,
            Call("GET", "/v1/streams/s/near_duplicates?limit=9").second);
  // RFC 3339 times are the same as seconds.
  EXPECT_EQ(Call("GET", "/v1/streams/s/near_duplicates?from=1970-01-01T00:03:20Z&to=260").second,
            Call("GET", "/v1/streams/s/near_duplicates?from=200&to=260").second);

  for (const char* bad : {"limit=0", "limit=10001", "limit=x", "order=sideways", "from=yesterday",
                          "cursor=12", "texts=maybe"}) {
    EXPECT_EQ(Call("GET", std::string("/v1/streams/s/near_duplicates?") + bad).first, 400) << bad;
  }
  EXPECT_EQ(Call("GET", "/v1/streams/s/near_duplicates?texts=true").first, 409);
  EXPECT_EQ(Call("GET", "/v1/streams/s/near_duplicates?passages=true").first, 409);
  EXPECT_EQ(Call("GET", "/v1/streams/nope/near_duplicates").first, 404);
  EXPECT_EQ(Call("POST", "/v1/streams/s/near_duplicates").first, 405);
}

TEST_F(StreamAnswersTest, ADocumentsPassagesAreThoseOfItsTwoTexts) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/t", R"({"keep_texts": true, "threshold": 0.5})").first, 201);
  const std::string kept = PlantedTexts(1, 32)[0];
  // A near-duplicate that quotes the kept text with markup around it.
  const std::string copy = "<script>alert(1)</script> Breaking: " + kept + " (more soon)";
  ASSERT_EQ(Call("POST", "/v1/streams/t/documents", DocumentJson("kept", kept, 10)).first, 200);
  ASSERT_EQ(Call("POST", "/v1/streams/t/documents", DocumentJson("copy", copy, 20)).first, 200);

  auto [status, body] = Call("GET", "/v1/streams/t/documents/copy?passages=true");
  ASSERT_EQ(status, 200) << body;
  StreamConfig config;
  config.keep_texts = true;
  config.threshold = 0.5;
  auto library = std::move(NearDuplicateStream::Create(config)).value();
  Result<std::vector<Passage>> passages =
      MatchingPassages(NearDuplicatePassageRecipe(library->recipe()), copy, kept);
  ASSERT_TRUE(passages.ok());
  ASSERT_EQ(passages->size(), 1u);
  const Passage& p = (*passages)[0];
  EXPECT_EQ(copy.substr(p.query_begin, p.query_end - p.query_begin),
            kept.substr(0, kept.find_last_not_of(' ') + 1));
  std::string expected = "{\"id\":\"copy\",\"status\":\"near_duplicate\",\"of\":\"kept\",";
  const std::string similarity = body.substr(body.find("\"similarity\":"));
  expected +=
      similarity.substr(0, similarity.find(',') + 1) + "\"time\":20,\"of_time\":10,\"text\":";
  AppendJsonString(&expected, copy);
  expected += ",\"of_text\":";
  AppendJsonString(&expected, kept);
  expected += ",\"passages\":[{\"query\":[" + std::to_string(p.query_begin) + "," +
              std::to_string(p.query_end) + "],\"match\":[" + std::to_string(p.match_begin) + "," +
              std::to_string(p.match_end) + "]}]}\n";
  EXPECT_EQ(body, expected);
  // The list carries the same entry.
  auto [list_status, list] = Call("GET", "/v1/streams/t/near_duplicates?passages=true");
  ASSERT_EQ(list_status, 200);
  EXPECT_EQ(list, "{\"answers\":[" + expected.substr(0, expected.size() - 1) +
                      "],\"next_cursor\":null,\"scanned\":1}\n");
  // A kept document has no kept one; once the kept one is gone, the copy's
  // passages are null.
  EXPECT_THAT(Call("GET", "/v1/streams/t/documents/kept?passages=true").second,
              Not(HasSubstr("passages")));
  ASSERT_EQ(Call("DELETE", "/v1/streams/t/documents/kept").first, 204);
  EXPECT_THAT(Call("GET", "/v1/streams/t/documents/copy?passages=true").second,
              HasSubstr(",\"of_time\":null,"));
  EXPECT_THAT(Call("GET", "/v1/streams/t/documents/copy?passages=true").second,
              HasSubstr(",\"of_text\":null,\"passages\":null}"));
  // Errors.
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/copy?passages=yes").first, 400);
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/nobody?passages=true").first, 404);
  ASSERT_EQ(Call("PUT", "/v1/streams/plain", "{}").first, 201);
  ASSERT_EQ(Call("POST", "/v1/streams/plain/documents", DocumentJson("a", kept, 1)).first, 200);
  EXPECT_EQ(Call("GET", "/v1/streams/plain/documents/a?passages=true").first, 409);
}

}  // namespace
}  // namespace neardup::server
