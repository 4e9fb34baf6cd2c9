// A neardup_server.so of another build, for serve_module_cli_test: its
// table has this build's layout and version but another build id, so
// `neardup serve` must refuse it (neardup/loadable_module.h) before calling
// into it.
#include "server_module.h"

extern "C" __attribute__((visibility("default"))) const neardup::server::ServerModule*
neardup_server_v1() {
  static const neardup::server::ServerModule table{
      .head = {neardup::server::ServerModule::kAbi, "0.0.0-another"},
      .serve_main = nullptr,
  };
  return &table;
}
