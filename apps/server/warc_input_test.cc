// WARC request bodies: records become documents whose time is their
// WARC-Date, so a stream's window follows the crawl (issue 21).
#include "warc_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::PlantedTexts;
using test_util::ServeProcess;
using test_util::ServerTest;
using test_util::TempDir;
using ::testing::HasSubstr;

// One WARC 1.1 record, framed as the format says (header block, blank line,
// Content-Length bytes, two line ends).
std::string Record(const std::string& type, const std::string& uri, const std::string& date,
                   const std::string& content_type, const std::string& block) {
  std::string out = "WARC/1.1\r\nWARC-Type: " + type +
                    "\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-" + date.substr(0, 12) +
                    ">\r\n";
  if (!uri.empty()) out += "WARC-Target-URI: " + uri + "\r\n";
  if (!date.empty()) out += "WARC-Date: " + date + "\r\n";
  out += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(block.size()) +
         "\r\n\r\n" + block + "\r\n\r\n";
  return out;
}

std::string HtmlResponse(const std::string& uri, const std::string& date, const std::string& text) {
  return Record("response", uri, date, "application/http; msgtype=response",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                "<html><head><title>t</title><script>var x = 1;</script></head><body><p>" +
                    text + "</p></body></html>");
}

TEST(WarcInputTest, RecordsGiveTheirUriAndDate) {
  const std::string body =
      Record("warcinfo", "", "2024-05-01T00:00:00Z", "application/warc-fields", "a: b\r\n") +
      HtmlResponse("https://x.example/a", "2024-05-01T10:00:00Z", "first page") +
      Record("conversion", "https://x.example/b", "2024-05-01T10:30:00.25Z", "text/plain",
             "second text") +
      Record("resource", "https://x.example/c", "", "text/plain", "no date");
  Result<std::vector<DocumentInput>> docs = ParseWarcDocuments(body, 1 << 20, 1 << 20);
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0].id, "https://x.example/a");
  EXPECT_EQ((*docs)[0].text.find("var x"), std::string::npos);  // visible text only
  EXPECT_THAT((*docs)[0].text, HasSubstr("first page"));
  EXPECT_EQ((*docs)[0].time, 1714557600);
  EXPECT_EQ((*docs)[1].time, 1714557600 + 1800);
  EXPECT_EQ((*docs)[1].text, "second text");
  EXPECT_FALSE((*docs)[2].time.has_value());
}

TEST(WarcInputTest, BadBodiesAreErrorsNamingTheRecord) {
  Result<std::vector<DocumentInput>> not_warc = ParseWarcDocuments("hello", 1 << 20, 1 << 20);
  EXPECT_EQ(not_warc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(not_warc.status().message(), HasSubstr("WARC"));

  Result<std::vector<DocumentInput>> bad_date = ParseWarcDocuments(
      Record("conversion", "https://x.example/d", "yesterday", "text/plain", "x"), 1 << 20,
      1 << 20);
  EXPECT_EQ(bad_date.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_date.status().message(), HasSubstr("https://x.example/d"));
  EXPECT_THAT(bad_date.status().message(), HasSubstr("yesterday"));

  // A good record, then one cut short: nothing is returned.
  std::string cut = HtmlResponse("https://x.example/e", "2024-05-01T10:00:00Z", "kept?");
  cut += HtmlResponse("https://x.example/f", "2024-05-01T10:00:00Z", "cut").substr(0, 150);
  Result<std::vector<DocumentInput>> truncated = ParseWarcDocuments(cut, 1 << 20, 1 << 20);
  EXPECT_EQ(truncated.status().code(), StatusCode::kInvalidArgument) << truncated.status();

  const std::string big = Record("conversion", "https://x.example/g", "2024-05-01T10:00:00Z",
                                 "text/plain", std::string(5000, 'w'));
  Result<std::vector<DocumentInput>> too_long = ParseWarcDocuments(big, 1 << 20, 4096);
  EXPECT_EQ(too_long.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(too_long.status().message(), HasSubstr("https://x.example/g"));
  Result<std::vector<DocumentInput>> too_big = ParseWarcDocuments(big, 1024, 1 << 20);
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted) << too_big.status();
}

// The stream's window follows the records' dates, not the arrival time: a
// copy posted in the same request two hours later in crawl time is new.
TEST_F(ServerTest, WarcBodyRecordsAreTimedByTheirWarcDate) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/crawl", R"({"threshold": 0.8, "window_seconds": 3600})").first,
            201);
  const std::string text = PlantedTexts(1, 41)[0];
  const std::string body = HtmlResponse("https://x.example/a", "2024-05-01T10:00:00Z", text) +
                           HtmlResponse("https://x.example/b", "2024-05-01T10:30:00Z", text) +
                           HtmlResponse("https://x.example/c", "2024-05-01T12:00:00Z", text);
  auto [status, answers] = Call("POST", "/v1/streams/crawl/documents", body, "application/warc");
  ASSERT_EQ(status, 200) << answers;
  EXPECT_EQ(answers,
            "{\"id\":\"https://x.example/a\",\"status\":\"new\",\"of\":null,\"similarity\":0,"
            "\"time\":1714557600}\n"
            "{\"id\":\"https://x.example/b\",\"status\":\"near_duplicate\",\"of\":\"https://"
            "x.example/a\",\"similarity\":1,\"time\":1714559400}\n"
            "{\"id\":\"https://x.example/c\",\"status\":\"new\",\"of\":null,\"similarity\":0,"
            "\"time\":1714564800}\n");
  EXPECT_THAT(Call("GET", "/v1/streams/crawl").second,
              HasSubstr("\"oldest_time\":1714564800,\"newest_time\":1714564800"));
  // A damaged body stores nothing and says why.
  auto [bad, message] =
      Call("POST", "/v1/streams/crawl/documents",
           HtmlResponse("https://x.example/d", "2024-05-01T12:10:00Z", text) + "WARC/1.1\r\nX",
           "application/warc");
  EXPECT_EQ(bad, 400) << message;
  EXPECT_THAT(Call("GET", "/v1/streams/crawl").second, HasSubstr("\"documents\":1,"));
}

// `neardup serve` as a process: where the CLI serves through the module
// neardup_server.so, the module loads neardup_extract.so in turn (its own
// copy of the loader) for a WARC body's HTML. Both records are extracted:
// the copy is a near duplicate of the first.
TEST(WarcInputProcessTest, HtmlRecordsAreExtractedWhenServedByTheCli) {
  TempDir dir;
  ServeProcess serve({"--listen", "127.0.0.1:0", "--data-dir", dir.path(), "--no-fsync"});
  const std::string banner = serve.ReadUntil("data in");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(banner, match, std::regex("listening on 127.0.0.1:([0-9]+)")))
      << banner;
  httplib::Client client("127.0.0.1", std::stoi(match[1]));
  client.set_read_timeout(60, 0);
  // Routes answer 503 until recovery ends: wait for /readyz, bounded.
  for (int i = 0; i < 500; ++i) {
    httplib::Result ready = client.Get("/readyz");
    if (ready && ready->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  httplib::Result put =
      client.Put("/v1/streams/crawl", R"({"threshold": 0.8})", "application/json");
  ASSERT_TRUE(put);
  ASSERT_EQ(put->status, 201) << put->body;
  const std::string text = PlantedTexts(1, 43)[0];
  const std::string body = HtmlResponse("https://x.example/a", "2024-05-01T10:00:00Z", text) +
                           HtmlResponse("https://x.example/b", "2024-05-01T10:30:00Z", text);
  httplib::Result post = client.Post("/v1/streams/crawl/documents", body, "application/warc");
  ASSERT_TRUE(post);
  ASSERT_EQ(post->status, 200) << post->body;
  EXPECT_EQ(post->body,
            "{\"id\":\"https://x.example/a\",\"status\":\"new\",\"of\":null,\"similarity\":0,"
            "\"time\":1714557600}\n"
            "{\"id\":\"https://x.example/b\",\"status\":\"near_duplicate\",\"of\":\"https://"
            "x.example/a\",\"similarity\":1,\"time\":1714559400}\n");
  // Where the server is the module (not under sanitizers, whose CLI links
  // it in), the extract module is mapped too.
  std::ifstream maps_file("/proc/" + std::to_string(serve.pid()) + "/maps");
  std::stringstream maps;
  maps << maps_file.rdbuf();
  if (maps.str().find("neardup_server.so") != std::string::npos) {
    EXPECT_THAT(maps.str(), HasSubstr("neardup_extract.so"));
  }
}

}  // namespace
}  // namespace neardup::server
