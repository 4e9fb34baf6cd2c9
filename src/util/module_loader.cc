#include "util/module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

namespace neardup::internal {
namespace {

// The directory of the running executable ("" when unknown).
std::string ExecutableDirectory() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  const std::string_view exe(path, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(exe.substr(0, slash));
}

}  // namespace

Result<void*> LoadModuleEntry(std::string_view file_name, const char* symbol,
                              std::string_view purpose) {
  const std::string name(file_name);
  const std::string dir = ExecutableDirectory();
  std::vector<std::string> candidates;
  if (!dir.empty()) {
    candidates.push_back(dir + "/" + name);
    candidates.push_back(dir + "/" NEARDUP_MODULE_RELATIVE_DIR "/" + name);
  }
  candidates.push_back(NEARDUP_MODULE_INSTALL_DIR "/" + name);
  std::string tried;
  for (const std::string& path : candidates) {
    if (::access(path.c_str(), F_OK) != 0) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // RTLD_LOCAL: the module's own copies of neardup's code stay its own.
    // Never closed: its functions and thread-local state live until exit.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return FailedPreconditionError("cannot load the module " + path + ": " +
                                     (why != nullptr ? why : "dlopen failed"));
    }
    void* entry = ::dlsym(handle, symbol);
    if (entry == nullptr) {
      return FailedPreconditionError("the module " + path + " has no " + symbol +
                                     ": it is of another neardup build");
    }
    return entry;
  }
  return FailedPreconditionError("this neardup " + std::string(purpose) + " with the module " +
                                 name + ", which is not installed (looked for " + tried + ")");
}

}  // namespace neardup::internal
