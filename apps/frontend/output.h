// Buffered writing of result lines to stdout or a file, with write errors
// (a full disk, a closed pipe) reported as a Status instead of lost.
//
// A file output is atomic: the lines go to a hidden temporary file in the
// same directory (".NAME.neardup-XXXXXX"), which Finish(true) fsyncs and
// renames over NAME; Finish(false), or destroying the output unfinished,
// removes the temporary, so a run that fails or is killed leaves the previous
// NAME untouched (a killed run may leave its temporary behind, never a
// partial NAME). With --no-fsync (SetFileOutputsFsync(false)) the temporary
// is still renamed only on success, but neither it nor its directory is
// fsynced and no writeback is started as it is written: after an OS crash or
// a power loss a renamed NAME may miss data, be empty, or (on ext4, where the
// temporary is sized before it is written) have its full size with ranges
// of zero bytes (docs/CLI.md, "Outputs").
// Outputs that are not regular files (/dev/null, a FIFO, a
// terminal) are written in place, and standard output streams as it goes.
//
// The writer is the CLI's own rather than the library's
// (src/index/chunk_index_io.h's AtomicFileWriter): that one writes a fixed
// "<path>.tmp", which two runs writing the same output would share, and it is
// internal to the index module.
#ifndef NEARDUP_APPS_CLI_OUTPUT_H_
#define NEARDUP_APPS_CLI_OUTPUT_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/positioned_output.h"
#include "neardup/status.h"

namespace neardup::cli {

// InvalidArgument when `output` names one of `inputs` (the same file by
// device and inode, through any link, a file inside an input directory, or a
// new file that would be created inside one). "-" on either side is stdin or
// stdout and never clashes. Nothing is opened for writing.
Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs);

// Whether a file output (and neardup-mpi's ranks' parts of it) is fsynced
// before the rename, with writeback started as it is written, and its
// directory after: true unless --no-fsync (RegisterNoFsyncFlag) was given.
// Process-wide; set while the command line is parsed, before any thread.
void SetFileOutputsFsync(bool fsync);
bool FileOutputsFsync();

class OutputFile {
 public:
  // "-" is stdout. Checks CheckOutputIsNotAnInput(path, inputs) first.
  // A regular file is written to a hidden temporary beside it,
  // ".NAME.neardup-XXXXXX", locked (flock) until Finish has renamed or
  // removed it; Open then removes the temporaries of the same NAME in that
  // directory that no process holds locked (a killed run's), never a live
  // run's nor another output's. Where the lock fails (a filesystem without
  // locks) the temporary is ".NAME.neardup-XXXXXX.unlocked", which no
  // sweep removes, and nothing is swept.
  static Result<OutputFile> Open(const std::string& path,
                                 const std::vector<std::string>& inputs = {});
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  // Unfinished: as Finish(false).
  ~OutputFile();

  // Appends to the buffer; flushes when it is large.
  Status Write(std::string_view bytes);
  // success: flushes, fsyncs (unless --no-fsync) and renames the temporary over the output (a
  // stream is flushed); reports any deferred write error, and then removes the
  // temporary. !success: removes the temporary (a stream is still flushed:
  // what was printed stays printed). Idempotent.
  Status Finish(bool success);

  // True when the output is a regular file written through a descriptor
  // that pwrite can place bytes in: the temporary of a file output, or
  // standard output redirected to a regular file not opened for appending
  // (`> file`, not `>> file`). Pipes, terminals and /dev/null are written
  // in order only.
  bool positioned() const { return positioned_; }

  // Flushes what was written so far and runs `write` with a PositionedOutput
  // whose offset 0 is where that ends; `write` sets *written as
  // CopyKeptRecordsByLocationAt does. Afterwards the output continues after
  // the bytes written; on an error it is cut back to the written prefix, so
  // that an output written in place (standard output) holds what an ordered
  // write would have left, never later bytes after a gap.
  // REQUIRES: positioned().
  Status WriteAtOffsets(const std::function<Status(PositionedOutput&, uint64_t*)>& write);

  // The hidden temporary that Finish(true) renames over the output; empty
  // for standard output and outputs written in place. Lets other processes
  // (neardup-mpi's ranks) write their parts into it, at their own offsets.
  const std::string& temp_path() const { return temp_path_; }

 private:
  OutputFile(std::FILE* file, std::string name, bool owned, std::string temp_path);
  Status Flush();
  Status WriteNow(std::string_view bytes);  // unbuffered by us (stdio may still)
  void ReleaseLock();

  std::FILE* file_;
  std::string name_;       // the output as named, for messages and the rename
  bool owned_;             // closed by Finish (not stdout)
  std::string temp_path_;  // empty: written in place
  bool positioned_ = false;
  uint64_t written_back_ = 0;  // an fsynced output: writeback started below this
  // A second descriptor of the temporary's open file, holding its flock
  // past the stream's close until the rename; -1: none.
  int lock_fd_ = -1;
  std::string buffer_;
};

// The exit status's last word on standard output: flushes stdout and
// std::cout and reports a write error that printf or the help text hid
// (`neardup recipe list > /dev/full`). IoError, else Ok.
Status FlushStandardOutput();

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_OUTPUT_H_
