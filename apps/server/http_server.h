// HttpServer: cpp-httplib's Server with what the service needs and Debian's
// compiled cpp-httplib 0.11 lacks:
//  - a connection cap: cpp-httplib runs one pool thread per connection and
//    queues the surplus without bound (a connection waits unserved, holding
//    a file descriptor, until a thread frees). Past `max_connections` open
//    connections a new one is answered at once with 503
//    {"code":"too_many_connections"} and closed, on the accepting thread,
//    without reading it;
//  - a listen backlog of SOMAXCONN (the .so was built with 5: simultaneous
//    connects overflow it and wait for a 1 s SYN retransmit);
//  - idle keep-alive connections end within ~50 ms of Stop() (cpp-httplib
//    waits out the 5 s keep-alive timeout).
// The connection loop (keep-alive, timeouts) is this class's own, so that
// the cap can refuse a connection before any pool thread takes it; each
// request is still parsed, routed and answered by httplib's
// process_request.
// Thread safety: as httplib::Server; the counters may be read from any
// thread.
#ifndef NEARDUP_APPS_SERVER_HTTP_SERVER_H_
#define NEARDUP_APPS_SERVER_HTTP_SERVER_H_

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace neardup::server {

class HttpServer : public httplib::Server {
 public:
  // `threads` pool threads serve at most `max_connections` connections at
  // once (REQUIRES: max_connections <= threads, or the surplus waits).
  HttpServer(size_t threads, size_t max_connections);

  // Raises the listen backlog of a bound socket to SOMAXCONN.
  bool RaiseListenBacklog();

  size_t open_connections() const { return open_.load(); }
  uint64_t rejected_connections() const { return rejected_.load(); }

 private:
  class ConnectionQueue;
  class SocketStream;

  bool process_and_close_socket(socket_t sock) override;
  // Writes the 503 answer to a connection over the cap and closes it.
  void Reject(socket_t sock);

  const size_t max_connections_;
  std::atomic<size_t> open_{0};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_HTTP_SERVER_H_
