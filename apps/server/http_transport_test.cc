// The service's own HTTP/1.1 handling: request heads (http_message.h),
// routes without regular expressions (router.h), and HttpServer on the wire
// through a raw socket (pipelining, chunked bodies, 100-continue, HEAD,
// malformed and oversized heads).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "http_message.h"
#include "router.h"
#include "server_test_util.h"
#include "support/planted_corpus.h"

namespace neardup::server {
namespace {

using test_util::RawConnection;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(HttpMessageTest, ParsesTheRequestLineQueryAndHeaders) {
  HttpRequest req;
  ASSERT_EQ(ParseRequestHead("POST /v1/streams/a%20b/check?texts=true&x=1%2B2 HTTP/1.1\r\n"
                             "Host: x\r\nContent-Type:  application/x-ndjson \r\nX-Empty:\r\n",
                             &req),
            0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.version, "HTTP/1.1");
  EXPECT_EQ(req.target, "/v1/streams/a%20b/check?texts=true&x=1%2B2");
  EXPECT_EQ(req.path, "/v1/streams/a b/check");
  EXPECT_EQ(req.get_param_value("texts"), "true");
  EXPECT_EQ(req.get_param_value("x"), "1+2");
  EXPECT_EQ(req.get_header_value("content-type"), "application/x-ndjson");
  EXPECT_TRUE(req.has_header("X-Empty"));
  EXPECT_EQ(req.get_header_value("X-Empty"), "");
  // LF-only lines are read too.
  HttpRequest lf;
  ASSERT_EQ(ParseRequestHead("GET /healthz HTTP/1.0\nA: 1", &lf), 0);
  EXPECT_EQ(lf.path, "/healthz");
  EXPECT_EQ(lf.get_header_value("a"), "1");
}

TEST(HttpMessageTest, RefusesMalformedHeads) {
  const std::pair<std::string, int> cases[] = {
      {"GET", 400},
      {"GET /x", 400},
      {"GET x HTTP/1.1", 400},
      {"G(T /x HTTP/1.1", 400},
      {"GET /x FTP/1.0", 400},
      {"GET /x HTTP/2.0", 505},
      {"GET /x HTTP/1.1\r\nNoColon", 400},
      {"GET /x HTTP/1.1\r\nBad Name: v", 400},
      {"GET /x HTTP/1.1\r\nA: b\r\n folded", 400},
  };
  for (const auto& [head, status] : cases) {
    HttpRequest req;
    EXPECT_EQ(ParseRequestHead(head, &req), status) << head;
  }
}

// Mutated heads (bytes flipped, cut, inserted; seeded) give an answer and
// never a crash (run under ASan/UBSan in CI): a parsed request has a method
// and a path starting with '/', an error is 400 or 505.
TEST(HttpMessageTest, MutatedHeadsAreParsedOrRefused) {
  const std::string valid =
      "POST /v1/streams/s%2Fx/documents?texts=true&a=%zz HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/x-ndjson\r\nContent-Length: 12\r\n";
  std::mt19937_64 random(14);
  for (int i = 0; i < 5000; ++i) {
    std::string head = valid;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !head.empty(); ++e) {
      const size_t at = random() % head.size();
      switch (random() % 3) {
        case 0:
          head[at] = static_cast<char>(random() % 256);
          break;
        case 1:
          head.erase(at, 1 + random() % 8);
          break;
        default:
          head.insert(at, 1, " :\r\n%?/"[random() % 8]);
      }
    }
    HttpRequest req;
    const int status = ParseRequestHead(head, &req);
    if (status == 0) {
      EXPECT_FALSE(req.method.empty()) << head;
      EXPECT_FALSE(req.target.empty()) << head;
      EXPECT_EQ(req.target.front(), '/') << head;
    } else {
      EXPECT_TRUE(status == 400 || status == 505) << status << " " << head;
    }
  }
}

TEST(HttpMessageTest, ConnectionAndBodyHeaders) {
  auto parse = [](const std::string& head) {
    HttpRequest req;
    EXPECT_EQ(ParseRequestHead(head, &req), 0) << head;
    return req;
  };
  EXPECT_FALSE(WantsClose(parse("GET / HTTP/1.1")));
  EXPECT_TRUE(WantsClose(parse("GET / HTTP/1.1\r\nConnection: Close")));
  EXPECT_TRUE(WantsClose(parse("GET / HTTP/1.0")));
  EXPECT_FALSE(WantsClose(parse("GET / HTTP/1.0\r\nConnection: keep-alive")));
  uint64_t length = 99;
  EXPECT_TRUE(ContentLength(parse("GET / HTTP/1.1"), &length));
  EXPECT_EQ(length, 0u);
  EXPECT_TRUE(ContentLength(parse("GET / HTTP/1.1\r\nContent-Length: 1234"), &length));
  EXPECT_EQ(length, 1234u);
  for (const char* bad : {"1x", "-1", "", "99999999999999999999999"}) {
    EXPECT_FALSE(
        ContentLength(parse(std::string("GET / HTTP/1.1\r\nContent-Length: ") + bad), &length))
        << bad;
  }
  EXPECT_TRUE(IsChunked(parse("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked")));
  EXPECT_FALSE(IsChunked(parse("POST / HTTP/1.1\r\nTransfer-Encoding: gzip")));
}

TEST(HttpMessageTest, ResponseHeadIsStatusHeadersLengthAndClose) {
  httplib::Response res;
  res.status = 404;
  res.set_header("X-A", "b");
  std::string head;
  AppendResponseHead(res, 7, /*close=*/false, &head);
  EXPECT_EQ(head, "HTTP/1.1 404 Not Found\r\nX-A: b\r\nContent-Length: 7\r\n\r\n");
  head.clear();
  res.status = 204;
  AppendResponseHead(res, 0, /*close=*/true, &head);
  EXPECT_EQ(head, "HTTP/1.1 204 No Content\r\nX-A: b\r\nConnection: close\r\n\r\n");
}

TEST(RouterTest, MatchesTemplatesAndNamesTheirParameters) {
  Router router;
  auto answer = [](const char* what) {
    return [what](const HttpRequest&, httplib::Response& res) { res.body = what; };
  };
  router.Add("/healthz").Get(answer("health"));
  router.Add("/v1/streams/{name}").Get(answer("get stream")).Put(answer("put stream"));
  router.Add("/v1/streams/{name}/documents/{id}").Get(answer("get doc")).Delete(answer("del doc"));
  router.Add("/ui/").Get(answer("ui"));
  struct Case {
    const char* method;
    const char* path;
    Router::Outcome outcome;
    const char* body;
    const char* route;
    const char* name;
    const char* id;
  };
  using O = Router::Outcome;
  const Case cases[] = {
      {"GET", "/healthz", O::kMatched, "health", "/healthz", "", ""},
      {"HEAD", "/healthz", O::kMatched, "health", "/healthz", "", ""},
      {"POST", "/healthz", O::kWrongMethod, "", "/healthz", "", ""},
      {"PATCH", "/v1/streams/s", O::kWrongMethod, "", "/v1/streams/{name}", "s", ""},
      {"PUT", "/v1/streams/news", O::kMatched, "put stream", "/v1/streams/{name}", "news", ""},
      {"DELETE", "/v1/streams/n/documents/a b", O::kMatched, "del doc",
       "/v1/streams/{name}/documents/{id}", "n", "a b"},
      {"GET", "/v1/streams/", O::kNoRoute, "", "other", "", ""},
      {"GET", "/v1/streams/s/", O::kNoRoute, "", "other", "", ""},
      {"GET", "/v1/streams/s/documents/", O::kNoRoute, "", "other", "", ""},
      {"GET", "/v1/streams/s/other/x", O::kNoRoute, "", "other", "", ""},
      {"GET", "/ui/", O::kMatched, "ui", "/ui/", "", ""},
      {"GET", "/ui", O::kNoRoute, "", "other", "", ""},
      {"GET", "/", O::kNoRoute, "", "other", "", ""},
  };
  for (const Case& c : cases) {
    HttpRequest req;
    req.method = c.method;
    req.path = c.path;
    const Router::Match match = router.Find(&req);
    EXPECT_EQ(match.outcome, c.outcome) << c.method << " " << c.path;
    EXPECT_EQ(req.route, c.route) << c.method << " " << c.path;
    if (match.outcome == O::kMatched) {
      httplib::Response res;
      (*match.handler)(req, res);
      EXPECT_EQ(res.body, c.body) << c.method << " " << c.path;
      EXPECT_EQ(req.name, c.name) << c.path;
      EXPECT_EQ(req.id, c.id) << c.path;
    }
  }
}

class HttpTransportTest : public test_util::ServerTest {};

TEST_F(HttpTransportTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  RawConnection connection(port_);
  ASSERT_TRUE(connection.connected());
  connection.Send(
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "\r\nHEAD /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string out = connection.ReadAll(std::chrono::seconds(10));
  EXPECT_TRUE(connection.closed_by_server());
  const size_t health = out.find("{\"status\":\"ok\"}");
  const size_t ready = out.find("HTTP/1.1 200 OK", health);
  const size_t missing = out.find("HTTP/1.1 404 Not Found", health);
  ASSERT_NE(health, std::string::npos) << out;
  ASSERT_NE(ready, std::string::npos) << out;
  ASSERT_NE(missing, std::string::npos) << out;
  EXPECT_LT(ready, missing);
  // HEAD: the length of the body it would have, and no body.
  EXPECT_THAT(out.substr(ready, missing - ready), HasSubstr("Content-Length: 19\r\n"));
  EXPECT_THAT(out, Not(HasSubstr("\"ready\"")));
  EXPECT_THAT(out.substr(missing), HasSubstr("Connection: close\r\n"));
}

TEST_F(HttpTransportTest, ChunkedAndExpectContinueBodiesAreRead) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  const std::string document = test_util::DocumentJson("a", "storm closes the harbour", 10);
  {
    RawConnection connection(port_);
    const size_t half = document.size() / 2;
    char sizes[2][32];
    std::snprintf(sizes[0], sizeof(sizes[0]), "%zx", half);
    std::snprintf(sizes[1], sizeof(sizes[1]), "%zx;ext=1", document.size() - half);
    connection.Send(
        "POST /v1/streams/s/check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n" +
        std::string(sizes[0]) + "\r\n" + document.substr(0, half) + "\r\n" + sizes[1] + "\r\n" +
        document.substr(half) + "\r\n0\r\nTrailer: x\r\n\r\n");
    const std::string out = connection.ReadAll(std::chrono::seconds(10));
    EXPECT_THAT(out, HasSubstr("HTTP/1.1 200 OK"));
    EXPECT_THAT(out, HasSubstr("\"id\":\"a\",\"status\":\"new\""));
  }
  {
    RawConnection connection(port_);
    connection.Send(
        "POST /v1/streams/s/documents HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        "Connection: close\r\nContent-Length: " +
        std::to_string(document.size()) + "\r\n\r\n");
    EXPECT_THAT(connection.ReadUntil("\r\n\r\n", std::chrono::seconds(10)),
                HasSubstr("HTTP/1.1 100 Continue\r\n\r\n"));
    connection.Send(document);
    const std::string out = connection.ReadAll(std::chrono::seconds(10));
    EXPECT_THAT(out, HasSubstr("HTTP/1.1 200 OK"));
    EXPECT_THAT(out, HasSubstr("\"id\":\"a\",\"status\":\"new\""));
  }
  EXPECT_THAT(Call("GET", "/v1/streams/s/documents/a").second, HasSubstr("\"status\":\"new\""));
}

// A connection reads each body into the buffer of its earlier ones (session
// 14): requests on one keep-alive connection -- a large JSON-lines body, then
// smaller ones, a chunked one (appended), an empty one -- get exactly the
// answers they get each on a fresh connection. A buffer not emptied between
// requests would answer the later ones with the earlier bodies' documents
// (or a JSON error).
TEST_F(HttpTransportTest, EachBodyOnAKeepAliveConnectionIsReadAfresh) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  const std::vector<std::string> texts = test_support::PlantedTexts(150, 14);
  std::string lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    lines += test_util::DocumentJson("big-" + std::to_string(i), texts[i], 10) + "\n";
  }
  const std::string single = test_util::DocumentJson("one", "storm closes the harbour", 10);
  const std::string pair = test_util::DocumentJson("x", texts[3], 10) + "\n" +
                           test_util::DocumentJson("y", "a second short one", 10) + "\n";
  struct Posted {
    std::string body;
    std::string type;
    bool chunked;
  };
  const Posted posts[] = {
      {lines, "application/x-ndjson", false}, {single, "application/json", false},
      {pair, "application/x-ndjson", true},   {"", "application/json", false},
      {pair, "application/x-ndjson", false},  {single, "application/json", true}};
  std::string requests;
  for (size_t i = 0; i < std::size(posts); ++i) {
    const Posted& p = posts[i];
    requests += "POST /v1/streams/s/check HTTP/1.1\r\nHost: x\r\nContent-Type: " + p.type + "\r\n";
    if (i + 1 == std::size(posts)) requests += "Connection: close\r\n";
    if (p.chunked) {
      char size[32];
      std::snprintf(size, sizeof(size), "%zx", p.body.size());
      requests += "Transfer-Encoding: chunked\r\n\r\n" + std::string(size) + "\r\n" + p.body +
                  "\r\n0\r\n\r\n";
    } else {
      requests += "Content-Length: " + std::to_string(p.body.size()) + "\r\n\r\n" + p.body;
    }
  }
  RawConnection connection(port_);
  ASSERT_TRUE(connection.connected());
  connection.Send(requests);
  const std::string out = connection.ReadAll(std::chrono::seconds(30));
  EXPECT_TRUE(connection.closed_by_server());
  // The answers in order: status and body (Content-Length framed).
  size_t at = 0;
  for (size_t i = 0; i < std::size(posts); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const size_t head_end = out.find("\r\n\r\n", at);
    ASSERT_NE(head_end, std::string::npos) << out.substr(at);
    const std::string head = out.substr(at, head_end - at);
    const size_t length_at = head.find("Content-Length: ");
    ASSERT_NE(length_at, std::string::npos) << head;
    const size_t length = std::stoul(head.substr(length_at + 16));
    const std::string body = out.substr(head_end + 4, length);
    at = head_end + 4 + length;
    const std::pair<int, std::string> fresh =
        Call("POST", "/v1/streams/s/check", posts[i].body, posts[i].type);
    EXPECT_EQ(head.substr(9, 3), std::to_string(fresh.first)) << head;
    EXPECT_EQ(body, fresh.second);
  }
  EXPECT_EQ(at, out.size());
}

TEST_F(HttpTransportTest, MalformedOversizedAndTooLargeRequestsAreRefused) {
  ServiceOptions options;
  options.max_body_mb = 1;
  StartServer(options);
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  struct Case {
    std::string request;
    const char* status_line;
  };
  const std::string big_chunk = std::string(600000, ' ');
  char chunk_size[32];
  std::snprintf(chunk_size, sizeof(chunk_size), "%zx", big_chunk.size());
  const Case cases[] = {
      {"GARBAGE\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"GET /healthz HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n",
       "HTTP/1.1 431 Request Header Fields Too Large"},
      {"GET /healthz HTTP/1.1\r\nContent-Length: x\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"POST /v1/streams/s/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       "HTTP/1.1 400 Bad Request"},
      // Two chunks of 600 KB pass --max-body-mb 1.
      {"POST /v1/streams/s/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
           std::string(chunk_size) + "\r\n" + big_chunk + "\r\n" + chunk_size + "\r\n" + big_chunk +
           "\r\n0\r\n\r\n",
       "HTTP/1.1 413 Payload Too Large"},
  };
  for (const Case& c : cases) {
    RawConnection connection(port_);
    // Not Send: the answer may come, and the connection close, before all
    // of the request is sent (session 10 saw this test fail once under
    // load; the next test makes that client deterministic).
    connection.SendMayBeRefused(c.request);
    const std::string out = connection.ReadAll(std::chrono::seconds(10));
    EXPECT_EQ(out.rfind(c.status_line, 0), 0u) << c.request.substr(0, 60) << ": " << out;
    EXPECT_THAT(out, HasSubstr("\"code\":"));
    EXPECT_TRUE(connection.closed_by_server()) << c.request.substr(0, 60);
  }
  EXPECT_EQ(Call("GET", "/healthz").first, 200);
}

// The client of the test above, descheduled in the middle of its body for
// longer than the server drains a refused body (HttpServer::Connection::
// Close stops after 100 ms without a byte): the server has answered and
// closes; the rest of the send fails (EPIPE, or a reset) and the answer is
// still read whole, the close seen. The test above asserted a complete
// send, which failed once under load 10-20 in session 10.
TEST_F(HttpTransportTest, ARefusedBodyCutOffMidSendStillGetsItsAnswer) {
  ServiceOptions options;
  options.max_body_mb = 1;
  StartServer(options);
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  const std::string big_chunk = std::string(600000, ' ');
  char chunk_size[32];
  std::snprintf(chunk_size, sizeof(chunk_size), "%zx", big_chunk.size());
  // The second chunk's size already passes the limit: the server answers
  // 413 once it has read it.
  const std::string first =
      "POST /v1/streams/s/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
      std::string(chunk_size) + "\r\n" + big_chunk + "\r\n" + chunk_size + "\r\n";
  const std::string rest = big_chunk + "\r\n0\r\n\r\n";
  RawConnection connection(port_);
  EXPECT_EQ(connection.SendMayBeRefused(first), first.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  // Sent into a closed connection: the first bytes may still be taken.
  connection.SendMayBeRefused(rest);
  connection.SendMayBeRefused(rest);
  const std::string out = connection.ReadAll(std::chrono::seconds(10));
  EXPECT_EQ(out.rfind("HTTP/1.1 413 Payload Too Large", 0), 0u) << out;
  EXPECT_THAT(out, HasSubstr("\"code\":\"payload_too_large\""));
  EXPECT_TRUE(connection.closed_by_server());
  EXPECT_EQ(Call("GET", "/healthz").first, 200);
}

}  // namespace
}  // namespace neardup::server
