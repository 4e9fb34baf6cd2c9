// The entry of neardup_server.so (server_module.h): `neardup serve`'s flags
// (serve_command.h) parsed here, as the CLI would, and the service run.
#include "server_module.h"

#include <CLI/CLI.hpp>

#include <functional>

#include "serve_command.h"

namespace neardup::server {
namespace {

constexpr int kExitUsage = 2;

// The help and errors read as the CLI's own (an app named "neardup" with
// the one subcommand); CLI11's exceptions never leave the module.
int ServeMain(int argc, char** argv) {
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

}  // namespace
}  // namespace neardup::server

extern "C" __attribute__((visibility("default"))) const neardup::server::ServerModule*
neardup_server_v1() {
  static const neardup::server::ServerModule table{.serve_main = &neardup::server::ServeMain};
  return &table;
}
