// HttpServer: the service's HTTP/1.1 transport. cpp-httplib's Server
// listens, accepts and runs its thread pool (one pool thread per open
// connection); everything after the accept is this class's own:
//  - a connection cap: cpp-httplib queues connections past its pool without
//    bound (each waits unserved, holding a file descriptor). Past
//    `max_connections` open connections a new one is answered at once with
//    503 {"code":"too_many_connections"} and closed, on the accepting thread,
//    without reading it. A connection counts from its accept until the
//    answer after which it closes is about to be sent (or until it ends:
//    a keep-alive connection the client closes counts until the server
//    sees the close);
//  - a listen backlog of SOMAXCONN (the Debian .so was built with 5:
//    simultaneous connects overflow it and wait for a 1 s SYN retransmit);
//  - the keep-alive loop: idle connections end within ~50 ms of Stop()
//    (cpp-httplib waits out its 5 s keep-alive timeout), a read that waits
//    out the read timeout closes the connection (slow clients);
//  - the request itself (http_message.h): the head parsed from the
//    connection's buffer, the body read at its Content-Length (or chunks)
//    straight into the request, and the answer sent in one send. cpp-httplib
//    0.11's own request processing (a std::regex per route tried, a printf
//    per header, a stringstream, two sends and two address syscalls per
//    answer) was about half of a /healthz request's CPU (docs/SERVER.md
//    "Transport").
// Bodies larger than the payload limit are discarded unbuffered and
// answered 413; a handler throwing std::exception answers 500.
// Thread safety: as httplib::Server (listen on one thread, stop from any);
// the counters may be read from any thread; the handlers run on the pool's
// threads, concurrently.
#ifndef NEARDUP_APPS_SERVER_HTTP_SERVER_H_
#define NEARDUP_APPS_SERVER_HTTP_SERVER_H_

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "http_message.h"

namespace neardup::server {

class HttpServer : public httplib::Server {
 public:
  struct Handlers {
    // After the head is read, before the body: true when it has answered
    // (e.g. 401); the body is then not read and the connection closes.
    std::function<bool(const HttpRequest&, httplib::Response&)> on_head;
    // Answers a request whose body has been read.
    std::function<void(HttpRequest&, httplib::Response&)> on_request;
    // After the answer was sent (logs, metrics): `seconds` from the head
    // read to the answer sent. Also for the transport's own errors.
    std::function<void(const HttpRequest&, const httplib::Response&, double seconds)> on_answered;
  };

  // `threads` pool threads serve at most `max_connections` connections at
  // once (REQUIRES: max_connections <= threads, or the surplus waits).
  HttpServer(size_t threads, size_t max_connections, Handlers handlers);

  // Raises the listen backlog of a bound socket to SOMAXCONN.
  bool RaiseListenBacklog();

  size_t open_connections() const { return open_.load(); }
  uint64_t rejected_connections() const { return rejected_.load(); }

 private:
  class Connection;
  class ConnectionQueue;

  bool process_and_close_socket(socket_t sock) override;
  // Reads, answers and logs one request; false when the connection is to
  // close (asked for, an error, or the client went away).
  bool ServeRequest(Connection& connection, bool last);
  // Writes the 503 answer to a connection over the cap and closes it.
  void Reject(socket_t sock);
  bool stopped() const { return svr_sock_.load() == INVALID_SOCKET; }

  const size_t max_connections_;
  const Handlers handlers_;
  std::atomic<size_t> open_{0};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_HTTP_SERVER_H_
