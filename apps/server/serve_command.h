// `neardup serve`: the HTTP/JSON service (docs/SERVER.md). Linked into the
// `neardup` command; the service itself is apps/server/service.h.
#ifndef NEARDUP_APPS_SERVER_SERVE_COMMAND_H_
#define NEARDUP_APPS_SERVER_SERVE_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::server {

void RegisterServeCommand(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_SERVE_COMMAND_H_
