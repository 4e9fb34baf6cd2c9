// neardup_server.so: `neardup serve` (this directory, with cpp-httplib,
// OpenSSL and brotli) as a module that the `neardup` CLI loads when it
// serves (neardup/loadable_module.h), so that those libraries are not bound
// at every start of `neardup` (docs/SERVER.md, "Loading the HTTP module").
// Builds without modules (sanitizers) link the table into the CLI instead.
//
// The contract between the CLI and the module:
// - Only argv crosses: the module parses the whole command line again
//   ("neardup serve ..."), so the CLI's top-level app must keep having no
//   options of its own besides --help and --version.
// - The module has its own copy of neardup's core (linked in, kept local
//   by its version script and RTLD_LOCAL): nothing the CLI sets through the
//   library (a future top-level flag, a CPU-path override, Env, malloc
//   tuning) reaches the server. Process-wide state (mallopt, the signal
//   mask, TBB) has one instance.
// - The CLI starts no thread before calling serve_main: `serve` blocks
//   SIGTERM and SIGINT in the calling thread and counts on every later
//   thread inheriting that mask (serve_command.cc), so a thread started
//   earlier could take the signal and kill the process.
// - serve_main never throws (an exception becomes an exit code inside).
// - A copy or hard link of `neardup` in a world-writable directory loads a
//   neardup_server.so planted beside it (the executable's own directory is
//   searched first): do not run it from there (docs/SERVER.md).
#ifndef NEARDUP_APPS_SERVER_SERVER_MODULE_H_
#define NEARDUP_APPS_SERVER_SERVER_MODULE_H_

#include <cstdint>

#include "neardup/loadable_module.h"

namespace neardup::server {

// The module's table (kAbi is bumped when the head's place or this layout
// changes; the build id covers this header).
struct ServerModule {
  static constexpr uint32_t kAbi = 1;
  ModuleTableHead head{kAbi, ModuleBuildId()};
  // `neardup serve`: argv is the command line as `neardup` got it
  // ("neardup", "serve", flags...); parses its flags, serves until SIGTERM
  // or SIGINT, and returns the exit code (docs/SERVER.md). Never throws:
  // an exception inside becomes the CLI's message and exit code (3 for
  // memory running out, 1 otherwise).
  int (*serve_main)(int argc, char** argv);
};

}  // namespace neardup::server

// Defined in server_module.cc (exported by the module, alone).
extern "C" const neardup::server::ServerModule* neardup_server_v1();

#endif  // NEARDUP_APPS_SERVER_SERVER_MODULE_H_
