// Service: the HTTP/JSON front end of neardup's streams (`neardup serve`,
// docs/SERVER.md). A thin layer: routes, request parsing, status mapping,
// auth, metrics and logs; every decision is NearDuplicateStream's
// (neardup/stream.h). One stream per directory DATA_DIR/streams/NAME.
// Transport: HttpServer (cpp-httplib's accept loop and thread pool, this
// project's request loop): blocking, one pool thread per connection, so the
// pool is sized above the expected connection count and TCP_NODELAY is set
// (small answers would otherwise wait for Nagle's delayed ACK). Routes are
// matched by Router (router.h), without regular expressions.
// Thread safety: Stop() may be called from any thread (a signal watcher);
// the rest from the thread that owns the Service.
#ifndef NEARDUP_APPS_SERVER_SERVICE_H_
#define NEARDUP_APPS_SERVER_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "http_message.h"
#include "metrics.h"
#include "neardup/status.h"
#include "neardup/stream.h"
#include "router.h"
#include "served_collection.h"

namespace neardup::server {

class HttpServer;

struct ServiceOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (Bind returns it)
  std::string data_dir = "./neardup-data";
  // Required bearer token; empty: no authentication (loopback only, checked
  // by the command).
  std::string token;
  int threads = 64;  // pool threads: above the connection count
  // Open connections served at once; a new one past it gets 503 and is
  // closed. 0: `threads` (each connection holds a pool thread).
  size_t max_connections = 0;
  uint64_t max_body_mb = 64;  // larger bodies get 413 without being buffered
  // A document whose text is larger gets 413 (and its request stores
  // nothing).
  uint64_t max_document_mb = 16;
  // Served containment collections: (name, directory), opened by Bind.
  std::vector<std::pair<std::string, std::string>> collections;
  // Each collection's index tiers are merged into one once its writer has
  // been idle this long (ServedCollectionOptions::idle_index_merge); zero:
  // never.
  std::chrono::milliseconds collection_idle_merge{30000};
  int read_timeout_seconds = 10;  // slow clients time out
  bool log_requests = true;       // one line per request to stderr
  bool log_json = false;          // ... as a JSON object
  bool sync = true;               // fsync before answering (false: tests only)
  // Every stream's StreamOpenOptions::snapshot_log_bytes (`--snapshot-log-mb`):
  // a growing window's log is rolled over to a new file at this length, and
  // a snapshot is considered once this much log has followed the last one.
  // Bind refuses 0 and more than kMaxStreamSnapshotLogBytes.
  uint64_t snapshot_log_bytes = uint64_t{64} << 20;
};

// True for a host name that only this machine can reach.
bool IsLoopbackHost(const std::string& host);

class Service {
 public:
  explicit Service(ServiceOptions options);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Opens the collections (as their one writer) and binds the listening
  // socket; returns the port.
  Result<int> Bind();
  // Recovers the streams of the data directory (readyz is 503 until done),
  // then serves until Stop(); requests in flight are finished first.
  Status Run();
  void Stop();
  bool ready() const { return ready_.load(); }

 private:
  using Request = HttpRequest;
  using Response = httplib::Response;

  void Routes();
  // HttpServer's steps: auth before the body is read; routing; metrics and
  // the log line after the answer.
  bool RefuseUnauthenticated(const Request& req, Response& res) const;
  void Dispatch(Request& req, Response& res) const;
  void LogAnswer(const Request& req, const Response& res, double seconds);
  Status Recover();
  std::shared_ptr<NearDuplicateStream> FindStream(const std::string& name);
  std::string StreamDir(const std::string& name) const;
  // The options every stream is opened with (sync, snapshot_log_bytes, the
  // shared scheme memo).
  StreamOpenOptions StreamOptions() const;
  bool CheckReady(Response& res);

  void PutStream(const Request& req, Response& res);
  void GetStream(const Request& req, Response& res);
  void DeleteStream(const Request& req, Response& res);
  void PostDocuments(const Request& req, Response& res, bool check_only);
  void GetDocument(const Request& req, Response& res);
  void DeleteDocument(const Request& req, Response& res);
  void GetMetrics(const Request& req, Response& res);
  size_t MaxDocumentBytes() const { return static_cast<size_t>(options_.max_document_mb) << 20; }

  // The collection routes (collection_routes.cc).
  ServedCollection* FindCollection(const Request& req, Response& res);
  void GetCollection(const Request& req, Response& res);
  void QueryCollection(const Request& req, Response& res);
  void AddToCollection(const Request& req, Response& res);
  void GetSimilar(const Request& req, Response& res);
  void GetCollectionDocument(const Request& req, Response& res);
  void RemoveFromCollection(const Request& req, Response& res);
  void CompactCollection(const Request& req, Response& res);
  void AppendCollectionMetrics(std::string* out);

  // A stream's list of near-duplicate answers, and one document's entry
  // with texts and passages (stream_answers.cc).
  void ListStreamAnswers(const Request& req, Response& res);
  void SendDocumentEntry(const Request& req, Response& res, const NearDuplicateStream& stream);

  // The report pages at /ui/ (ui_routes.cc).
  void GetUiIndex(const Request& req, Response& res);
  void GetUiCollection(const Request& req, Response& res);
  void GetUiStream(const Request& req, Response& res);

  ServiceOptions options_;
  Router router_;  // fixed once constructed
  std::unique_ptr<HttpServer> http_;
  Metrics metrics_;
  std::atomic<bool> ready_{false};
  std::mutex streams_mutex_;  // guards streams_ and stream creation/deletion
  std::map<std::string, std::shared_ptr<NearDuplicateStream>> streams_;
  // The index schemes of the configs opened so far, shared by every open
  // (StreamOpenOptions::schemes): a config's LSH bands are chosen once.
  std::shared_ptr<StreamSchemeMemo> schemes_ = std::make_shared<StreamSchemeMemo>();
  // Fixed once Bind returns; each one guards itself.
  std::map<std::string, std::unique_ptr<ServedCollection>> collections_;
};

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_SERVICE_H_
