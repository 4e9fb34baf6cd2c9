#include "http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "http_responses.h"

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

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The length of a chunk-size line ("1a2b;extension"), or false.
bool ParseChunkSize(std::string_view line, uint64_t* size) {
  line = line.substr(0, line.find(';'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty() || line.size() > 15) return false;
  *size = 0;
  for (char c : line) {
    if (!IsHexDigit(c)) return false;
    *size = *size * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return true;
}

}  // namespace

// One connection's socket, read through a buffer (a request head is parsed
// in place from it) with every wait bounded by the server's read or write
// timeout (slow clients time out).
class HttpServer::Connection {
 public:
  Connection(int sock, int read_timeout_ms, int write_timeout_ms, std::atomic<size_t>* open)
      : sock_(sock),
        read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms),
        open_(open) {}

  // Gives back the connection's place under the cap (once). Called before
  // the answer after which the connection closes, not after the close: a
  // client that opens its next connection as soon as it has the answer
  // (one request per connection, as cpp-httplib's client does) must find
  // the place free, or a client that never holds more than one connection
  // is refused "too many open connections" whenever this thread is
  // descheduled between its answer and its close (session 8 saw the
  // collection route test's readers get 503 that way at load 14).
  void ReleaseSlot() {
    if (counted_) {
      counted_ = false;
      --*open_;
    }
  }

  int sock() const { return sock_; }
  bool buffered() const { return begin_ < end_; }
  // The connection closes with request bytes maybe still unread (a refused
  // body, a malformed request): they are drained before the close, which
  // would otherwise send a reset that can discard the answer at the client.
  void set_unread() { unread_ = true; }

  // Shuts the connection down; waits up to a second for the client to
  // finish sending when bytes were left unread.
  void Close() {
    ::shutdown(sock_, SHUT_WR);
    char discard[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (true) {
      const ssize_t n = ::recv(sock_, discard, sizeof(discard), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
      if (n > 0) continue;
      if (!unread_ || std::chrono::steady_clock::now() >= deadline || !Poll(sock_, POLLIN, 100)) {
        break;
      }
    }
    ::close(sock_);
  }
  // A read waited out the read timeout: the connection is to be closed (a
  // slow client does not get another keep-alive wait).
  bool timed_out() const { return timed_out_; }

  enum class Head { kRead, kClosed, kTooLarge };
  // Waits until the next request's first bytes arrive (true), the client
  // closes (false), or `stop()` says to stop waiting, checked every 50 ms:
  // one blocking recv per request, where a poll and a recv were two calls.
  template <typename Stop>
  bool WaitForRequest(Stop&& stop) {
    if (buffered()) return true;
    if (!wait_slice_set_) {
      const timeval slice{0, 50 * 1000};
      ::setsockopt(sock_, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof(slice));
      wait_slice_set_ = true;
    }
    begin_ = end_ = 0;
    while (true) {
      const ssize_t n = ::recv(sock_, buffer_, sizeof(buffer_), 0);
      if (n > 0) {
        end_ = static_cast<size_t>(n);
        return true;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return false;
      if (stop()) return false;
    }
  }

  // Reads up to the blank line ending the next request head; *head (the
  // request line and headers) views the buffer until the next read.
  // Empty lines before a request are skipped (RFC 9112 2.2).
  Head ReadHead(std::string_view* head) {
    size_t scanned = begin_;
    while (true) {
      while (begin_ < end_ && (buffer_[begin_] == '\r' || buffer_[begin_] == '\n')) ++begin_;
      scanned = std::max(scanned, begin_);
      while (scanned < end_) {
        const char* newline =
            static_cast<const char*>(std::memchr(buffer_ + scanned, '\n', end_ - scanned));
        if (newline == nullptr) {
          scanned = end_;
          break;
        }
        const size_t at = static_cast<size_t>(newline - buffer_);
        if (at + 1 < end_ && buffer_[at + 1] == '\n') return TakeHead(at, at + 2, head);
        if (at + 2 < end_ && buffer_[at + 1] == '\r' && buffer_[at + 2] == '\n') {
          return TakeHead(at, at + 3, head);
        }
        if (at + 2 >= end_) {
          scanned = at;  // the blank line may still come
          break;
        }
        scanned = at + 1;
      }
      if (end_ - begin_ >= kMaxRequestHeadBytes) return Head::kTooLarge;
      const size_t offset = begin_;
      if (!Fill()) return Head::kClosed;
      scanned -= offset - begin_;  // Fill moved the buffered bytes to the front
    }
  }

  // The buffer a request's body is read into, empty, with the capacity of
  // this connection's earlier bodies (session 14): a batch POST's body
  // (~0.3 MB for 100 documents of 3 KB) allocated afresh per request was
  // returned to the allocator and its pages faulted in and zeroed again by
  // the next one, ~3% of a batch POST's server CPU.
  std::string TakeBodyBuffer() { return std::move(body_buffer_); }
  // Keeps `body`'s capacity for the next request, up to kKeptBodyBytes.
  void KeepBodyBuffer(std::string body) {
    if (body.capacity() > kKeptBodyBytes) return;
    body.clear();
    body_buffer_ = std::move(body);
  }
  // --max-connections x 1 MiB at most: 64 MiB at the default 64 connections
  // (--max-connections defaults to --threads, 64), and only by connections
  // that posted bodies that large.
  static constexpr size_t kKeptBodyBytes = size_t{1} << 20;

  // Appends exactly `length` bytes of body to *body.
  bool ReadBody(size_t length, std::string* body) {
    const size_t from_buffer = std::min(length, end_ - begin_);
    body->append(buffer_ + begin_, from_buffer);
    begin_ += from_buffer;
    size_t got = from_buffer;
    if (got == length) return true;
    const size_t old_size = body->size();
    body->resize(old_size + (length - got));
    char* out = body->data() + old_size;
    for (size_t filled = 0; filled < length - got;) {
      const ssize_t n = Receive(out + filled, length - got - filled);
      if (n <= 0) return false;
      filled += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads and drops `length` bytes (a body refused with 413).
  bool Discard(uint64_t length) {
    while (length > 0) {
      if (!buffered() && !Fill()) return false;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(length, end_ - begin_));
      begin_ += n;
      length -= n;
    }
    return true;
  }

  // A chunked body (RFC 9112 7.1), appended to *body: 0, or the HTTP status
  // of its error (400 malformed, 413 larger than `max_bytes`), or -1 when
  // the client went away.
  int ReadChunked(size_t max_bytes, std::string* body) {
    while (true) {
      std::string_view line;
      if (!ReadLine(&line)) return -1;
      uint64_t size = 0;
      if (!ParseChunkSize(line, &size)) return 400;
      if (size == 0) break;
      if (size > max_bytes - std::min(max_bytes, body->size())) return 413;
      if (!ReadBody(static_cast<size_t>(size), body)) return -1;
      if (!ReadLine(&line)) return -1;
      if (!line.empty()) return 400;
    }
    // Trailer fields, ignored, up to the blank line.
    for (std::string_view line;;) {
      if (!ReadLine(&line)) return -1;
      if (line.empty()) return 0;
    }
  }

  // Sends `head` then `body` (one sendmsg in the usual case).
  bool Send(std::string_view head, std::string_view body) {
    iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                      {const_cast<char*>(body.data()), body.size()}};
    iovec* part = parts;
    size_t count = body.empty() ? 1 : 2;
    while (count > 0) {
      msghdr message{};
      message.msg_iov = part;
      message.msg_iovlen = count;
      const ssize_t n = ::sendmsg(sock_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        if (!Poll(sock_, POLLOUT, write_timeout_ms_)) return false;
        continue;
      }
      size_t sent = static_cast<size_t>(n);
      while (count > 0 && sent >= part->iov_len) {
        sent -= part->iov_len;
        ++part;
        --count;
      }
      if (count > 0) {
        part->iov_base = static_cast<char*>(part->iov_base) + sent;
        part->iov_len -= sent;
      }
    }
    return true;
  }

 private:
  Head TakeHead(size_t newline, size_t past_blank_line, std::string_view* head) {
    *head = std::string_view(buffer_ + begin_, newline - begin_);
    begin_ = past_blank_line;
    return head->size() > kMaxRequestHeadBytes ? Head::kTooLarge : Head::kRead;
  }

  // A line of at most 4 KiB (chunk sizes, trailers), without its CR LF.
  bool ReadLine(std::string_view* line) {
    while (true) {
      const char* newline =
          static_cast<const char*>(std::memchr(buffer_ + begin_, '\n', end_ - begin_));
      if (newline != nullptr) {
        const size_t at = static_cast<size_t>(newline - buffer_);
        *line = std::string_view(buffer_ + begin_, at - begin_);
        if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
        begin_ = at + 1;
        return true;
      }
      if (end_ - begin_ >= 4096 || !Fill()) return false;
    }
  }

  // Receives more bytes after the buffered ones (moved to the front first).
  bool Fill() {
    if (begin_ > 0) {
      std::memmove(buffer_, buffer_ + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == sizeof(buffer_)) return false;
    const ssize_t n = Receive(buffer_ + end_, sizeof(buffer_) - end_);
    if (n <= 0) return false;
    end_ += static_cast<size_t>(n);
    return true;
  }

  // Receives what has arrived (no poll call when it is already there, the
  // usual case: the keep-alive loop polled), else waits up to the read
  // timeout.
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

  const int sock_;
  const int read_timeout_ms_;
  const int write_timeout_ms_;
  // Holds a whole request head (kMaxRequestHeadBytes) with room to spare.
  char buffer_[2 * kMaxRequestHeadBytes];
  size_t begin_ = 0;
  size_t end_ = 0;
  bool timed_out_ = false;
  bool unread_ = false;
  bool wait_slice_set_ = false;
  std::string body_buffer_;  // TakeBodyBuffer / KeepBodyBuffer
  std::atomic<size_t>* const open_;
  bool counted_ = true;
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
    // Released by the connection itself (Connection::ReleaseSlot): before
    // its last answer is sent, or when it ends.
    ++server_.open_;
    pool_.enqueue(std::move(fn));
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  HttpServer& server_;
  httplib::ThreadPool pool_;
};

HttpServer::HttpServer(size_t threads, size_t max_connections, Handlers handlers)
    : max_connections_(max_connections), handlers_(std::move(handlers)) {
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

bool HttpServer::ServeRequest(Connection& connection, bool last) {
  std::string_view head;
  const Connection::Head read = connection.ReadHead(&head);
  if (read == Connection::Head::kClosed) return false;
  const auto start = std::chrono::steady_clock::now();
  HttpRequest req;
  req.body = connection.TakeBodyBuffer();
  httplib::Response res;
  // After Stop() the answer says Connection: close, so a client that keeps
  // sending cannot hold the connection (and the exit) open.
  bool close = last || stopped();
  const int head_error = read == Connection::Head::kTooLarge ? 431 : ParseRequestHead(head, &req);
  uint64_t length = 0;
  if (head_error != 0) {
    SendError(res, head_error, "invalid_argument", "malformed HTTP request");
    close = true;
  } else if (!ContentLength(req, &length)) {
    SendError(res, 400, "invalid_argument", "malformed Content-Length");
    close = true;
  } else {
    close = close || WantsClose(req);
    const bool chunked = IsChunked(req);
    const bool has_body = chunked || length > 0;
    const auto too_large = [&] {
      SendError(res, 413, "payload_too_large",
                "request body exceeds --max-body-mb (" + std::to_string(payload_max_length_ >> 20) +
                    " MiB)");
    };
    if (handlers_.on_head && handlers_.on_head(req, res)) {
      close = close || has_body;  // its body is left unread
    } else if (!chunked && length > payload_max_length_) {
      // Read and dropped, never buffered, so that the client (still
      // sending) sees the answer.
      if (!connection.Discard(length)) return false;
      too_large();
    } else {
      int body_error = 0;
      if (has_body) {
        const std::string expect = req.get_header_value("Expect");
        if (expect == "100-continue" &&
            !connection.Send("HTTP/1.1 100 Continue\r\n\r\n", std::string_view())) {
          return false;
        }
        req.body.reserve(static_cast<size_t>(length) + kRequestBodyPadding);
        body_error = chunked
                         ? connection.ReadChunked(payload_max_length_, &req.body)
                         : (connection.ReadBody(static_cast<size_t>(length), &req.body) ? 0 : -1);
      }
      if (body_error < 0) return false;  // the client went away or timed out
      if (body_error == 413) {
        too_large();
        close = true;
      } else if (body_error != 0) {
        SendError(res, 400, "invalid_argument", "malformed chunked body");
        close = true;
      } else {
        try {
          handlers_.on_request(req, res);
        } catch (const std::exception& e) {
          res = httplib::Response();
          SendError(res, 500, "internal", std::string("request failed: ") + e.what());
        }
      }
    }
  }
  if (res.status == -1) res.status = 200;
  if (close && res.status >= 400) connection.set_unread();
  if (close) connection.ReleaseSlot();
  std::string answer_head;
  answer_head.reserve(256);
  AppendResponseHead(res, res.body.size(), close, &answer_head);
  const bool sent = connection.Send(
      answer_head, req.method == "HEAD" ? std::string_view() : std::string_view(res.body));
  if (handlers_.on_answered) {
    handlers_.on_answered(
        req, res, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  connection.KeepBodyBuffer(std::move(req.body));
  return sent && !close && !connection.timed_out();
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  if (reject_connection) {
    Reject(sock);
    return true;
  }
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  Connection connection(sock, Milliseconds(read_timeout_sec_, read_timeout_usec_),
                        Milliseconds(write_timeout_sec_, write_timeout_usec_), &open_);
  // Waits for the next request of a keep-alive connection, in short slices
  // so that Stop() ends idle connections promptly. A request that has
  // arrived is served even after Stop(): it is in flight (under load a pool
  // thread may reach a connection accepted before Stop() only after it, with
  // the client's request already waiting).
  const long slices = std::max<long>(1, static_cast<long>(keep_alive_timeout_sec_) * 20);
  auto next_request = [&] {
    long waited = 0;  // 50 ms slices
    return connection.WaitForRequest([&] { return stopped() || ++waited >= slices; });
  };
  bool served = true;
  for (size_t left = keep_alive_max_count_; left > 0 && next_request(); --left) {
    served = ServeRequest(connection, /*last=*/left == 1);
    if (!served) break;
  }
  connection.Close();
  connection.ReleaseSlot();
  return served;
}

}  // namespace neardup::server
