#include "neardup/loadable_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "util/module_build_id.h"  // generated (util/CMakeLists.txt)

namespace neardup {
namespace {

// The directory of the running executable ("" when unknown, or when the
// path filled the buffer and may be truncated).
std::string ExecutableDirectory() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(path) - 1) return "";
  const std::string_view exe(path, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(exe.substr(0, slash));
}

// A dlopen()ed module and the address of its entry function.
struct OpenedModule {
  void* handle = nullptr;
  void* entry = nullptr;
  std::string path;
};

Result<OpenedModule> OpenModule(std::string_view file_name, const char* symbol,
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
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return FailedPreconditionError("cannot load the module " + path + ": " +
                                     (why != nullptr ? why : "dlopen failed"));
    }
    void* entry = ::dlsym(handle, symbol);
    if (entry == nullptr) {
      ::dlclose(handle);
      return FailedPreconditionError("the module " + path + " has no " + symbol +
                                     ": it is of another neardup build (this neardup " +
                                     ModuleBuildId() + ")");
    }
    return OpenedModule{handle, entry, path};
  }
  return FailedPreconditionError("this neardup " + std::string(purpose) + " with the module " +
                                 name + ", which is not installed (looked for " + tried + ")");
}

Status CheckModuleTable(const ModuleTableHead* head, uint32_t abi, const std::string& path) {
  if (head == nullptr) {
    return FailedPreconditionError("the module " + path + " returned no table");
  }
  if (head->abi != abi) {
    return FailedPreconditionError(
        "the module " + path + " is of another neardup build (table version " +
        std::to_string(head->abi) + ", this neardup " + std::to_string(abi) + ")");
  }
  const char* id = head->build_id != nullptr ? head->build_id : "none";
  if (std::strcmp(id, ModuleBuildId()) != 0) {
    return FailedPreconditionError("the module " + path +
                                   " is of another neardup build (build id " + id +
                                   ", this neardup " + ModuleBuildId() + ")");
  }
  return Status::Ok();
}

}  // namespace

const char* ModuleBuildId() { return NEARDUP_MODULE_BUILD_ID; }

Result<const ModuleTableHead*> LoadModuleHead(std::string_view file_name, const char* symbol,
                                              std::string_view purpose, uint32_t abi) {
  // A bare file name: joined onto the directories above, a path could
  // leave them ("../../tmp/x.so").
  if (file_name.empty() || file_name == "." || file_name == ".." ||
      file_name.find('/') != std::string_view::npos) {
    return InvalidArgumentError("a module is named by its file name alone, not \"" +
                                std::string(file_name) + "\"");
  }
  NEARDUP_ASSIGN_OR_RETURN(OpenedModule module, OpenModule(file_name, symbol, purpose));
  // The entry returns its table, whose first member is the head (a table
  // pointer and a head pointer are the same address).
  const auto entry = reinterpret_cast<const ModuleTableHead* (*)()>(module.entry);
  const ModuleTableHead* head = entry();
  Status status = CheckModuleTable(head, abi, module.path);
  if (!status.ok()) {
    ::dlclose(module.handle);
    return status;
  }
  return head;  // the module is never closed: its code runs until exit
}

}  // namespace neardup
