#include "http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

namespace neardup::server {
namespace {

// Set on the accepting thread while it runs a connection over the cap.
thread_local bool reject_connection = false;

// Waits for `events` on `sock` for at most `timeout_ms`; false on timeout or
// error.
bool Poll(int sock, short events, int timeout_ms) {
  pollfd fd{sock, events, 0};
  while (true) {
    const int n = ::poll(&fd, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

int Milliseconds(time_t seconds, time_t microseconds) {
  return static_cast<int>(seconds * 1000 + microseconds / 1000);
}

void AddressOf(const sockaddr_storage& address, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace

// A connection's socket as httplib's Stream: reads are buffered (httplib
// reads request lines a byte at a time), every wait is bounded by the
// server's read or write timeout (slow clients time out).
class HttpServer::SocketStream : public httplib::Stream {
 public:
  SocketStream(socket_t sock, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool buffered() const { return begin_ < end_; }
  // A read waited out the read timeout: the connection is to be closed (a
  // slow client does not get another keep-alive wait).
  bool timed_out() const { return timed_out_; }

  bool is_readable() const override { return buffered() || Poll(sock_, POLLIN, read_timeout_ms_); }
  bool is_writable() const override { return Poll(sock_, POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (!buffered()) {
      if (size >= sizeof(buffer_)) return Receive(ptr, size);
      const ssize_t n = Receive(buffer_, sizeof(buffer_));
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  // Sends at once when the socket takes it (the usual case: no poll call
  // per write), else waits up to the write timeout.
  ssize_t write(const char* ptr, size_t size) override {
    while (true) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (!Poll(sock_, POLLOUT, write_timeout_ms_)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      AddressOf(address, ip, port);
    }
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      AddressOf(address, ip, port);
    }
  }
  socket_t socket() const override { return sock_; }

 private:
  // Receives what has arrived (no poll call when a request is already
  // there, the usual case on a busy keep-alive connection), else waits up to
  // the read timeout.
  ssize_t Receive(char* ptr, size_t size) {
    while (true) {
      const ssize_t n = ::recv(sock_, ptr, size, MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (!Poll(sock_, POLLIN, read_timeout_ms_)) {
        timed_out_ = true;
        return -1;
      }
    }
  }

  const socket_t sock_;
  const int read_timeout_ms_;
  const int write_timeout_ms_;
  char buffer_[16384];
  size_t begin_ = 0;
  size_t end_ = 0;
  bool timed_out_ = false;
};

// The pool, with the cap applied when a connection is queued (not when a
// thread takes it: a queued connection already waits unserved).
class HttpServer::ConnectionQueue : public httplib::TaskQueue {
 public:
  ConnectionQueue(HttpServer& server, size_t threads) : server_(server), pool_(threads) {}

  void enqueue(std::function<void()> fn) override {
    if (server_.open_.load() >= server_.max_connections_) {
      reject_connection = true;
      fn();  // Reject: a non-blocking write and a close
      reject_connection = false;
      return;
    }
    ++server_.open_;
    pool_.enqueue([this, fn = std::move(fn)] {
      fn();
      --server_.open_;
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  HttpServer& server_;
  httplib::ThreadPool pool_;
};

HttpServer::HttpServer(size_t threads, size_t max_connections) : max_connections_(max_connections) {
  new_task_queue = [this, threads] { return new ConnectionQueue(*this, threads); };
}

bool HttpServer::RaiseListenBacklog() {
  const socket_t sock = svr_sock_.load();
  return sock != INVALID_SOCKET && ::listen(sock, SOMAXCONN) == 0;
}

void HttpServer::Reject(socket_t sock) {
  ++rejected_;
  const std::string body =
      "{\"error\":\"too many open connections (" + std::to_string(max_connections_) +
      ", --max-connections); retry later\",\"code\":\"too_many_connections\"}\n";
  const std::string answer =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + body;
  // A fresh socket's send buffer takes this at once; never wait on the
  // accepting thread.
  (void)::send(sock, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(sock, SHUT_WR);
  // Unread request bytes would make close() send a reset, which can discard
  // the answer at the client: take what has arrived.
  char discard[4096];
  while (::recv(sock, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
  }
  ::close(sock);
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  if (reject_connection) {
    Reject(sock);
    return true;
  }
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SocketStream stream(sock, Milliseconds(read_timeout_sec_, read_timeout_usec_),
                      Milliseconds(write_timeout_sec_, write_timeout_usec_));
  // Waits for the next request of a keep-alive connection, in short slices
  // so that Stop() ends idle connections promptly. A request that has
  // arrived is served even after Stop(): it is in flight (under load a pool
  // thread may reach a connection accepted before Stop() only after it, with
  // the client's request already waiting; it used to be closed unanswered).
  auto stopped = [&] { return svr_sock_.load() == INVALID_SOCKET; };
  auto next_request = [&] {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (true) {
      if (stream.buffered() || Poll(sock, POLLIN, 0)) return true;
      if (stopped()) return false;
      if (Poll(sock, POLLIN, 50)) return true;
      if (Clock::now() >= deadline) return false;
    }
  };
  bool ok = false;
  for (size_t left = keep_alive_max_count_; left > 0 && next_request(); --left) {
    bool connection_closed = false;
    // After Stop() the answer says Connection: close, so a client that keeps
    // sending cannot hold the connection (and the exit) open.
    ok = process_request(stream, /*close_connection=*/left == 1 || stopped(), connection_closed,
                         nullptr);
    if (!ok || connection_closed || stream.timed_out()) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace neardup::server
