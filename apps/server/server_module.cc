// The entry of neardup_server.so (server_module.h): `neardup serve`'s flags
// (serve_command.h) parsed here, as the CLI would, and the service run.
#include "server_module.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <functional>
#include <new>

#include "serve_command.h"

namespace neardup::server {
namespace {

// As apps/frontend/exit_codes.h (the CLI's): 1 internal, 2 usage, 3 I/O
// (memory running out included).
constexpr int kExitInternal = 1;
constexpr int kExitUsage = 2;
constexpr int kExitIo = 3;

// The help and errors read as the CLI's own (an app named "neardup" with
// the one subcommand); CLI11's exceptions never leave the module.
int ParseAndServe(int argc, char** argv) {
  CLI::App app{"neardup: find near-duplicate and similar documents, fast", "neardup"};
  app.require_subcommand(1);
  std::function<int()> run;
  RegisterServeCommand(&app, &run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return run ? run() : kExitUsage;
}

// No exception leaves the module (STYLE: none crosses a library boundary):
// what escapes the service (memory running out, std::thread failing with
// std::system_error, a bug in a dependency) becomes main.cc's message and
// exit code here.
int ServeMain(int argc, char** argv) noexcept {
  try {
    return ParseAndServe(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "neardup: out of memory\n");
    return kExitIo;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neardup: internal error: %s\n", e.what());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "neardup: internal error: unknown exception\n");
    return kExitInternal;
  }
}

}  // namespace
}  // namespace neardup::server

extern "C" __attribute__((visibility("default"))) const neardup::server::ServerModule*
neardup_server_v1() {
  static const neardup::server::ServerModule table{.serve_main = &neardup::server::ServeMain};
  return &table;
}
