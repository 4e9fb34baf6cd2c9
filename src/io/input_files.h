// How inputs become files: the JSONL-by-name rule and directory listing.
#ifndef NEARDUP_IO_INPUT_FILES_H_
#define NEARDUP_IO_INPUT_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup::internal {

// True when `name`, less one trailing ".gz" or ".zst", ends in ".jsonl" or
// ".ndjson", in any letter case.
bool IsJsonlName(std::string_view name);

struct DirectoryEntry {
  std::string path;            // openable: the directory as given joined with `name`
  std::string name;            // relative to the directory, '/'-separated
  bool dangling_link = false;  // a symbolic link whose target does not exist
};

// Lists the regular files below `directory` (symbolic links to files
// followed, to directories not) and dangling symbolic links, sorted byte-wise
// by name. IoError naming the path when a directory cannot be read.
Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& directory);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_INPUT_FILES_H_
