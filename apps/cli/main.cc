// neardup: the command-line front end. Flag parsing and routing only; every
// algorithm lives in the library. Exit codes: exit_codes.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <functional>
#include <new>
#include <string>

#include "exit_codes.h"
#include "fingerprint_command.h"
#include "huge_pages.h"
#include "index_command.h"
#include "near_duplicate_commands.h"
#include "neardup/cpu_dispatch.h"
#include "output.h"
#include "query_command.h"
#include "recipe_command.h"
#include "report_command.h"
#include "similar_command.h"
#ifdef NEARDUP_HAVE_SERVER
#include "server_module.h"
#endif

namespace {

#ifdef NEARDUP_HAVE_SERVER
// `neardup serve`: its flags and the service are the server's
// (apps/server/server_module.h), in the module neardup_server.so loaded
// here, so that cpp-httplib, OpenSSL and brotli are bound only when serving
// (docs/SERVER.md, "Loading the HTTP module"), or linked in where no
// modules are built (sanitizers). The command line goes to it unchanged.
int RunServe(int argc, char** argv) {
#ifdef NEARDUP_SERVER_MODULE
  const neardup::Result<const neardup::server::ServerModule*> module =
      neardup::LoadModule<neardup::server::ServerModule>("neardup_server.so", "neardup_server_v1",
                                                         "serves HTTP (`neardup serve`)");
  if (!module.ok()) return neardup::cli::ReportError(module.status());
  return (*module)->serve_main(argc, argv);
#else
  return neardup_server_v1()->serve_main(argc, argv);
#endif
}

void RegisterServeStub(CLI::App* app, int argc, char** argv, std::function<int()>* run) {
  CLI::App* command =
      app->add_subcommand("serve", "Serve near-duplicate streams over HTTP/JSON (docs/SERVER.md)");
  command->set_help_flag();   // `serve --help` is the server's
  command->prefix_command();  // and so is every flag after `serve`
  command->callback([argc, argv, run] { *run = [argc, argv] { return RunServe(argc, argv); }; });
}
#endif

int ParseAndRun(int argc, char** argv) {
  CLI::App app{"neardup: find near-duplicate and similar documents, fast", "neardup"};
  // The CPU line tells a bug report or a benchmark record which kernels ran.
  app.set_version_flag("--version", std::string("neardup 0.1.0\n") + neardup::CpuDispatchLine());
  app.require_subcommand(1);

  std::function<int()> run;
  neardup::cli::RegisterFingerprintCommand(&app, &run);
  // Set by the corpus-wide commands' callbacks (huge pages, below).
  bool wants_huge_pages = false;
  neardup::cli::RegisterNearDuplicateCommands(&app, &run, {}, &wants_huge_pages);
  neardup::cli::RegisterRecipeCommand(&app, &run);
  neardup::cli::RegisterIndexCommand(&app, &run);
  neardup::cli::RegisterSimilarCommand(&app, &run, &wants_huge_pages);
  neardup::cli::RegisterQueryCommand(&app, &run);
  neardup::cli::RegisterReportCommand(&app, &run);
#ifdef NEARDUP_HAVE_SERVER
  RegisterServeStub(&app, argc, argv, &run);
#endif

  try {
    neardup::cli::RememberCommandLine(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return neardup::cli::kExitUsage;
  }
  if (!run) return neardup::cli::kExitUsage;
  // Transparent huge pages for malloc's blocks (huge_pages.h) for the
  // corpus-wide commands, whose working sets are gigabytes (`dedup` of 1M
  // documents: 1.76M minor faults with 4 KiB pages, 44-71K with huge
  // pages; CPU 13-24% lower in two loaded pairs of runs, unconfirmed).
  // Not for the others: `fingerprint` streams in bounded memory and the
  // restart's second start-up (a few ms) would be a share of a short
  // command's time; `serve` is a long-running process of small requests
  // with its own malloc settings. NEARDUP_HUGEPAGES=0 turns it off
  // (docs/CLI.md).
  if (wants_huge_pages) {
    neardup::cli::RestartWithMallocHugePages(argv, "NEARDUP_HUGEPAGES",
                                             "NEARDUP_HUGEPAGES_RESTARTED");
  }
  return run();
}

}  // namespace

int main(int argc, char** argv) {
  int code;
  // The library returns errors as values; what still escapes as an
  // exception (memory running out, a bug in a dependency) becomes an exit
  // code with a message rather than std::terminate's abort (134).
  try {
    code = ParseAndRun(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "neardup: out of memory\n");
    code = neardup::cli::kExitIo;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neardup: internal error: %s\n", e.what());
    code = neardup::cli::kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "neardup: internal error: unknown exception\n");
    code = neardup::cli::kExitInternal;
  }
  // Results printed with printf or by the help text are checked here: a
  // full disk or a closed stdout must not end in exit 0.
  neardup::Status flushed = neardup::cli::FlushStandardOutput();
  if (!flushed.ok() && code == neardup::cli::kExitOk) code = neardup::cli::ReportError(flushed);
  return code;
}
