// The real service on an ephemeral loopback port, driven by a real HTTP
// client (httplib::Client): every route, the errors, auth, idempotent retry,
// restart, metrics, and concurrent clients against the batch leader rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "neardup/json_writer.h"
#include "server_test_util.h"
#include "service.h"

namespace neardup::server {
namespace {

using test_util::BatchLeaders;
using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::ServeProcess;
using test_util::ServerTest;
using test_util::TempDir;
using ::testing::HasSubstr;

TEST_F(ServerTest, StreamAndDocumentRoutes) {
  StartServer();
  EXPECT_EQ(Call("GET", "/healthz").first, 200);
  auto [created, info] =
      Call("PUT", "/v1/streams/news", R"({"threshold": 0.8, "window_seconds": 3600})");
  EXPECT_EQ(created, 201) << info;
  EXPECT_THAT(info, HasSubstr("\"window_seconds\":3600"));
  EXPECT_THAT(info, HasSubstr("\"recipe_id\":\""));
  EXPECT_EQ(Call("PUT", "/v1/streams/news", R"({"threshold": 0.8, "window_seconds": 3600})").first,
            200);
  auto [conflict, conflict_body] = Call("PUT", "/v1/streams/news", R"({"threshold": 0.9})");
  EXPECT_EQ(conflict, 409);
  EXPECT_THAT(conflict_body, HasSubstr("\"code\":\"already_exists\""));

  const std::string text = PlantedTexts(1, 31)[0];
  auto [status_a, answer_a] =
      Call("POST", "/v1/streams/news/documents", DocumentJson("a", text, 1000));
  EXPECT_EQ(status_a, 200);
  EXPECT_EQ(answer_a,
            "{\"id\":\"a\",\"status\":\"new\",\"of\":null,\"similarity\":0,\"time\":1000}\n");
  auto [status_b, answer_b] = Call(
      "POST", "/v1/streams/news/documents", R"({"id": "b", "text": )" + [&] {
        std::string quoted;
        AppendJsonString(&quoted, text);
        return quoted;
      }() + R"(, "time": "1970-01-01T00:16:41Z"})");
  EXPECT_EQ(status_b, 200);
  EXPECT_EQ(answer_b,
            "{\"id\":\"b\",\"status\":\"near_duplicate\",\"of\":\"a\",\"similarity\":1,\"time\":"
            "1001}\n");
  // An idempotent retry (another text even) returns the stored answer.
  EXPECT_EQ(Call("POST", "/v1/streams/news/documents", DocumentJson("b", "other", 5)).second,
            answer_b);
  // Check answers without storing.
  auto [checked, check_body] =
      Call("POST", "/v1/streams/news/check", DocumentJson("c", text, 1002));
  EXPECT_EQ(checked, 200);
  EXPECT_THAT(check_body, HasSubstr("\"of\":\"a\""));
  EXPECT_EQ(Call("GET", "/v1/streams/news/documents/c").first, 404);
  EXPECT_EQ(Call("GET", "/v1/streams/news/documents/b").second, answer_b);
  auto [got, stream_info] = Call("GET", "/v1/streams/news");
  EXPECT_EQ(got, 200);
  EXPECT_THAT(stream_info, HasSubstr("\"documents\":2,\"kept\":1,\"added\":2"));
  EXPECT_THAT(stream_info, HasSubstr("\"oldest_time\":1000,\"newest_time\":1001"));
  EXPECT_EQ(Call("DELETE", "/v1/streams/news/documents/a").first, 204);
  EXPECT_EQ(Call("DELETE", "/v1/streams/news/documents/a").first, 404);
  EXPECT_THAT(Call("POST", "/v1/streams/news/documents", DocumentJson("d", text, 1003)).second,
              HasSubstr("\"status\":\"new\""));
  EXPECT_EQ(Call("DELETE", "/v1/streams/news").first, 204);
  EXPECT_EQ(Call("GET", "/v1/streams/news").first, 404);
  EXPECT_EQ(Call("POST", "/v1/streams/news/documents", DocumentJson("e", text, 1)).first, 404);
}

// keep_texts: a near-duplicate's answer can carry the kept document's text
// (?texts=true), a stored document's answer its text; texts leave with
// their documents and survive a restart.
TEST_F(ServerTest, KeptTextsAreShownAndLeaveWithTheWindow) {
  StartServer();
  auto [created, info] =
      Call("PUT", "/v1/streams/t", R"({"keep_texts": true, "max_documents": 3})");
  ASSERT_EQ(created, 201) << info;
  EXPECT_THAT(info, HasSubstr("\"max_documents\":3,\"keep_texts\":true}"));
  const std::vector<std::string> texts = PlantedTexts(4, 39);
  std::string quoted;
  AppendJsonString(&quoted, texts[0]);
  EXPECT_EQ(
      Call("POST", "/v1/streams/t/documents?texts=true", DocumentJson("a", texts[0], 1)).second,
      "{\"id\":\"a\",\"status\":\"new\",\"of\":null,\"similarity\":0,\"time\":1}\n");
  const std::string answer_b =
      "{\"id\":\"b\",\"status\":\"near_duplicate\",\"of\":\"a\",\"similarity\":1,\"time\":2";
  EXPECT_EQ(Call("POST", "/v1/streams/t/documents?texts=true", DocumentJson("b", texts[0] + " ", 2))
                .second,
            answer_b + ",\"of_text\":" + quoted + "}\n");
  EXPECT_EQ(Call("POST", "/v1/streams/t/check?texts=true", DocumentJson("c", texts[0], 3)).second,
            "{\"id\":\"c\",\"status\":\"near_duplicate\",\"of\":\"a\",\"similarity\":1,"
            "\"time\":3,\"of_text\":" +
                quoted + "}\n");
  std::string quoted_b;
  AppendJsonString(&quoted_b, texts[0] + " ");
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/b").second,
            answer_b + ",\"text\":" + quoted_b + "}\n");
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/b?texts=true").second,
            answer_b + ",\"text\":" + quoted_b + ",\"of_text\":" + quoted + "}\n");
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/b?texts=maybe").first, 400);
  // The cap pushes a and b out, texts included.
  for (size_t i = 1; i < 4; ++i) {
    ASSERT_EQ(
        Call("POST", "/v1/streams/t/documents", DocumentJson(PlantedId(i), texts[i], 10)).first,
        200);
  }
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/a").first, 404);
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/b").first, 404);
  const std::string last = Call("GET", "/v1/streams/t/documents/" + PlantedId(3)).second;
  std::string quoted_last;
  AppendJsonString(&quoted_last, texts[3]);
  EXPECT_THAT(last, HasSubstr(",\"text\":" + quoted_last + "}"));
  StopServer();
  StartServer();
  EXPECT_EQ(Call("GET", "/v1/streams/t/documents/" + PlantedId(3)).second, last);
  // A stream without texts refuses texts=true.
  ASSERT_EQ(Call("PUT", "/v1/streams/plain", "{}").first, 201);
  auto [refused, refused_body] =
      Call("POST", "/v1/streams/plain/documents?texts=true", DocumentJson("a", texts[0], 1));
  EXPECT_EQ(refused, 409);
  EXPECT_THAT(refused_body, HasSubstr("keep_texts"));
  EXPECT_EQ(Call("GET", "/v1/streams/plain/documents/a").first, 404);
  EXPECT_EQ(Call("PUT", "/v1/streams/bad", R"({"keep_texts": 1})").first, 400);
}

TEST_F(ServerTest, JsonLinesBatchesAnswerInOrderAndABadLineStoresNothing) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(3, 32);
  std::string body = DocumentJson("x", texts[0], 1) + "\n" + DocumentJson("y", texts[1], 2) +
                     "\n\n" + DocumentJson("z", texts[0], 3) + "\n";
  auto client = NewClient();
  auto res = client->Post("/v1/streams/s/documents", body, "application/x-ndjson");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/x-ndjson");
  std::istringstream lines(res->body);
  std::string line;
  std::vector<std::string> answers;
  while (std::getline(lines, line)) answers.push_back(line);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_THAT(answers[0], HasSubstr("\"id\":\"x\",\"status\":\"new\""));
  EXPECT_THAT(answers[1], HasSubstr("\"id\":\"y\",\"status\":\"new\""));
  EXPECT_THAT(answers[2], HasSubstr("\"id\":\"z\",\"status\":\"near_duplicate\",\"of\":\"x\""));
  auto [bad, message] =
      Call("POST", "/v1/streams/s/documents",
           DocumentJson("p", texts[2], 4) + "\n{\"id\": \"q\"}\n", "application/x-ndjson");
  EXPECT_EQ(bad, 400);
  EXPECT_THAT(message, HasSubstr("line 2: field \\\"text\\\" is missing"));
  EXPECT_EQ(Call("GET", "/v1/streams/s/documents/p").first, 404);
}

TEST_F(ServerTest, BadRequestsGetTheRightStatusAndNameTheField) {
  ServiceOptions options;
  options.max_body_mb = 1;
  StartServer(options);
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  struct Case {
    std::string method, path, body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"PUT", "/v1/streams/bad.name", "{}", 400, "stream name"},
      {"PUT", "/v1/streams/" + std::string(65, 'a'), "{}", 400, "stream name"},
      {"PUT", "/v1/streams/t", R"({"method": "cosine"})", 400, "method"},
      {"PUT", "/v1/streams/t", R"({"threshold": 2})", 400, "threshold (2"},
      {"PUT", "/v1/streams/t", R"({"colour": 1})", 400, "colour"},
      {"PUT", "/v1/streams/t", R"({"window_seconds": "week"})", 400, "window_seconds"},
      {"POST", "/v1/streams/s/documents", "{not json", 400, "JSON"},
      {"POST", "/v1/streams/s/documents", "[1, 2]", 400, "object"},
      {"POST", "/v1/streams/s/documents", R"({"id": "a"})", 400, "text"},
      {"POST", "/v1/streams/s/documents", R"({"id": "a", "text": 5})", 400, "text"},
      {"POST", "/v1/streams/s/documents", R"({"text": "t"})", 400, "id"},
      {"POST", "/v1/streams/s/documents", R"({"id": 7, "text": "t"})", 400, "id"},
      {"POST", "/v1/streams/s/documents", R"({"id": "a", "text": "t", "time": "yesterday"})", 400,
       "time"},
      {"POST", "/v1/streams/s/documents", R"({"id": "a", "text": "t", "time": 1.5})", 400, "time"},
      {"POST", "/v1/streams/none/documents", R"({"id": "a", "text": "t"})", 404, "none"},
      {"GET", "/v1/streams/s/documents/missing", "", 404, "missing"},
      {"GET", "/v2/anything", "", 404, "route"},
      {"GET", "/v1/streams/s/documents", "", 405, "GET"},
      {"PATCH", "/v1/streams/s", "{}", 405, "PATCH"},
      {"POST", "/healthz", "", 405, "POST"},
      {"POST", "/v1/streams/s/documents", std::string(2 << 20, ' '), 413, "max-body-mb"},
  };
  for (const Case& c : cases) {
    auto [status, body] = Call(c.method, c.path, c.body);
    EXPECT_EQ(status, c.status) << c.method << " " << c.path.substr(0, 80) << ": " << body;
    EXPECT_THAT(body, HasSubstr(c.message)) << c.method << " " << c.path.substr(0, 80);
  }
  // Nothing reached the file system for the bad names.
  EXPECT_FALSE(std::filesystem::exists(dir_.Path("streams/bad.name")));
}

TEST_F(ServerTest, BearerTokenIsRequiredExceptForProbes) {
  ServiceOptions options;
  options.token = "s3cret-token";
  StartServer(options);
  httplib::Client anonymous("127.0.0.1", port_);
  auto res = anonymous.Get("/v1/streams/s");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_THAT(res->body, HasSubstr("\"code\":\"unauthenticated\""));
  httplib::Client wrong("127.0.0.1", port_);
  wrong.set_bearer_token_auth("s3cret-tokeN");
  EXPECT_EQ(wrong.Put("/v1/streams/s", "{}", "application/json")->status, 401);
  EXPECT_EQ(anonymous.Get("/metrics")->status, 401);
  EXPECT_EQ(anonymous.Get("/healthz")->status, 200);
  EXPECT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);  // with the token
}

TEST_F(ServerTest, MetricsCountRequestsAndWindows) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/m", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(3, 33);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        Call("POST", "/v1/streams/m/documents", DocumentJson(PlantedId(i), texts[i], i)).first,
        200);
  }
  Call("GET", "/v1/streams/m/documents/absent");
  // A request is counted just after its response is sent, by a server
  // thread that may run after the client's next request: wait until every
  // earlier request is counted.
  std::string metrics;
  for (int i = 0; i < 500; ++i) {
    auto [status, body] = Call("GET", "/metrics");
    ASSERT_EQ(status, 200);
    metrics = body;
    if (metrics.find("method=\"GET\",status=\"404\"} 1") != std::string::npos &&
        metrics.find("method=\"POST\",status=\"200\"} 3") != std::string::npos &&
        metrics.find("le=\"+Inf\"} 3") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(metrics,
              HasSubstr("neardup_http_requests_total{route=\"/v1/streams/{name}/documents\","
                        "method=\"POST\",status=\"200\"} 3\n"));
  EXPECT_THAT(metrics, HasSubstr("route=\"/v1/streams/{name}/documents/{id}\",method=\"GET\","
                                 "status=\"404\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("neardup_stream_documents{stream=\"m\"} 3\n"));
  EXPECT_THAT(metrics, HasSubstr("neardup_http_request_duration_seconds_bucket{route=\"/v1/streams/"
                                 "{name}/documents\",le=\"+Inf\"} 3\n"));
  // Every line is a comment or `name{labels} value` (the text format).
  const std::regex sample(R"(^[a-z_]+(\{([a-z_]+="[^"]*",?)*\})? [0-9.e+-]+$)");
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
  }
}

TEST_F(ServerTest, ARestartedServerKeepsEveryAnswer) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/r", R"({"method": "simhash", "max_distance": 4})").first, 201);
  const std::vector<std::string> texts = PlantedTexts(30, 34);
  std::vector<std::string> answers;
  for (size_t i = 0; i < texts.size(); ++i) {
    answers.push_back(
        Call("POST", "/v1/streams/r/documents", DocumentJson(PlantedId(i), texts[i], 0)).second);
  }
  StopServer();
  StartServer();
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(Call("GET", "/v1/streams/r/documents/" + PlantedId(i)).second, answers[i]);
  }
  EXPECT_EQ(Call("PUT", "/v1/streams/r", R"({"method": "simhash", "max_distance": 4})").first, 200);
}

// Session 16: ServiceOptions::snapshot_log_bytes (`--snapshot-log-mb`)
// reaches every stream, created or recovered: a growing window's log is
// rolled over into many files, and a restart with the same setting replays
// them all. 0 is refused by Bind.
TEST_F(ServerTest, TheSnapshotLogLengthRollsTheLogsAndARestartKeepsEveryAnswer) {
  ServiceOptions options;
  options.snapshot_log_bytes = 16 << 10;
  StartServer(options);
  ASSERT_EQ(Call("PUT", "/v1/streams/g", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(120, 36);
  std::vector<std::string> answers;
  for (size_t begin = 0; begin < texts.size(); begin += 20) {
    std::string body;
    for (size_t i = begin; i < begin + 20; ++i)
      body += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
    auto [status, batch] = Call("POST", "/v1/streams/g/documents", body, "application/x-ndjson");
    ASSERT_EQ(status, 200) << batch;
    std::istringstream lines(batch);
    for (std::string line; std::getline(lines, line);) answers.push_back(line);
  }
  ASSERT_EQ(answers.size(), texts.size());
  auto CountLogs = [&] {
    size_t logs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/streams/g")) {
      logs += entry.path().filename().string().rfind("log-", 0) == 0;
    }
    return logs;
  };
  // ~60 KiB of records (the default would keep one log).
  EXPECT_GE(CountLogs(), 3u);
  std::vector<std::string> stored;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto [status, answer] = Call("GET", "/v1/streams/g/documents/" + PlantedId(i));
    ASSERT_EQ(status, 200) << answer;
    EXPECT_THAT(answers[i], HasSubstr("\"id\":\"" + PlantedId(i) + "\""));
    stored.push_back(answer);
  }
  StopServer();
  StartServer(options);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(Call("GET", "/v1/streams/g/documents/" + PlantedId(i)).second, stored[i]);
  }
  StopServer();
  options.snapshot_log_bytes = 0;
  options.data_dir = dir_.path();
  options.port = 0;
  Service refused(options);
  Result<int> bound = refused.Bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bound.status().message(), HasSubstr("snapshot_log_bytes (0) must be in [1, "));
}

// A full disk (simulated by RLIMIT_FSIZE, SIGXFSZ ignored) gives 507 and
// stores nothing; once there is room the same request succeeds.
TEST_F(ServerTest, AFullDiskGives507AndTheStreamStaysConsistent) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/f", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(2, 38);
  ASSERT_EQ(Call("POST", "/v1/streams/f/documents", DocumentJson("a", texts[0], 1)).first, 200);
  rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old_limit;
  limit.rlim_cur = 1000;  // below the log's next record
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  auto [status, body] = Call("POST", "/v1/streams/f/documents", DocumentJson("b", texts[1], 2));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(status, 507) << body;
  EXPECT_THAT(body, HasSubstr("\"code\":\"resource_exhausted\""));
  EXPECT_EQ(Call("GET", "/v1/streams/f/documents/b").first, 404);
  EXPECT_EQ(Call("POST", "/v1/streams/f/documents", DocumentJson("b", texts[1], 2)).first, 200);
  StopServer();
  StartServer();
  EXPECT_EQ(Call("GET", "/v1/streams/f/documents/b").first, 200);
}

// Four clients on their own connections post one sequence in turn (document
// i by client i % 4, each waiting for i - 1's answer): the answers equal the
// batch leader clustering of the sequence.
TEST_F(ServerTest, ConcurrentClientsInAFixedOrderMatchTheBatchLeaderRule) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/c", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(160, 35);
  Result<std::vector<uint64_t>> cluster_of = BatchLeaders(texts, {});
  ASSERT_TRUE(cluster_of.ok());
  std::vector<std::string> answers(texts.size());
  std::mutex mutex;
  std::condition_variable turn_changed;
  size_t turn = 0;
  constexpr int kClients = 4;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto client = NewClient();
      for (size_t i = c; i < texts.size(); i += kClients) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          turn_changed.wait(lock, [&] { return turn == i; });
        }
        auto res = client->Post("/v1/streams/c/documents", DocumentJson(PlantedId(i), texts[i], 0),
                                "application/json");
        {
          std::lock_guard<std::mutex> lock(mutex);
          answers[i] = res ? res->body : "no answer";
          ++turn;
        }
        turn_changed.notify_all();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  size_t duplicates = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const uint64_t leader = (*cluster_of)[i];
    if (leader == i) {
      EXPECT_THAT(answers[i], HasSubstr("\"status\":\"new\"")) << i;
    } else {
      ++duplicates;
      EXPECT_THAT(answers[i],
                  HasSubstr("\"status\":\"near_duplicate\",\"of\":\"" + PlantedId(leader) + "\""))
          << i;
    }
  }
  EXPECT_GT(duplicates, 5u);
}

// Four clients post the same documents at once in different orders: every
// client gets the same answer per id (one decision, idempotent retries), and
// every near-duplicate points at a kept document.
TEST_F(ServerTest, RacingRetriesOfTheSameIdsGetOneAnswer) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/race", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(40, 36);
  constexpr int kClients = 4;
  std::vector<std::vector<std::string>> answers(kClients, std::vector<std::string>(texts.size()));
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto client = NewClient();
      for (size_t k = 0; k < texts.size(); ++k) {
        const size_t i = c % 2 == 0 ? k : texts.size() - 1 - k;
        auto res = client->Post("/v1/streams/race/documents",
                                DocumentJson(PlantedId(i), texts[i], 0), "application/json");
        answers[c][i] = res ? res->body : "no answer";
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (size_t i = 0; i < texts.size(); ++i) {
    for (int c = 1; c < kClients; ++c) EXPECT_EQ(answers[c][i], answers[0][i]) << i;
    const std::string stored = Call("GET", "/v1/streams/race/documents/" + PlantedId(i)).second;
    EXPECT_EQ(stored, answers[0][i]);
    const size_t of = stored.find("\"of\":\"");
    if (of != std::string::npos) {
      const std::string leader = stored.substr(of + 6, stored.find('"', of + 6) - of - 6);
      EXPECT_THAT(Call("GET", "/v1/streams/race/documents/" + leader).second,
                  HasSubstr("\"status\":\"new\""));
    }
  }
}

}  // namespace
}  // namespace neardup::server

namespace neardup::server {
namespace {

TEST(ServeCommandTest, RefusesAnOpenAddressWithoutAToken) {
  TempDir dir;
  ServeProcess serve({"--listen", "0.0.0.0:0", "--data-dir", dir.path()});
  EXPECT_THAT(serve.ReadUntil("\n"), HasSubstr("without --token-file"));
  const int status = serve.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

TEST(ServeCommandTest, SigtermFinishesTheRequestInFlightAndExitsZero) {
  TempDir dir;
  ServeProcess serve({"--listen", "127.0.0.1:0", "--data-dir", dir.path()});
  const std::string banner = serve.ReadUntil("data in");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(banner, match, std::regex("listening on 127.0.0.1:([0-9]+)")))
      << banner;
  const int port = std::stoi(match[1]);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  // The banner comes before recovery ends (routes answer 503 until then):
  // wait for /readyz, bounded.
  for (int i = 0; i < 500; ++i) {
    httplib::Result ready = client.Get("/readyz");
    if (ready && ready->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(client.Put("/v1/streams/s", "{}", "application/json")->status, 201);
  const std::vector<std::string> texts = PlantedTexts(150, 37);
  std::string batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    batch += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
  }
  // SIGTERM must land while the request is in flight, whatever the load:
  // the request goes out on a raw socket in two parts, and SIGTERM is sent
  // once the server holds the connection (/metrics counts it) with half of
  // the body read, so the server cannot have answered yet. (The test used to
  // sleep 50 ms after starting the POST on a thread; on a loaded machine the
  // signal could come before the POST connected, or after it was answered.)
  // Open connections as /metrics counts them (its own included), once they
  // are `expected` (false after ~10 s).
  auto wait_for_connections = [&](int expected) {
    const std::string line = "\nneardup_http_open_connections " + std::to_string(expected) + "\n";
    for (int i = 0; i < 1000; ++i) {
      httplib::Result metrics = client.Get("/metrics");
      if (metrics && metrics->body.find(line) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  // The earlier requests' connections are gone (so that 2 below means the
  // POST's).
  ASSERT_TRUE(wait_for_connections(1));
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const timeval timeout{60, 0};
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  const std::string request =
      "POST /v1/streams/s/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/x-ndjson\r\nContent-Length: " +
      std::to_string(batch.size()) + "\r\n\r\n" + batch;
  const size_t first_part = request.size() / 2;
  auto send_all = [&](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(sock, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  };
  ASSERT_TRUE(send_all(std::string_view(request).substr(0, first_part)));
  ASSERT_TRUE(wait_for_connections(2)) << "the server never took the POST's connection";
  ::kill(serve.pid(), SIGTERM);
  ASSERT_TRUE(send_all(std::string_view(request).substr(first_part)));
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(sock, buffer, sizeof(buffer), 0)) > 0) answer.append(buffer, n);
  ::close(sock);
  EXPECT_EQ(answer.substr(0, answer.find("\r\n")), "HTTP/1.1 200 OK");
  const std::string body = answer.substr(std::min(answer.size(), answer.find("\r\n\r\n") + 4));
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), 150);
  const int status = serve.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_THAT(serve.ReadUntil("stopped"), HasSubstr("POST /v1/streams/s/documents 200"));
  // Everything answered is on disk.
  auto stream = NearDuplicateStream::OpenExisting(dir.Path("streams/s"));
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ((*stream)->Stats().documents, 150u);
}

}  // namespace
}  // namespace neardup::server
