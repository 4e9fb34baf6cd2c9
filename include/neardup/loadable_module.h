// Loading a part of a neardup program built as a module: a shared object
// that is dlopen()ed on first use rather than bound at every start, for
// neardup's own programs (the `neardup` CLI loads `serve`'s HTTP front end,
// neardup_server.so, this way; the library loads its format libraries and
// its PostgreSQL sink the same way, src/util/module_loader.h).
// It is public (and installed) only because neardup's front ends include
// nothing but include/neardup/: it is not an interface for other programs'
// modules, and like the rest of the installed C++ interface it has no
// stability promise before 1.0 (docs/ARCHITECTURE.md).
//
// A module is valid only with the program of the same build: both carry
// the build id (the project version and a configure-time SHA-256 of the
// headers whose types cross a module's boundary), and a module of another
// build is refused before any of its table is used. The module is looked
// for next to the running executable (the build tree), in
// <bindir>/../<libdir>/neardup relative to it (an install prefix that was
// moved), then in the configured <libdir>/neardup (where `cmake --install`
// puts it); the first that exists is used. No environment variable
// selects it.
// Cost: one dlopen (the module binds its own libraries then: for
// neardup_server.so, cpp-httplib, libssl and brotli, ~1.5-2 ms of CPU on
// the VM, docs/BENCHMARKS.md "Session 14, start-up"), and the module's
// code stays mapped until exit.
// Thread safety: LoadModule may be called from any thread; callers may keep
// its result in a function-local static (initialised once). A loaded
// module is never closed.
#ifndef NEARDUP_LOADABLE_MODULE_H_
#define NEARDUP_LOADABLE_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "neardup/status.h"

namespace neardup {

// The first member of every module's table. `abi` is read first (a table
// of a layout before the head had another member after it), then
// `build_id` is compared with this program's.
struct ModuleTableHead {
  uint32_t abi = 0;
  const char* build_id = nullptr;
};

// This build's id, e.g. "0.1.0-3f2a9c01d4e5b6a7".
const char* ModuleBuildId();

// dlopen()s the module `file_name` (e.g. "neardup_server.so"), calls its
// extern "C" function `symbol` (which returns its table) and checks the
// table's head: version `abi` and this build's id. `file_name` is a bare
// file name: one that is empty, "." or "..", or holds a '/' is
// InvalidArgument (nothing is looked for). Other errors
// (FailedPrecondition): "this neardup <purpose> with the module
// <file_name>, which is not installed (looked for <paths>)", "cannot load
// the module <path>: <loader's message>", the symbol missing, no table, or
// "the module <path> is of another neardup build (...)" naming both
// versions or build ids; the module is then closed.
// REQUIRES: symbol non-null.
Result<const ModuleTableHead*> LoadModuleHead(std::string_view file_name, const char* symbol,
                                              std::string_view purpose, uint32_t abi);

// LoadModuleHead for a table type: standard layout, its first member
// `ModuleTableHead head`, its version `Table::kAbi`.
template <class Table>
Result<const Table*> LoadModule(std::string_view file_name, const char* symbol,
                                std::string_view purpose) {
  static_assert(std::is_standard_layout_v<Table> && offsetof(Table, head) == 0);
  NEARDUP_ASSIGN_OR_RETURN(const ModuleTableHead* head,
                           LoadModuleHead(file_name, symbol, purpose, Table::kAbi));
  return reinterpret_cast<const Table*>(head);
}

}  // namespace neardup

#endif  // NEARDUP_LOADABLE_MODULE_H_
