// Loading a part of neardup built as a module (a shared object that the
// `neardup` CLI dlopen()s on first use instead of binding its libraries at
// every start: extract/extract_backend.h, sink/postgres_sink.h).
// Thread safety: LoadModuleEntry may be called from any thread; callers
// call it once (std::call_once) and keep the result.
#ifndef NEARDUP_UTIL_MODULE_LOADER_H_
#define NEARDUP_UTIL_MODULE_LOADER_H_

#include <string_view>

#include "neardup/status.h"

namespace neardup::internal {

// dlopen()s the module `file_name` (e.g. "neardup_extract.so") and returns
// the address of its function `symbol`. The module is looked for next to
// the running executable (the build tree), in <bindir>/../<libdir>/neardup
// relative to it (an install prefix that was moved), then in the configured
// <libdir>/neardup (where `cmake --install` puts it); it is never closed.
// Errors (FailedPrecondition): "this neardup <purpose> with the module
// <file_name>, which is not installed (looked for <paths>)", or the
// loader's message, or the symbol missing.
Result<void*> LoadModuleEntry(std::string_view file_name, const char* symbol,
                              std::string_view purpose);

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_MODULE_LOADER_H_
