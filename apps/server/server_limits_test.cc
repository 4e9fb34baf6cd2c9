// The connection limits of the service (HttpServer): the connection cap,
// slow clients timing out, and Stop() not waiting for idle keep-alive
// connections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "http_server.h"
#include "server_test_util.h"

namespace neardup::server {
namespace {

using ::testing::HasSubstr;

using test_util::RawConnection;

class ServerLimitsTest : public test_util::ServerTest {};

TEST_F(ServerLimitsTest, ConnectionsOverTheCapGet503AndTheOthersGoOn) {
  ServiceOptions options;
  options.max_connections = 2;
  StartServer(options);
  // Two keep-alive connections, each answered once and held open.
  httplib::Client first("127.0.0.1", port_);
  httplib::Client second("127.0.0.1", port_);
  first.set_keep_alive(true);
  second.set_keep_alive(true);
  // (The start-up probe's connection may take a moment to be seen closed.)
  auto served = [](httplib::Client& client) {
    for (int i = 0; i < 200; ++i) {
      httplib::Result res = client.Get("/healthz");
      if (res && res->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(served(first));
  ASSERT_TRUE(served(second));
  // A third is refused at once, without being read.
  RawConnection third(port_);
  ASSERT_TRUE(third.connected());
  const std::string refused = third.ReadAll(std::chrono::seconds(10));
  EXPECT_THAT(refused, HasSubstr("HTTP/1.1 503"));
  EXPECT_THAT(refused, HasSubstr("\"code\":\"too_many_connections\""));
  EXPECT_TRUE(third.closed_by_server());
  // The two go on.
  EXPECT_EQ(first.Get("/healthz")->status, 200);
  EXPECT_EQ(second.Get("/healthz")->status, 200);
  // Once one closes, a new connection is served (the server notices the
  // close within its keep-alive wait).
  second.stop();
  httplib::Client fresh("127.0.0.1", port_);
  EXPECT_TRUE(served(fresh));
  EXPECT_THAT(first.Get("/metrics")->body, HasSubstr("neardup_http_rejected_connections_total "));
}

// A client that makes one request per connection (cpp-httplib's default:
// "Connection: close") and opens the next as soon as it has the answer
// never holds more than one connection, so the cap must never refuse it,
// however long the server's threads take between their answer and their
// close. Here they take 300 ms (on_answered runs there, after the answer):
// before session 11 a connection counted until its thread had closed it,
// so the third request got 503, as the collection route test's readers did
// under load (session 8).
TEST(HttpServerCapTest, OneConnectionAtATimeIsNeverRefused) {
  HttpServer::Handlers handlers;
  handlers.on_request = [](HttpRequest&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  };
  handlers.on_answered = [](const HttpRequest&, const httplib::Response&, double) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  };
  HttpServer server(/*threads=*/6, /*max_connections=*/2, handlers);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread listener([&] { server.listen_after_bind(); });
  for (int i = 0; i < 5; ++i) {
    httplib::Client client("127.0.0.1", port);
    httplib::Result res = client.Get("/");
    // No ASSERT here: returning with the listener joinable would end the
    // whole binary (~thread) instead of failing this test.
    EXPECT_TRUE(res) << i << ": " << httplib::to_string(res.error());
    if (!res) break;
    EXPECT_EQ(res->status, 200) << i << ": " << res->body;
  }
  EXPECT_EQ(server.rejected_connections(), 0u);
  server.stop();
  listener.join();
}

TEST_F(ServerLimitsTest, ASlowClientTimesOut) {
  ServiceOptions options;
  options.read_timeout_seconds = 1;
  StartServer(options);
  RawConnection slow(port_);
  ASSERT_TRUE(slow.connected());
  // Half a request line, then nothing.
  slow.Send(
      "POST /v1/streams/s/documents HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"id\"");
  const auto start = std::chrono::steady_clock::now();
  slow.ReadAll(std::chrono::seconds(20));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(slow.closed_by_server());
  // The 1 s read timeout, not the 5 s keep-alive wait after it.
  EXPECT_LT(waited, 4.0);
  // The server still serves others.
  EXPECT_EQ(Call("GET", "/healthz").first, 200);
}

TEST_F(ServerLimitsTest, StopDoesNotWaitForIdleKeepAliveConnections) {
  StartServer();
  httplib::Client idle("127.0.0.1", port_);
  idle.set_keep_alive(true);
  ASSERT_EQ(idle.Get("/healthz")->status, 200);
  const auto start = std::chrono::steady_clock::now();
  StopServer();
  const double stopped =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // cpp-httplib's own loop waits out the 5 s keep-alive timeout.
  EXPECT_LT(stopped, 2.5);
}

}  // namespace
}  // namespace neardup::server
