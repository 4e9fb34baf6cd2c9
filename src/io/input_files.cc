#include "io/input_files.h"

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

Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& directory) {
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
    std::error_code status_ec;
    fs::file_status status = entry.status(status_ec);  // follows symbolic links
    bool dangling = false;
    if (status_ec || !fs::is_regular_file(status)) {
      std::error_code link_ec;
      dangling = entry.is_symlink(link_ec) && !link_ec &&
                 (status_ec == std::errc::no_such_file_or_directory ||
                  status.type() == fs::file_type::not_found);
      if (!dangling) continue;
    }
    const std::string& path = entry.path().native();
    size_t skip = root_text.size();
    if (skip < path.size() && path[skip] == '/') ++skip;
    entries.push_back(DirectoryEntry{path, path.substr(skip), dangling});
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
