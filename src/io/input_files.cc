#include "io/input_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

namespace neardup::internal {
namespace {

bool EndsWithIgnoringCase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  text = text.substr(text.size() - suffix.size());
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

// Why a listed entry that is not a regular file is not read; empty for a
// regular file. *enter: a real directory to descend into.
std::string SkipReason(const std::filesystem::directory_entry& entry,
                       const std::vector<ExcludedDirectoryId>& excluded, bool* enter) {
  namespace fs = std::filesystem;
  *enter = false;
  std::error_code link_ec;
  const bool is_link = entry.is_symlink(link_ec) && !link_ec;
  std::error_code status_ec;
  const fs::file_status status = entry.status(status_ec);  // follows symbolic links
  if (status_ec || status.type() == fs::file_type::not_found) {
    if (status_ec == std::errc::too_many_symbolic_link_levels) return "symbolic link loop";
    if (is_link && (status_ec == std::errc::no_such_file_or_directory ||
                    status.type() == fs::file_type::not_found)) {
      return "dangling symbolic link";
    }
    return "cannot examine it: " + status_ec.message();
  }
  switch (status.type()) {
    case fs::file_type::regular:
      return "";
    case fs::file_type::directory: {
      if (is_link) return "symbolic link to a directory (not followed)";
      struct stat st;
      if (!excluded.empty() && ::stat(entry.path().c_str(), &st) == 0) {
        for (const ExcludedDirectoryId& dir : excluded) {
          if (dir.device == st.st_dev && dir.inode == st.st_ino) return dir.reason;
        }
      }
      *enter = true;
      return "";
    }
    case fs::file_type::fifo:
      return "FIFO (not read inside a directory: it may never end)";
    case fs::file_type::socket:
      return "socket (not a file)";
    case fs::file_type::character:
    case fs::file_type::block:
      return "device (not read inside a directory)";
    default:
      return "not a regular file";
  }
}

}  // namespace

bool IsJsonlName(std::string_view name) {
  for (std::string_view compressed : {".gz", ".zst"}) {
    if (EndsWithIgnoringCase(name, compressed)) {
      name.remove_suffix(compressed.size());
      break;
    }
  }
  return EndsWithIgnoringCase(name, ".jsonl") || EndsWithIgnoringCase(name, ".ndjson");
}

Result<std::vector<DirectoryEntry>> ListDirectory(
    const std::string& directory, const std::vector<ExcludedDirectoryId>& excluded) {
  namespace fs = std::filesystem;
  std::vector<DirectoryEntry> entries;
  std::error_code ec;
  const fs::path root(directory);
  const std::string& root_text = root.native();
  // Default options: symbolic links to directories are listed, not entered.
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  const fs::recursive_directory_iterator end;
  std::string last_path = directory;  // where a listing error happened
  for (; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    last_path = entry.path().native();
    bool enter = false;
    std::string reason = SkipReason(entry, excluded, &enter);
    if (enter) continue;  // its files follow
    // An excluded directory is listed (to be reported) but not entered.
    std::error_code type_ec;
    if (entry.is_directory(type_ec) && !entry.is_symlink(type_ec)) it.disable_recursion_pending();
    const std::string& path = entry.path().native();
    size_t skip = root_text.size();
    if (skip < path.size() && path[skip] == '/') ++skip;
    entries.push_back(DirectoryEntry{path, path.substr(skip), std::move(reason)});
  }
  if (ec) {
    return IoError(directory + ": cannot list directory (at " + last_path + "): " + ec.message());
  }
  // std::string compares bytes as unsigned char (char_traits<char>::lt), so
  // the order does not depend on the locale.
  std::sort(entries.begin(), entries.end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace neardup::internal
