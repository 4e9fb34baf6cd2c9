// Opening a collection for writing from the command line: one writer at a
// time (the collection's LOCK), so a second writer either waits (--wait
// SECONDS) or ends with its own exit code, kExitBusy, rather than a usage
// error.
#ifndef NEARDUP_APPS_CLI_OPEN_COLLECTION_H_
#define NEARDUP_APPS_CLI_OPEN_COLLECTION_H_

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "neardup/collection.h"

namespace neardup::cli {

struct WaitFlags {
  // Seconds to wait for another writer to finish; 0: fail at once.
  double wait_seconds = 0.0;

  void Register(CLI::App* app);
};

// Opens `dir` read-write into *collection, retrying while another process
// holds the writer lock, up to wait.wait_seconds. Returns kExitOk, or the
// exit code of the failure after reporting it on stderr: kExitBusy when the
// lock was still held, ExitCodeFor(status) otherwise.
int OpenForWriting(const std::string& dir, const WaitFlags& wait,
                   std::unique_ptr<Collection>* collection);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_OPEN_COLLECTION_H_
