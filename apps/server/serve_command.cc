#include "serve_command.h"

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "neardup/malloc_tuning.h"
#include "served_collection.h"
#include "service.h"

namespace neardup::server {
namespace {

// Exit codes (as the CLI's): 0 ok, 2 usage, 3 I/O.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitIo = 3;

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./neardup-data";
  std::string token_file;
  int threads = 64;
  size_t max_connections = 0;
  uint64_t max_body_mb = 64;
  uint64_t max_document_mb = 16;
  std::vector<std::string> collections;  // NAME=DIR
  std::string log_format = "text";
  bool no_fsync = false;
  uint64_t snapshot_log_mb = 64;
  double index_merge_idle = 30;  // seconds
};

// glibc's malloc, left to its defaults, cost the server 5-15% of its CPU
// (perf, session 11): a stream's state grows by ~1.5 KB a document, and a
// pool thread's arena grew its heap with one mprotect per few pages
// (M_TOP_PAD 0: ~3.5 us an add); a batch body or its answers over 128 KiB
// were mmapped and unmapped per request, and an arena's top over 128 KiB
// was given back (madvise) after a request and faulted in again by the
// next (page faults 15.6% of a batch route's CPU, 6.4% with these).
// What M_TOP_PAD does for a thread's arena (glibc 2.36): a new heap is
// made accessible 4 MiB at a time and trimming leaves that much; past
// that, glibc grows a non-main heap by what the request needs (no pad),
// so an arena whose state outgrows its first 4 MiB takes an mprotect per
// growth step again. What this keeps: at most M_TOP_PAD + M_TRIM_THRESHOLD
// free bytes at the top of each arena (glibc makes up to 8 per core, one
// per pool thread below that: 20 MiB x arenas, uncounted by a stream's
// memory figure). The settings are TuneMallocForServer()'s
// (neardup/malloc_tuning.h): left alone when GLIBC_TUNABLES names one of
// them, so that the defaults can still be measured against.
int RunServe(const ServeFlags& flags) {
  (void)TuneMallocForServer();
  ServiceOptions options;
  const size_t colon = flags.listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "neardup serve: --listen (%s) must be HOST:PORT\n", flags.listen.c_str());
    return kExitUsage;
  }
  options.host = flags.listen.substr(0, colon);
  try {
    options.port = std::stoi(flags.listen.substr(colon + 1));
  } catch (const std::exception&) {
    options.port = -1;
  }
  if (options.port < 0 || options.port > 65535) {
    std::fprintf(stderr, "neardup serve: --listen port (%s) must be in [0, 65535]\n",
                 flags.listen.substr(colon + 1).c_str());
    return kExitUsage;
  }
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file);
    std::stringstream contents;
    contents << in.rdbuf();
    if (!in) {
      std::fprintf(stderr, "neardup serve: cannot read --token-file %s\n",
                   flags.token_file.c_str());
      return kExitIo;
    }
    options.token = contents.str();
    while (!options.token.empty() &&
           (options.token.back() == '\n' || options.token.back() == '\r' ||
            options.token.back() == ' ')) {
      options.token.pop_back();
    }
    if (options.token.empty()) {
      std::fprintf(stderr, "neardup serve: --token-file %s is empty\n", flags.token_file.c_str());
      return kExitUsage;
    }
  } else if (!IsLoopbackHost(options.host)) {
    std::fprintf(stderr,
                 "neardup serve: refusing to listen on %s without --token-file (only loopback "
                 "addresses may go without authentication)\n",
                 options.host.c_str());
    return kExitUsage;
  }
  options.data_dir = flags.data_dir;
  options.threads = flags.threads;
  options.max_connections = flags.max_connections;
  options.max_body_mb = flags.max_body_mb;
  options.max_document_mb = flags.max_document_mb;
  for (const std::string& collection : flags.collections) {
    const size_t equals = collection.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == collection.size()) {
      std::fprintf(stderr, "neardup serve: --collection (%s) must be NAME=DIR\n",
                   collection.c_str());
      return kExitUsage;
    }
    options.collections.emplace_back(collection.substr(0, equals), collection.substr(equals + 1));
  }
  options.log_json = flags.log_format == "json";
  options.sync = !flags.no_fsync;
  options.snapshot_log_bytes = flags.snapshot_log_mb << 20;
  Result<std::chrono::milliseconds> idle_merge = IdleMergeDelay(flags.index_merge_idle);
  if (!idle_merge.ok()) {
    std::fprintf(stderr, "neardup serve: %s\n", idle_merge.status().message().c_str());
    return kExitUsage;
  }
  options.collection_idle_merge = *idle_merge;
  if (flags.no_fsync) {
    std::fprintf(stderr, "neardup serve: --no-fsync: answers are NOT durable (benchmarks only)\n");
  }

  // SIGTERM and SIGINT are taken by one watcher thread (blocked everywhere
  // else, including the pool threads created after this).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Service service(options);
  Result<int> port = service.Bind();
  if (!port.ok()) {
    std::fprintf(stderr, "neardup serve: %s\n", port.status().ToString().c_str());
    return port.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitIo;
  }
  std::fprintf(stderr, "neardup serve: listening on %s:%d, data in %s\n", options.host.c_str(),
               *port, options.data_dir.c_str());
  std::fflush(stderr);
  std::thread watcher([&service, signals] {
    int received = 0;
    sigwait(&signals, &received);
    // Stop accepting; the pool finishes the requests in flight (each answer
    // is synced before it is sent, so nothing is left to flush).
    service.Stop();
  });
  Status served = service.Run();
  // Wake the watcher if the server stopped on its own.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  if (!served.ok()) {
    std::fprintf(stderr, "neardup serve: %s\n", served.ToString().c_str());
    return kExitIo;
  }
  std::fprintf(stderr, "neardup serve: stopped\n");
  return kExitOk;
}

}  // namespace

void RegisterServeCommand(CLI::App* app, std::function<int()>* run) {
  CLI::App* command =
      app->add_subcommand("serve", "Serve near-duplicate streams over HTTP/JSON (docs/SERVER.md)");
  auto flags = std::make_shared<ServeFlags>();
  command->add_option("--listen", flags->listen, "HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  command->add_option("--data-dir", flags->data_dir, "Where the streams live")
      ->capture_default_str();
  command->add_option("--token-file", flags->token_file,
                      "File holding the bearer token clients must send (required off loopback)");
  command->add_option("--threads", flags->threads, "Server threads (above the connection count)")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096));
  command
      ->add_option("--max-connections", flags->max_connections,
                   "Connections served at once; more get 503 and are closed (0: --threads, "
                   "the most possible)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  command->add_option("--max-body-mb", flags->max_body_mb, "Largest request body, MiB (413 above)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  command
      ->add_option("--max-document-mb", flags->max_document_mb,
                   "Largest document text, MiB (413 for a request holding a larger one)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  command->add_option("--collection", flags->collections,
                      "NAME=DIR: serve the containment collection in DIR (`neardup index "
                      "create`) under /v1/collections/NAME; repeatable. The server becomes its "
                      "one writer");
  command->add_option("--log-format", flags->log_format, "Request log on stderr: text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  command
      ->add_option("--snapshot-log-mb", flags->snapshot_log_mb,
                   "A growing stream's log starts a new file every this many MiB, and a snapshot "
                   "is considered once this much log follows the last one")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}));
  command
      ->add_option("--index-merge-idle", flags->index_merge_idle,
                   "Seconds a collection's writer must be idle before its index tiers are merged "
                   "into one, in the background (queries then search one index); 0: never")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0 * 365));
  command->add_flag("--no-fsync", flags->no_fsync,
                    "Do not fsync the logs: nothing is durable (for measuring everything but the "
                    "disk)");
  command->callback([flags, run] { *run = [flags] { return RunServe(*flags); }; });
}

}  // namespace neardup::server
