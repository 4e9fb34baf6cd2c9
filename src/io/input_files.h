// How inputs become files: the JSONL-by-name rule and directory listing.
#ifndef NEARDUP_IO_INPUT_FILES_H_
#define NEARDUP_IO_INPUT_FILES_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup::internal {

// True when `name`, less one trailing ".gz" or ".zst", ends in ".jsonl" or
// ".ndjson", in any letter case.
bool IsJsonlName(std::string_view name);

struct DirectoryEntry {
  std::string path;         // openable: the directory as given joined with `name`
  std::string name;         // relative to the directory, '/'-separated
  std::string skip_reason;  // empty: a file to read; else why it is not read
};

// A directory not to enter, by identity (any path to it).
struct ExcludedDirectoryId {
  dev_t device;
  ino_t inode;
  std::string reason;
};

// Lists the regular files below `directory` (symbolic links to files
// followed, to directories not), and every other entry that is not a
// directory entered, with a skip_reason: a dangling symbolic link, a symbolic
// link loop, a link to a directory, a FIFO, a socket, a device, an entry that
// cannot be examined, and each directory of `excluded` (not entered). Sorted
// byte-wise by name. IoError naming the path when a directory cannot be read.
Result<std::vector<DirectoryEntry>> ListDirectory(
    const std::string& directory, const std::vector<ExcludedDirectoryId>& excluded = {});

}  // namespace neardup::internal

#endif  // NEARDUP_IO_INPUT_FILES_H_
