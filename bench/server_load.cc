// Load generator for `neardup serve` (docs/SERVER.md, docs/BENCHMARKS.md):
// N keep-alive connections each POST single news-like documents (about
// --doc-bytes of text, every fifth an edited copy of an earlier one) to one
// stream, for --seconds. Closed loop by default (each connection sends its
// next request when the last is answered: the throughput figure); with
// --rate R the connections share R requests/s on a fixed schedule and the
// latency is measured from each request's scheduled time (no coordinated
// omission: a stall counts against every request it delays).
// --route check posts to /check (nothing stored) and --route healthz GETs
// /healthz (the HTTP layer alone), to split the cost of a request.
// Prints requests/s, MB/s of text and latency percentiles.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Flags {
  std::string host = "127.0.0.1";
  int port = 8080;
  int connections = 32;
  double seconds = 5;
  double rate = 0;
  size_t doc_bytes = 3000;
  std::string stream = "load";
  std::string token;
  // documents (store), check (decide, store nothing) or healthz (GET: the
  // HTTP layer alone), to split the cost per request.
  std::string route = "documents";
};

uint64_t Next(uint64_t* state) {
  *state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::string value = argv[i + 1];
    if (name == "--host")
      flags.host = value;
    else if (name == "--port")
      flags.port = std::atoi(value.c_str());
    else if (name == "--connections")
      flags.connections = std::atoi(value.c_str());
    else if (name == "--seconds")
      flags.seconds = std::atof(value.c_str());
    else if (name == "--rate")
      flags.rate = std::atof(value.c_str());
    else if (name == "--doc-bytes")
      flags.doc_bytes = std::strtoull(value.c_str(), nullptr, 10);
    else if (name == "--stream")
      flags.stream = value;
    else if (name == "--token")
      flags.token = value;
    else if (name == "--route")
      flags.route = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", name.c_str());
      return 2;
    }
  }
  {
    httplib::Client setup(flags.host, flags.port);
    if (!flags.token.empty()) setup.set_bearer_token_auth(flags.token.c_str());
    auto res = setup.Put("/v1/streams/" + flags.stream, "{}", "application/json");
    if (!res || (res->status != 200 && res->status != 201)) {
      std::fprintf(stderr, "cannot create stream %s\n", flags.stream.c_str());
      return 1;
    }
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(100);
  const Clock::time_point end =
      start + std::chrono::microseconds(static_cast<int64_t>(flags.seconds * 1e6));
  std::vector<std::vector<double>> latencies(flags.connections);
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> text_bytes{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < flags.connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(flags.host, flags.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      if (!flags.token.empty()) client.set_bearer_token_auth(flags.token.c_str());
      uint64_t rng = 1234567 + static_cast<uint64_t>(c);
      std::vector<std::string> sent;
      const double interval = flags.rate > 0 ? flags.connections / flags.rate : 0;
      std::this_thread::sleep_until(start);
      for (uint64_t n = 0;; ++n) {
        Clock::time_point scheduled = Clock::now();
        if (interval > 0) {
          scheduled =
              start + std::chrono::microseconds(static_cast<int64_t>(
                          (n + static_cast<double>(c) / flags.connections) * interval * 1e6));
          std::this_thread::sleep_until(scheduled);
        }
        if (scheduled >= end) break;
        std::string text;
        if (n % 5 == 4 && !sent.empty()) {
          text = sent[Next(&rng) % sent.size()];
          text.replace(Next(&rng) % (text.size() / 2), 5, "edits");
        } else {
          while (text.size() < flags.doc_bytes) {
            text += "w" + std::to_string(Next(&rng) % 20000) + " ";
          }
          if (sent.size() < 64) sent.push_back(text);
        }
        const std::string body = "{\"id\":\"c" + std::to_string(c) + "-" + std::to_string(n) +
                                 "\",\"text\":\"" + Escape(text) + "\"}";
        auto res = flags.route == "healthz"
                       ? client.Get("/healthz")
                       : client.Post("/v1/streams/" + flags.stream + "/" + flags.route, body,
                                     "application/json");
        if (!res || res->status != 200) {
          if (errors++ < 3) {
            std::fprintf(stderr, "request failed: %s\n",
                         res ? std::to_string(res->status).c_str()
                             : httplib::to_string(res.error()).c_str());
          }
          continue;
        }
        text_bytes += text.size();
        latencies[c].push_back(std::chrono::duration<double>(Clock::now() - scheduled).count());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto percentile = [&](double p) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))];
  };
  std::printf(
      "connections %d  rate %s  requests %zu  errors %llu  seconds %.2f  requests/s %.0f  text "
      "MB/s "
      "%.1f  p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms\n",
      flags.connections, flags.rate > 0 ? std::to_string(flags.rate).c_str() : "closed-loop",
      all.size(), static_cast<unsigned long long>(errors.load()), flags.seconds,
      all.size() / flags.seconds, text_bytes.load() / flags.seconds / 1e6, percentile(0.5) * 1e3,
      percentile(0.99) * 1e3, percentile(0.999) * 1e3);
  return errors.load() == 0 ? 0 : 1;
}
