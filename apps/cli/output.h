// Buffered writing of result lines to stdout or a file, with write errors
// (a full disk, a closed pipe) reported as a Status instead of lost.
#ifndef NEARDUP_APPS_CLI_OUTPUT_H_
#define NEARDUP_APPS_CLI_OUTPUT_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::cli {

class OutputFile {
 public:
  // "-" is stdout.
  static Result<OutputFile> Open(const std::string& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  // Appends to the buffer; flushes when it is large.
  Status Write(std::string_view bytes);
  // Flushes and, for a file, closes it; reports any deferred write error.
  Status Close();

 private:
  OutputFile(std::FILE* file, std::string name, bool owned);
  Status Flush();

  std::FILE* file_;
  std::string name_;
  bool owned_;
  std::string buffer_;
};

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_OUTPUT_H_
