// neardup_server.so: `neardup serve` (this directory, with cpp-httplib,
// OpenSSL and brotli) as a module that the `neardup` CLI loads when it
// serves (neardup/loadable_module.h), so that those libraries are not bound
// at every start of `neardup` (docs/SERVER.md, "Loading the HTTP module").
// Builds without modules (sanitizers) link the table into the CLI instead.
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
