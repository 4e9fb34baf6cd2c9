#include "metrics.h"

#include <cstdio>

namespace neardup::server {

std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Metrics::Record(const std::string& route, const std::string& method, int status,
                     double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, method, status}];
  Histogram& histogram = latency_[route];
  size_t bucket = 0;
  while (bucket < kLatencyBounds.size() && seconds > kLatencyBounds[bucket]) ++bucket;
  if (bucket < kLatencyBounds.size()) ++histogram.buckets[bucket];
  ++histogram.count;
  histogram.sum += seconds;
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  char number[64];
  out += "# HELP neardup_http_requests_total HTTP requests by route, method and status.\n";
  out += "# TYPE neardup_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [route, method, status] = key;
    out += "neardup_http_requests_total{route=\"" + EscapeLabel(route) + "\",method=\"" +
           EscapeLabel(method) + "\",status=\"" + std::to_string(status) + "\"} " +
           std::to_string(count) + "\n";
  }
  out += "# HELP neardup_http_request_duration_seconds Time from routing to response, by route.\n";
  out += "# TYPE neardup_http_request_duration_seconds histogram\n";
  for (const auto& [route, histogram] : latency_) {
    const std::string label = "route=\"" + EscapeLabel(route) + "\"";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kLatencyBounds.size(); ++i) {
      cumulative += histogram.buckets[i];
      std::snprintf(number, sizeof(number), "%g", kLatencyBounds[i]);
      out += "neardup_http_request_duration_seconds_bucket{" + label + ",le=\"" + number + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "neardup_http_request_duration_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(histogram.count) + "\n";
    std::snprintf(number, sizeof(number), "%.9g", histogram.sum);
    out += "neardup_http_request_duration_seconds_sum{" + label + "} " + number + "\n";
    out += "neardup_http_request_duration_seconds_count{" + label + "} " +
           std::to_string(histogram.count) + "\n";
  }
  return out;
}

}  // namespace neardup::server
