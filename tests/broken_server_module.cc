// A neardup_server.so that the loader must refuse (neardup/loadable_module.h),
// for serve_module_cli_test's error paths; built three times:
// NEARDUP_BROKEN_WRONG_ABI: a table of another version (kAbi + 98);
// NEARDUP_BROKEN_NO_TABLE: the entry returns no table;
// NEARDUP_BROKEN_NO_SYMBOL: no neardup_server_v1 at all.
#include "server_module.h"

#if defined(NEARDUP_BROKEN_NO_SYMBOL)
extern "C" __attribute__((visibility("default"))) int neardup_server_v0() { return 0; }
#else
extern "C" __attribute__((visibility("default"))) const neardup::server::ServerModule*
neardup_server_v1() {
#if defined(NEARDUP_BROKEN_WRONG_ABI)
  static const neardup::server::ServerModule table{
      .head = {neardup::server::ServerModule::kAbi + 98, neardup::ModuleBuildId()},
      .serve_main = nullptr,
  };
  return &table;
#else
  return nullptr;
#endif
}
#endif
