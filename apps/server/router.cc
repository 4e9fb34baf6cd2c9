#include "router.h"

#include <utility>

namespace neardup::server {
namespace {

// The segments of a path after its leading '/' ("/a/b" -> a, b; "/" -> one
// empty segment; a trailing '/' gives a last empty segment).
template <typename Segment>
void SplitPath(std::string_view path, std::vector<Segment>* segments) {
  segments->clear();
  path.remove_prefix(1);
  while (true) {
    const size_t slash = path.find('/');
    segments->emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return;
    path.remove_prefix(slash + 1);
  }
}

}  // namespace

Router::Route& Router::Add(std::string path_template) {
  Route& route = routes_.emplace_back();
  SplitPath(std::string_view(path_template), &route.segments_);
  route.path_template_ = std::move(path_template);
  return route;
}

Router::Match Router::Find(HttpRequest* req) const {
  req->route = "other";
  if (req->path.empty() || req->path.front() != '/') return {};
  thread_local std::vector<std::string_view> segments;
  SplitPath(std::string_view(req->path), &segments);
  for (const Route& route : routes_) {
    if (route.segments_.size() != segments.size()) continue;
    std::string_view name, id;
    bool matched = true;
    for (size_t i = 0; i < segments.size() && matched; ++i) {
      const std::string& want = route.segments_[i];
      if (want == "{name}" || want == "{id}") {
        matched = !segments[i].empty();
        (want == "{name}" ? name : id) = segments[i];
      } else {
        matched = segments[i] == want;
      }
    }
    if (!matched) continue;
    req->name.assign(name);
    req->id.assign(id);
    req->route = route.path_template_;
    const std::string& method = req->method;
    const Handler* handler = nullptr;
    if (method == "GET" || method == "HEAD") {
      handler = &route.get_;
    } else if (method == "POST") {
      handler = &route.post_;
    } else if (method == "PUT") {
      handler = &route.put_;
    } else if (method == "DELETE") {
      handler = &route.delete_;
    }
    if (handler == nullptr || !*handler) return {Outcome::kWrongMethod, nullptr};
    return {Outcome::kMatched, handler};
  }
  return {};
}

}  // namespace neardup::server
