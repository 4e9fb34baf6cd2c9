// Test helpers of the service: the real server on an ephemeral loopback
// port with a real HTTP client (ServerTest), and `neardup serve` as a child
// process (ServeProcess).
#ifndef NEARDUP_APPS_SERVER_SERVER_TEST_UTIL_H_
#define NEARDUP_APPS_SERVER_SERVER_TEST_UTIL_H_

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "neardup/json_writer.h"
#include "neardup/stream.h"
#include "service.h"
#include "support/planted_corpus.h"
#include "support/temp_dir.h"

namespace neardup::server::test_util {

using ::testing::HasSubstr;

// The service's tests use the public API only, as the service does (the
// library's src/ test utilities are out of reach; scripts/check_layering.sh).

// The temporary directory and the planted corpus with its batch oracle
// (tests/support/), under the names the tests use.
using test_support::BatchClusters;
using test_support::BatchLeaders;
using test_support::PlantedId;
using test_support::PlantedTexts;
using test_support::TempDir;

// Runs a shell command; its exit status (as pclose gives it) and stdout.
inline std::pair<int, std::string> RunCommand(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  return {::pclose(pipe), out};
}

inline std::string DocumentJson(const std::string& id, const std::string& text, int64_t time) {
  std::string out = "{\"id\":";
  AppendJsonString(&out, id);
  out += ",\"text\":";
  AppendJsonString(&out, text);
  out += ",\"time\":" + std::to_string(time) + "}";
  return out;
}

class ServerTest : public ::testing::Test {
 protected:
  void TearDown() override { StopServer(); }

  void StartServer(ServiceOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    options.data_dir = dir_.path();
    options.log_requests = false;
    options.threads = 16;
    token_ = options.token;
    service_ = std::make_unique<Service>(options);
    Result<int> port = service_->Bind();
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = std::thread([this] { run_status_ = service_->Run(); });
    for (int i = 0; i < 500; ++i) {
      auto res = NewClient()->Get("/readyz");
      if (res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the server did not become ready";
  }

  void StopServer() {
    if (!service_) return;
    service_->Stop();
    thread_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_;
    service_.reset();
  }

  std::unique_ptr<httplib::Client> NewClient() {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
    if (!token_.empty()) client->set_bearer_token_auth(token_.c_str());
    client->set_read_timeout(30, 0);
    return client;
  }

  // The status and body of a request; the body of an error is checked to be
  // {"error": ..., "code": ...}.
  std::pair<int, std::string> Call(const std::string& method, const std::string& path,
                                   const std::string& body = "",
                                   const std::string& type = "application/json") {
    auto client = NewClient();
    httplib::Result res = method == "GET"      ? client->Get(path)
                          : method == "DELETE" ? client->Delete(path)
                          : method == "PUT"    ? client->Put(path, body, type)
                          : method == "PATCH"  ? client->Patch(path, body, type)
                                               : client->Post(path, body, type);
    if (!res) return {-1, httplib::to_string(res.error())};
    if (res->status >= 400) {
      EXPECT_THAT(res->body, HasSubstr("\"error\":")) << res->body;
      EXPECT_THAT(res->body, HasSubstr("\"code\":")) << res->body;
    }
    return {res->status, res->body};
  }

  TempDir dir_;
  std::unique_ptr<Service> service_;
  std::thread thread_;
  Status run_status_;
  int port_ = 0;
  std::string token_;
};

// A raw TCP connection to the server (to hold a connection open, to send
// part of a request, or bytes no HTTP client would send).
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  bool connected() const { return connected_; }
  void Send(const std::string& bytes) {
    EXPECT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Sends a request the server may refuse before it has read all of it (a
  // malformed head, a body over the limit). The server answers, drains
  // what keeps arriving while it arrives (HttpServer::Connection::Close)
  // and closes; a client slower than that drain -- descheduled on a loaded
  // machine -- has the rest of its send cut off by the close (EPIPE or a
  // reset), as RFC 9112 9.5 tells clients to expect of an early answer.
  // The answer is then still there to read. Returns the bytes sent.
  size_t SendMayBeRefused(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        EXPECT_TRUE(errno == EPIPE || errno == ECONNRESET) << std::strerror(errno);
        break;
      }
      sent += static_cast<size_t>(n);
    }
    return sent;
  }
  // Everything until the server closes (or `timeout` passes).
  std::string ReadAll(std::chrono::seconds timeout) { return ReadUntil("", timeout); }
  // What arrives until `text` is among it (empty: until the server closes),
  // or `timeout` passes.
  std::string ReadUntil(const std::string& text, std::chrono::seconds timeout) {
    timeval tv{static_cast<time_t>(timeout.count()), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string out;
    char buffer[4096];
    ssize_t n = -1;
    while ((text.empty() || out.find(text) == std::string::npos) &&
           (n = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0) {
      out.append(buffer, static_cast<size_t>(n));
    }
    if (text.empty()) closed_ = n == 0;
    return out;
  }
  bool closed_by_server() const { return closed_; }

 private:
  int fd_;
  bool connected_ = false;
  bool closed_ = false;
};

// `neardup serve` as a process: its stderr and exit status.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(NEARDUP_CLI));
      argv.push_back(const_cast<char*>("serve"));
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(NEARDUP_CLI, argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    stderr_fd_ = fds[0];
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
    ::close(stderr_fd_);
  }
  // Reads stderr until `text` appears (or the process closes it); returns
  // everything read so far.
  std::string ReadUntil(const std::string& text) {
    char buffer[4096];
    while (output_.find(text) == std::string::npos) {
      const ssize_t n = ::read(stderr_fd_, buffer, sizeof(buffer));
      if (n <= 0) break;
      output_.append(buffer, static_cast<size_t>(n));
    }
    return output_;
  }
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  std::string output_;
};

}  // namespace neardup::server::test_util

#endif  // NEARDUP_APPS_SERVER_SERVER_TEST_UTIL_H_
