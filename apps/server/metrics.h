// Metrics: the service's request counters and latency histograms, written in
// the Prometheus text exposition format (version 0.0.4) by hand (there is no
// Prometheus client library in Debian).
// Cost: Record is one mutex and two map look-ups; Render is O(series).
// Thread safety: every method may be called concurrently.
#ifndef NEARDUP_APPS_SERVER_METRICS_H_
#define NEARDUP_APPS_SERVER_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace neardup::server {

class Metrics {
 public:
  // The upper bounds of the latency histogram, in seconds.
  static constexpr std::array<double, 12> kLatencyBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5};

  // One finished request: its route template (e.g.
  // "/v1/streams/{name}/documents"), method, status and duration.
  void Record(const std::string& route, const std::string& method, int status, double seconds);

  // The request series (counters and histograms) in the text format.
  std::string Render() const;

 private:
  struct Histogram {
    std::array<uint64_t, kLatencyBounds.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
};

// A label value with \, " and newline escaped as the text format requires.
std::string EscapeLabel(const std::string& value);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_METRICS_H_
