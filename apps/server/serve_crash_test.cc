// The crash test through HTTP (issue 14): `neardup serve` is killed with
// SIGKILL at random moments, 24 times, while four clients post documents
// concurrently on keep-alive connections and retry what was not answered
// (idempotent retries). After each restart every answer acknowledged so far
// must be served unchanged; at the end every answer must equal the one an
// uninterrupted server gives.
//
// Why an uninterrupted run is a valid oracle although the clients
// interleave at random: documents are dealt to clients by connected
// component of the near-duplicate graph, each client posting its own in
// index order. A document's answer depends only on the documents it is
// similar to (all in its component: same client, earlier in index order),
// so every interleaving gives the answers of the index-order run.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "neardup/clustering.h"
#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::BatchClusters;
using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::TempDir;

// `neardup serve` on an ephemeral port, its stderr in a file (the request
// log is long: a pipe nobody drains would block the server).
class ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, const std::string& log_path, bool sync = true) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      ::execl(NEARDUP_CLI, NEARDUP_CLI, "serve", "--listen", "127.0.0.1:0", "--data-dir",
              data_dir.c_str(), sync ? "--log-format=text" : "--no-fsync",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // The banner names the port; /readyz says recovery has finished.
    const std::regex banner("listening on 127\\.0\\.0\\.1:([0-9]+)");
    for (int i = 0; i < 2000 && port_ == 0; ++i) {
      std::ifstream in(log_path);
      std::stringstream text;
      text << in.rdbuf();
      std::smatch match;
      const std::string log = text.str();
      if (std::regex_search(log, match, banner)) port_ = std::stoi(match[1]);
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    httplib::Client client("127.0.0.1", port_);
    for (int i = 0; i < 2000 && port_ != 0; ++i) {
      httplib::Result ready = client.Get("/readyz");
      if (ready && ready->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    port_ = 0;
  }
  ~ServerProcess() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }  // 0: it did not start

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST(ServeCrashTest, KilledServersKeepEveryAcknowledgedAnswer) {
  TempDir dir;
  const std::vector<std::string> texts = PlantedTexts(600, 51);
  Result<std::vector<uint64_t>> component = BatchClusters(texts, {}, ClusterRule::kComponents);
  ASSERT_TRUE(component.ok()) << component.status();

  // The uninterrupted run: index order, one batch (answered line by line,
  // as single posts are).
  std::vector<std::string> expected;
  {
    ServerProcess server(dir.Path("reference"), dir.Path("reference.log"), /*sync=*/false);
    ASSERT_NE(server.port(), 0);
    httplib::Client client("127.0.0.1", server.port());
    ASSERT_EQ(client.Put("/v1/streams/s", "{}", "application/json")->status, 201);
    std::string batch;
    for (size_t i = 0; i < texts.size(); ++i) {
      batch += DocumentJson(PlantedId(i), texts[i], 1000 + i) + "\n";
    }
    httplib::Result res = client.Post("/v1/streams/s/documents", batch, "application/x-ndjson");
    ASSERT_TRUE(res && res->status == 200);
    std::istringstream lines(res->body);
    for (std::string line; std::getline(lines, line);) expected.push_back(line + "\n");
    ASSERT_EQ(expected.size(), texts.size());
  }
  size_t duplicates = 0;
  for (const std::string& answer : expected)
    duplicates += answer.find("near_duplicate") != std::string::npos;
  ASSERT_GT(duplicates, 20u);

  const std::string data = dir.Path("crashed");
  auto server = std::make_unique<ServerProcess>(data, dir.Path("serve-0.log"));
  ASSERT_NE(server->port(), 0);
  {
    httplib::Client client("127.0.0.1", server->port());
    ASSERT_EQ(client.Put("/v1/streams/s", "{}", "application/json")->status, 201);
  }
  std::atomic<int> port{server->port()};
  std::mutex mutex;
  std::vector<std::string> acknowledged(texts.size());  // guarded by mutex
  std::atomic<size_t> answered{0};
  std::atomic<int> unexpected{0};
  // Set while the test checks a restarted server: the count of answers
  // between kills then stays small, so every kill lands among the posts.
  std::atomic<bool> paused{false};
  constexpr int kClients = 4;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      int client_port = 0;
      std::unique_ptr<httplib::Client> client;
      for (size_t i = 0; i < texts.size(); ++i) {
        if ((*component)[i] % kClients != static_cast<uint64_t>(c)) continue;
        while (true) {
          while (paused.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (client_port != port.load()) {
            client_port = port.load();
            client = std::make_unique<httplib::Client>("127.0.0.1", client_port);
            client->set_connection_timeout(1, 0);
            client->set_read_timeout(10, 0);
          }
          httplib::Result res =
              client->Post("/v1/streams/s/documents",
                           DocumentJson(PlantedId(i), texts[i], 1000 + i), "application/json");
          if (res && res->status == 200) {
            std::lock_guard<std::mutex> lock(mutex);
            acknowledged[i] = res->body;
            ++answered;
            break;
          }
          // Killed mid-request, or refused while down or recovering: retry.
          if (res && res->status != 503) ++unexpected;
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
    });
  }

  std::mt19937 rng(20261126);
  constexpr int kKills = 24;
  for (int kill = 1; kill <= kKills; ++kill) {
    // Kill after a random number of answers (or a random time), so that the
    // kills land among the posts, at any point of a request.
    const size_t target = answered.load() + 3 + rng() % 20;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (answered.load() < target && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100 + rng() % 2000));
    }
    server->Kill();
    paused = true;
    EXPECT_LT(answered.load(), texts.size()) << "kill " << kill << " came after the last post";
    std::vector<std::string> before;
    {
      std::lock_guard<std::mutex> lock(mutex);
      before = acknowledged;
    }
    server =
        std::make_unique<ServerProcess>(data, dir.Path("serve-" + std::to_string(kill) + ".log"));
    ASSERT_NE(server->port(), 0) << "restart " << kill;
    port = server->port();
    httplib::Client client("127.0.0.1", server->port());
    for (size_t i = 0; i < texts.size(); ++i) {
      if (before[i].empty()) continue;
      httplib::Result res = client.Get("/v1/streams/s/documents/" + PlantedId(i));
      ASSERT_TRUE(res) << "restart " << kill;
      EXPECT_EQ(res->body, before[i]) << "restart " << kill << ", document " << i;
    }
    paused = false;
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(answered.load(), texts.size());
  httplib::Client client("127.0.0.1", server->port());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(acknowledged[i], expected[i]) << i;
    httplib::Result res = client.Get("/v1/streams/s/documents/" + PlantedId(i));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body, expected[i]) << i;
  }
}

}  // namespace
}  // namespace neardup::server
