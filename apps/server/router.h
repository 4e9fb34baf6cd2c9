// Router: the service's routes without regular expressions. A route is a
// path template of literal segments and the parameters {name} and {id}
// (each one non-empty segment, as cpp-httplib's `([^/]+)` was), with one
// handler per method. Matching splits the path once and compares segments:
// about 0.1 us for the longest table, where cpp-httplib tried each route's
// std::regex in turn (1.5-2 us for a document POST, more for the routes
// registered last; docs/SERVER.md "Transport").
// Thread safety: Add before serving; Match may then run concurrently.
#ifndef NEARDUP_APPS_SERVER_ROUTER_H_
#define NEARDUP_APPS_SERVER_ROUTER_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http_message.h"

namespace neardup::server {

class Router {
 public:
  using Handler = std::function<void(const HttpRequest&, httplib::Response&)>;

  // A route's handlers, one per method; a method without one answers 405
  // on the route's paths.
  class Route {
   public:
    Route& Get(Handler handler) { return Set(&get_, std::move(handler)); }
    Route& Post(Handler handler) { return Set(&post_, std::move(handler)); }
    Route& Put(Handler handler) { return Set(&put_, std::move(handler)); }
    Route& Delete(Handler handler) { return Set(&delete_, std::move(handler)); }

   private:
    friend class Router;
    Route& Set(Handler* slot, Handler handler) {
      *slot = std::move(handler);
      return *this;
    }
    std::string path_template_;
    std::vector<std::string> segments_;
    Handler get_, post_, put_, delete_;
  };

  // Adds a route; set its handlers on the answer (valid until the next
  // Add). REQUIRES: `path_template` starts with '/'; its segments are
  // literals, "{name}" or "{id}" (each at most once).
  Route& Add(std::string path_template);

  enum class Outcome { kMatched, kNoRoute, kWrongMethod };
  struct Match {
    Outcome outcome = Outcome::kNoRoute;
    const Handler* handler = nullptr;  // set when kMatched
  };

  // Finds the route of req->path and, for req->method, its handler; sets
  // req->name, req->id and req->route (the template, or "other" when no
  // route matches). HEAD uses the GET handler.
  Match Find(HttpRequest* req) const;

 private:
  std::vector<Route> routes_;
};

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_ROUTER_H_
