// http_load: a cheap load generator for `neardup serve` (docs/SERVER.md,
// docs/BENCHMARKS.md), so that the figures measure the server rather than
// the client. Its predecessor (bench/server_load, cpp-httplib's blocking
// client, a thread per connection) spent 38-49 us of CPU per request, as
// much as the server's HTTP layer and fingerprinting together; this one
// spends 12-16 us (same loaded machine, same runs); it drives all connections
// of a thread from one epoll loop over non-blocking sockets, builds each
// request by copying precomputed phrases into a reused buffer, parses only
// the status line and Content-Length of each response, and can pipeline
// (HTTP/1.1: several requests in flight per keep-alive connection, answered
// in order).
//
// Load: single-document POSTs of about --doc-bytes of text (random words
// w0..w19999; every fifth document an edited copy of one of the thread's
// first 64, so the stream sees near-duplicates), or --batch N documents per POST as JSON
// lines, to /v1/streams/{stream}/documents (or /check; or GET /healthz for
// the HTTP layer alone). Closed loop by default (each connection keeps
// --pipeline requests in flight: the throughput figure); with --rate R the
// connections share R requests/s on a fixed schedule and latency is taken
// from each request's scheduled time (a stall counts against every request
// it delays: no coordinated omission).
// Prints the requests answered 200 within the run, requests/s, MB/s of
// their text, latency percentiles, the worst latency and how many 100 ms
// intervals of sending time had an answer over 5 ms (one pause of the
// server shows as one or a few such intervals; a saturated server as most
// of them; --timeline FILE writes every interval's worst), and this
// process's own CPU time per request (to show how much of the machine it
// took).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 1;
  int connections = 32;
  int pipeline = 1;  // requests in flight per connection (closed loop)
  double seconds = 5;
  double rate = 0;  // requests/s over all connections; 0: closed loop
  size_t doc_bytes = 3000;
  int batch = 1;  // documents per POST (JSON lines when > 1)
  std::string stream = "load";
  std::string token;
  std::string route = "documents";  // documents | check | healthz
  std::string timeline;             // file for the worst latency per 100 ms ("": none)
};

uint64_t Next(uint64_t* state) {  // SplitMix64
  *state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Texts are made of precomputed phrases (8 random words of w0..w19999
// each, 4096 of them: ~220 KB, within a core's L2, as a larger pool spent
// its time in cache misses), about 45 copies per 3 KB text rather than 500
// word draws: building the request was half of this program's CPU. Two
// random texts share about half a phrase on average (a few of their ~500
// shingles): unrelated, as texts of independent words are.
struct Phrases {
  Phrases() {
    uint64_t rng = 0x9b1a5e;
    for (int i = 0; i < 4096; ++i) {
      std::string phrase;
      for (int w = 0; w < 8; ++w) phrase += "w" + std::to_string(Next(&rng) % 20000) + " ";
      phrases.push_back(std::move(phrase));
    }
  }
  std::vector<std::string> phrases;
};

struct Connection {
  int fd = -1;
  std::string out;  // request bytes not yet written
  size_t out_at = 0;
  std::string in;  // response bytes not yet parsed
  size_t in_at = 0;
  struct Sent {
    Clock::time_point at;  // scheduled (open loop) or sent (closed loop)
    uint64_t text_bytes;
  };
  std::deque<Sent> in_flight;
  uint64_t sent = 0;
  bool want_write = false;
  bool broken = false;  // after a send/receive error: no longer used
};

struct ThreadResult {
  std::vector<float> latencies_us;
  std::vector<float> sent_at_s;  // each latency's scheduled (or send) time, from the start
  uint64_t errors = 0;
  uint64_t text_bytes = 0;
  std::string first_error;
};

class Worker {
 public:
  Worker(const Flags& flags, const Phrases& phrases, int index, int first, int count,
         Clock::time_point start, Clock::time_point end)
      : flags_(flags), phrases_(phrases), index_(index), first_(first), start_(start), end_(end) {
    connections_.resize(static_cast<size_t>(count));
    rng_ = 0x5eed0000 + static_cast<uint64_t>(index);
    path_ =
        flags.route == "healthz" ? "/healthz" : "/v1/streams/" + flags.stream + "/" + flags.route;
    interval_ = flags.rate > 0 ? flags.connections / flags.rate : 0;
  }

  bool Connect() {
    epoll_ = epoll_create1(0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(flags_.port));
    if (inet_pton(AF_INET, flags_.host.c_str(), &address.sin_addr) != 1) return Fail("bad --host");
    for (size_t i = 0; i < connections_.size(); ++i) {
      Connection& c = connections_[i];
      c.fd = socket(AF_INET, SOCK_STREAM, 0);
      const int one = 1;
      setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (connect(c.fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        return Fail(std::string("connect: ") + std::strerror(errno));
      }
      fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = i;
      epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &event);
    }
    return true;
  }

  void Run() {
    std::this_thread::sleep_until(start_);
    std::vector<epoll_event> events(connections_.size());
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (now >= end_) break;
      Clock::time_point wake = end_;
      for (size_t i = 0; i < connections_.size(); ++i) {
        Connection& c = connections_[i];
        if (c.broken) continue;
        if (interval_ > 0) {
          // Open loop: every request whose time has come is sent, whatever
          // is in flight.
          for (;;) {
            const Clock::time_point due = Scheduled(i, c.sent);
            if (due > now || due >= end_) {
              wake = std::min(wake, due);
              break;
            }
            Enqueue(c, due);
          }
        } else {
          while (c.in_flight.size() < static_cast<size_t>(flags_.pipeline)) Enqueue(c, now);
        }
        Flush(i);
      }
      // Nanosecond timeouts (epoll_pwait2): a millisecond one would round a
      // sub-millisecond wait to 0 and spin, or to 1 ms and send late.
      const int64_t wait_ns = std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count(), 0, 5000000);
      const timespec timeout{0, static_cast<long>(wait_ns)};
      const int n =
          epoll_pwait2(epoll_, events.data(), static_cast<int>(events.size()), &timeout, nullptr);
      for (int e = 0; e < n; ++e) {
        const size_t i = events[e].data.u64;
        if (!connections_[i].broken && (events[e].events & EPOLLOUT)) Flush(i);
        if (!connections_[i].broken && (events[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
          Read(i);
        }
      }
    }
    for (Connection& c : connections_) close(c.fd);
    close(epoll_);
  }

  ThreadResult& result() { return result_; }

 private:
  bool Fail(const std::string& what) {
    result_.first_error = what;
    return false;
  }

  Clock::time_point Scheduled(size_t i, uint64_t n) const {
    const double global = static_cast<double>(first_ + static_cast<int>(i)) / flags_.connections;
    return start_ + std::chrono::microseconds(
                        static_cast<int64_t>((static_cast<double>(n) + global) * interval_ * 1e6));
  }

  // One document's text (a JSON string's contents: words only); every
  // fifth an edited copy of one of this thread's first 64 texts.
  void AppendText(std::string* body) {
    const size_t begin = body->size();
    if (++documents_ % 5 == 0 && !recent_.empty()) {
      const std::string& source = recent_[Next(&rng_) % recent_.size()];
      *body += source;
      body->replace(begin + Next(&rng_) % (source.size() / 2), 5, "edits");
    } else {
      const std::vector<std::string>& phrases = phrases_.phrases;
      while (body->size() - begin < flags_.doc_bytes) {
        *body += phrases[Next(&rng_) & (phrases.size() - 1)];
      }
      if (recent_.size() < 64) recent_.emplace_back(body->substr(begin));
    }
    request_text_bytes_ += body->size() - begin;
  }

  void Enqueue(Connection& c, Clock::time_point scheduled) {
    const uint64_t n = c.sent++;
    const size_t connection = static_cast<size_t>(&c - connections_.data());
    request_text_bytes_ = 0;
    std::string& out = c.out;
    if (flags_.route == "healthz") {
      out += "GET /healthz HTTP/1.1\r\nHost: l\r\n";
      if (!flags_.token.empty()) out += "Authorization: Bearer " + flags_.token + "\r\n";
      out += "\r\n";
      c.in_flight.push_back({scheduled, 0});
      return;
    }
    out += "POST " + path_ + " HTTP/1.1\r\nHost: l\r\nContent-Type: ";
    out += flags_.batch > 1 ? "application/x-ndjson" : "application/json";
    if (!flags_.token.empty()) out += "\r\nAuthorization: Bearer " + flags_.token;
    // The body is written in place after a fixed-width length (leading
    // zeros are digits too), patched once the body is complete: no copy.
    out += "\r\nContent-Length: ";
    const size_t length_at = out.size();
    out += "0000000000\r\n\r\n";
    const size_t body_at = out.size();
    for (int d = 0; d < flags_.batch; ++d) {
      if (d > 0) out += '\n';
      out += "{\"id\":\"t";
      out += std::to_string(index_) + "c" + std::to_string(connection) + "n" + std::to_string(n) +
             "d" + std::to_string(d) + "\",\"text\":\"";
      AppendText(&out);
      out += "\"}";
    }
    char digits[11];
    std::snprintf(digits, sizeof(digits), "%010zu", out.size() - body_at);
    std::memcpy(out.data() + length_at, digits, 10);
    c.in_flight.push_back({scheduled, request_text_bytes_});
  }

  void Flush(size_t i) {
    Connection& c = connections_[i];
    while (c.out_at < c.out.size()) {
      const ssize_t n = send(c.fd, c.out.data() + c.out_at, c.out.size() - c.out_at, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_at += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Error(c, std::string("send: ") + std::strerror(errno));
      return;
    }
    if (c.out_at == c.out.size()) {
      c.out.clear();
      c.out_at = 0;
    }
    const bool want_write = !c.out.empty();
    if (want_write != c.want_write) {
      epoll_event event{};
      event.events = EPOLLIN | (want_write ? EPOLLOUT : 0u);
      event.data.u64 = i;
      epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &event);
      c.want_write = want_write;
    }
  }

  void Read(size_t i) {
    Connection& c = connections_[i];
    char buffer[65536];
    for (;;) {
      const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        c.in.append(buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Error(c, n == 0 ? "the server closed a connection" : std::strerror(errno));
      return;
    }
    // Whole responses, in request order.
    for (;;) {
      const std::string_view in = std::string_view(c.in).substr(c.in_at);
      const size_t head_end = in.find("\r\n\r\n");
      if (head_end == std::string_view::npos) break;
      const std::string_view head = in.substr(0, head_end);
      size_t length = 0;
      const size_t at = FindHeader(head, "content-length:");
      if (at != std::string_view::npos) length = std::strtoull(head.data() + at + 15, nullptr, 10);
      if (in.size() < head_end + 4 + length) break;
      const bool ok = head.size() > 12 && head.substr(9, 3) == "200";
      const Clock::time_point now = Clock::now();
      if (c.in_flight.empty()) {
        Error(c, "a response without a request");
        return;
      }
      if (ok && now <= end_) {
        result_.latencies_us.push_back(static_cast<float>(
            std::chrono::duration<double, std::micro>(now - c.in_flight.front().at).count()));
        result_.sent_at_s.push_back(static_cast<float>(
            std::chrono::duration<double>(c.in_flight.front().at - start_).count()));
        result_.text_bytes += c.in_flight.front().text_bytes;
      } else if (!ok) {
        Error(c, "status " + std::string(head.substr(9, 3)) + ": " +
                     std::string(in.substr(head_end + 4, std::min<size_t>(length, 200))));
      }
      c.in_flight.pop_front();
      c.in_at += head_end + 4 + length;
    }
    if (c.in_at == c.in.size()) {
      c.in.clear();
      c.in_at = 0;
    } else if (c.in_at > (1u << 20)) {
      c.in.erase(0, c.in_at);
      c.in_at = 0;
    }
  }

  static size_t FindHeader(std::string_view head, std::string_view lower_name) {
    for (size_t line = head.find("\r\n"); line != std::string_view::npos;
         line = head.find("\r\n", line + 2)) {
      const std::string_view rest = head.substr(line + 2);
      if (rest.size() < lower_name.size()) return std::string_view::npos;
      bool match = true;
      for (size_t k = 0; k < lower_name.size() && match; ++k) {
        match = std::tolower(static_cast<unsigned char>(rest[k])) == lower_name[k];
      }
      if (match) return line + 2;
    }
    return std::string_view::npos;
  }

  void Error(Connection& c, const std::string& what) {
    if (result_.errors++ == 0) result_.first_error = what;
    if (what.rfind("status ", 0) == 0) return;  // the connection goes on
    // A broken connection: its requests are lost; stop using it.
    result_.errors += c.in_flight.size();
    c.in_flight.clear();
    epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
    c.out.clear();
    c.out_at = 0;
    c.broken = true;
  }

  const Flags& flags_;
  const Phrases& phrases_;
  const int index_;
  const int first_;  // index of this thread's first connection among all
  const Clock::time_point start_;
  const Clock::time_point end_;
  double interval_ = 0;
  std::string path_;
  std::vector<Connection> connections_;
  int epoll_ = -1;
  uint64_t rng_ = 0;
  uint64_t documents_ = 0;
  uint64_t request_text_bytes_ = 0;
  std::vector<std::string> recent_;
  ThreadResult result_;
};

bool CreateStream(const Flags& flags) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(flags.port));
  inet_pton(AF_INET, flags.host.c_str(), &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return false;
  }
  std::string request = "PUT /v1/streams/" + flags.stream +
                        " HTTP/1.1\r\nHost: l\r\nConnection: close\r\nContent-Length: 2\r\n";
  if (!flags.token.empty()) request += "Authorization: Bearer " + flags.token + "\r\n";
  request += "\r\n{}";
  const bool sent = send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
                    static_cast<ssize_t>(request.size());
  char response[4096];
  const ssize_t n = sent ? recv(fd, response, sizeof(response), MSG_WAITALL) : -1;
  close(fd);
  const std::string_view head(response, n > 12 ? static_cast<size_t>(n) : 0);
  return head.size() > 12 && (head.substr(9, 3) == "200" || head.substr(9, 3) == "201");
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::string value = argv[i + 1];
    if (name == "--host") {
      flags.host = value;
    } else if (name == "--port") {
      flags.port = std::atoi(value.c_str());
    } else if (name == "--threads") {
      flags.threads = std::max(1, std::atoi(value.c_str()));
    } else if (name == "--connections") {
      flags.connections = std::max(1, std::atoi(value.c_str()));
    } else if (name == "--pipeline") {
      flags.pipeline = std::max(1, std::atoi(value.c_str()));
    } else if (name == "--seconds") {
      flags.seconds = std::atof(value.c_str());
    } else if (name == "--rate") {
      flags.rate = std::atof(value.c_str());
    } else if (name == "--doc-bytes") {
      flags.doc_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (name == "--batch") {
      flags.batch = std::max(1, std::atoi(value.c_str()));
    } else if (name == "--stream") {
      flags.stream = value;
    } else if (name == "--token") {
      flags.token = value;
    } else if (name == "--route") {
      flags.route = value;
    } else if (name == "--timeline") {
      flags.timeline = value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", name.c_str());
      return 2;
    }
  }
  if ((argc - 1) % 2 != 0 ||
      (flags.route != "documents" && flags.route != "check" && flags.route != "healthz")) {
    std::fprintf(stderr,
                 "usage: %s [--port P] [--connections C] [--threads T] [--pipeline N] "
                 "[--seconds S] [--rate R] [--doc-bytes B] [--batch N] "
                 "[--route documents|check|healthz] [--stream NAME] [--token T] "
                 "[--timeline FILE]\n",
                 argv[0]);
    return 2;
  }
  if (flags.route != "healthz" && !CreateStream(flags)) {
    std::fprintf(stderr, "cannot create stream %s on port %d\n", flags.stream.c_str(), flags.port);
    return 1;
  }
  flags.threads = std::min(flags.threads, flags.connections);
  const Phrases phrases;
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(200);
  const Clock::time_point end =
      start + std::chrono::microseconds(static_cast<int64_t>(flags.seconds * 1e6));
  std::vector<std::unique_ptr<Worker>> workers;
  int first = 0;
  for (int t = 0; t < flags.threads; ++t) {
    const int count = flags.connections / flags.threads + (t < flags.connections % flags.threads);
    workers.push_back(std::make_unique<Worker>(flags, phrases, t, first, count, start, end));
    first += count;
    if (!workers.back()->Connect()) {
      std::fprintf(stderr, "%s\n", workers.back()->result().first_error.c_str());
      return 1;
    }
  }
  const double cpu_before = CpuSeconds();
  std::vector<std::thread> threads;
  for (auto& worker : workers) threads.emplace_back([&worker] { worker->Run(); });
  for (std::thread& thread : threads) thread.join();
  const double cpu = CpuSeconds() - cpu_before;
  std::vector<float> all;
  // The worst latency and the number of answers of each 100 ms of sending
  // time: a stall shows as one interval (or a few) whose worst is far above
  // the others, so p99 can be told apart from one pause of the server.
  const size_t intervals = static_cast<size_t>(flags.seconds * 10) + 1;
  std::vector<float> worst_ms(intervals, 0);
  std::vector<uint64_t> answered(intervals, 0);
  for (auto& worker : workers) {
    const ThreadResult& r = worker->result();
    for (size_t i = 0; i < r.latencies_us.size(); ++i) {
      const size_t at =
          std::min(intervals - 1, static_cast<size_t>(std::max(0.0f, r.sent_at_s[i]) * 10));
      worst_ms[at] = std::max(worst_ms[at], r.latencies_us[i] / 1000);
      ++answered[at];
    }
  }
  if (!flags.timeline.empty()) {
    if (FILE* out = std::fopen(flags.timeline.c_str(), "w")) {
      std::fprintf(out, "# from_s answered worst_ms\n");
      for (size_t i = 0; i < intervals; ++i) {
        std::fprintf(out, "%.1f %llu %.3f\n", i / 10.0,
                     static_cast<unsigned long long>(answered[i]), worst_ms[i]);
      }
      std::fclose(out);
    }
  }
  const size_t stalled = static_cast<size_t>(
      std::count_if(worst_ms.begin(), worst_ms.end(), [](float ms) { return ms > 5; }));
  uint64_t errors = 0;
  uint64_t text_bytes = 0;
  std::string first_error;
  for (auto& worker : workers) {
    const ThreadResult& r = worker->result();
    all.insert(all.end(), r.latencies_us.begin(), r.latencies_us.end());
    errors += r.errors;
    text_bytes += r.text_bytes;
    if (first_error.empty()) first_error = r.first_error;
  }
  std::sort(all.begin(), all.end());
  auto percentile = [&](double p) {
    return all.empty() ? 0.0
                       : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))] / 1e3;
  };
  if (errors > 0)
    std::fprintf(stderr, "%llu errors; the first: %s\n", static_cast<unsigned long long>(errors),
                 first_error.c_str());
  std::printf(
      "route %s  connections %d  threads %d  pipeline %d  batch %d  rate %s  requests %zu  "
      "errors %llu  requests/s %.0f  text MB/s %.1f  p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  "
      "max %.3f ms  100ms-intervals-over-5ms %zu/%zu  loader CPU per request %.1f us\n",
      flags.route.c_str(), flags.connections, flags.threads, flags.pipeline, flags.batch,
      flags.rate > 0 ? std::to_string(static_cast<long>(flags.rate)).c_str() : "closed-loop",
      all.size(), static_cast<unsigned long long>(errors), all.size() / flags.seconds,
      text_bytes / flags.seconds / 1e6, percentile(0.5), percentile(0.99), percentile(0.999),
      all.empty() ? 0.0 : all.back() / 1e3, stalled, intervals - 1,
      all.empty() ? 0.0 : cpu / static_cast<double>(all.size()) * 1e6);
  return errors == 0 ? 0 : 1;
}
