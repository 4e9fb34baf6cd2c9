#include "service.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "http_responses.h"
#include "http_server.h"
#include "json_input.h"
#include "neardup/json_writer.h"
#include "stream_answers.h"
#include "warc_input.h"

namespace neardup::server {
namespace {

namespace fs = std::filesystem;
using httplib::Response;
using Request = HttpRequest;

// Compares in time that depends only on the lengths, not on where the first
// difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned char>(x ^ y);
  }
  return difference == 0;
}

// Adds ,"name":<the text, or null when `text` is an error (the document
// left the window meanwhile)> to the JSON object just written to `out`.
void AppendTextField(std::string* out, const char* name, const Result<std::string>& text) {
  out->pop_back();  // the object's closing brace
  *out += std::string(",\"") + name + "\":";
  if (text.ok()) {
    AppendJsonString(out, *text);
  } else {
    *out += "null";
  }
  *out += '}';
}

// For a near-duplicate, adds "of_text": the kept document's text.
void AppendOfText(std::string* out, const NearDuplicateStream& stream, const StreamAnswer& answer) {
  if (answer.status == StreamStatus::kNearDuplicate) {
    AppendTextField(out, "of_text", stream.Text(answer.of));
  }
}

}  // namespace

void AppendAnswer(std::string* out, const StreamAnswer& answer) {
  *out += "{\"id\":";
  AppendJsonString(out, answer.id);
  *out += ",\"status\":";
  AppendJsonString(out, StreamStatusName(answer.status));
  *out += ",\"of\":";
  if (answer.status == StreamStatus::kNearDuplicate) {
    AppendJsonString(out, answer.of);
  } else {
    *out += "null";
  }
  *out += ",\"similarity\":";
  AppendJsonDouble(out, answer.similarity);
  *out += ",\"time\":" + std::to_string(answer.time) + "}";
}

namespace {

void AppendOptionalTime(std::string* out, const std::optional<int64_t>& time) {
  *out += time ? std::to_string(*time) : "null";
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Each open connection holds a pool thread: the cap is at most the pool.
size_t ConnectionCap(const ServiceOptions& options) {
  const size_t threads = static_cast<size_t>(std::max(options.threads, 2));
  return options.max_connections == 0 ? threads : std::min(options.max_connections, threads);
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

Service::Service(ServiceOptions options) : options_(std::move(options)) {
  Routes();
  HttpServer::Handlers handlers;
  handlers.on_head = [this](const Request& req, Response& res) {
    return RefuseUnauthenticated(req, res);
  };
  handlers.on_request = [this](Request& req, Response& res) { Dispatch(req, res); };
  handlers.on_answered = [this](const Request& req, const Response& res, double seconds) {
    LogAnswer(req, res, seconds);
  };
  http_ = std::make_unique<HttpServer>(static_cast<size_t>(std::max(options_.threads, 2)),
                                       ConnectionCap(options_), std::move(handlers));
  // cpp-httplib's default closes a keep-alive connection after 5 requests,
  // which makes every client reconnect all the time.
  http_->set_keep_alive_max_count(1000000);
  http_->set_payload_max_length(static_cast<size_t>(options_.max_body_mb) << 20);
  http_->set_read_timeout(options_.read_timeout_seconds, 0);
  http_->set_write_timeout(options_.read_timeout_seconds, 0);
}

Service::~Service() = default;

StreamOpenOptions Service::StreamOptions() const {
  StreamOpenOptions open_options;
  open_options.sync = options_.sync;
  open_options.snapshot_log_bytes = options_.snapshot_log_bytes;
  open_options.schemes = schemes_;
  return open_options;
}

Result<int> Service::Bind() {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamOpenOptions(StreamOptions()));
  for (const auto& [name, dir] : options_.collections) {
    if (!IsValidStreamName(name)) {
      return InvalidArgumentError("collection name \"" + name +
                                  "\" must match [A-Za-z0-9_-]{1,64}");
    }
    if (collections_.count(name) != 0) {
      return InvalidArgumentError("collection name \"" + name + "\" given twice");
    }
    Result<std::unique_ptr<ServedCollection>> opened =
        ServedCollection::Open(dir, {.idle_index_merge = options_.collection_idle_merge});
    if (!opened.ok()) return opened.status().WithContext("collection \"" + name + "\"");
    collections_[name] = std::move(opened).value();
  }
  std::error_code ec;
  fs::create_directories(fs::path(options_.data_dir) / "streams", ec);
  if (ec) return IoError("cannot create data directory " + options_.data_dir + ": " + ec.message());
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0 || !http_->RaiseListenBacklog()) {
    return IoError("cannot listen on " + options_.host + ":" + std::to_string(options_.port));
  }
  return port;
}

Status Service::Run() {
  Status recovered;
  std::thread recovery([&] { recovered = Recover(); });
  const bool listened = http_->listen_after_bind();
  recovery.join();
  NEARDUP_RETURN_IF_ERROR(recovered);
  return listened ? Status::Ok() : IoError("the listening socket failed");
}

void Service::Stop() { http_->stop(); }

Status Service::Recover() {
  const fs::path root = fs::path(options_.data_dir) / "streams";
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsValidStreamName(name)) continue;
    Result<std::unique_ptr<NearDuplicateStream>> stream =
        NearDuplicateStream::OpenExisting(entry.path().string(), StreamOptions());
    if (!stream.ok()) {
      std::fprintf(stderr, "neardup serve: stream %s not opened: %s\n", name.c_str(),
                   stream.status().ToString().c_str());
      continue;
    }
    if (!(*stream)->recovery().truncation.empty()) {
      std::fprintf(stderr, "neardup serve: stream %s: torn log tail cut: %s\n", name.c_str(),
                   (*stream)->recovery().truncation.c_str());
    }
    std::lock_guard<std::mutex> lock(streams_mutex_);
    streams_[name] = std::shared_ptr<NearDuplicateStream>(std::move(stream).value());
  }
  ready_ = true;
  return ec ? IoError("cannot list " + root.string() + ": " + ec.message()) : Status::Ok();
}

std::string Service::StreamDir(const std::string& name) const {
  return (fs::path(options_.data_dir) / "streams" / name).string();
}

std::shared_ptr<NearDuplicateStream> Service::FindStream(const std::string& name) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  auto it = streams_.find(name);
  return it == streams_.end() ? nullptr : it->second;
}

bool Service::CheckReady(Response& res) {
  if (ready_) return true;
  SendError(res, 503, "not_ready", "recovering the streams; retry shortly");
  return false;
}

bool Service::RefuseUnauthenticated(const Request& req, Response& res) const {
  if (options_.token.empty() || req.path == "/healthz" || req.path == "/readyz") return false;
  const std::string header = req.get_header_value("Authorization");
  if (ConstantTimeEquals(header, "Bearer " + options_.token)) return false;
  res.set_header("WWW-Authenticate", "Bearer");
  SendError(res, 401, "unauthenticated", "a valid bearer token is required");
  return true;
}

void Service::Dispatch(Request& req, Response& res) const {
  const Router::Match match = router_.Find(&req);
  switch (match.outcome) {
    case Router::Outcome::kMatched:
      return (*match.handler)(req, res);
    case Router::Outcome::kWrongMethod:
      return SendError(res, 405, "method_not_allowed",
                       "method " + req.method + " is not allowed on " + req.path);
    case Router::Outcome::kNoRoute:
      return SendError(res, 404, "not_found", "no such route");
  }
}

void Service::LogAnswer(const Request& req, const Response& res, double seconds) {
  // The route's template (never the raw path: ids would make unbounded
  // label sets); "other" when none matched.
  metrics_.Record(req.route.empty() ? "other" : req.route, req.method, res.status, seconds);
  if (!options_.log_requests) return;
  const long long micros = static_cast<long long>(seconds * 1e6);
  if (options_.log_json) {
    std::string line = "{\"method\":";
    AppendJsonString(&line, req.method);
    line += ",\"path\":";
    AppendJsonString(&line, req.path);
    line += ",\"status\":" + std::to_string(res.status) +
            ",\"bytes\":" + std::to_string(res.body.size()) +
            ",\"microseconds\":" + std::to_string(micros) + "}\n";
    std::fputs(line.c_str(), stderr);
  } else {
    std::fprintf(stderr, "%s %s %d %zu %lld\n", req.method.c_str(), req.path.c_str(), res.status,
                 res.body.size(), micros);
  }
}

void Service::Routes() {
  auto bind = [this](void (Service::*handler)(const Request&, Response&)) {
    return [this, handler](const Request& req, Response& res) { (this->*handler)(req, res); };
  };
  // A method without a handler gets 405 on a known path, not 404.
  router_.Add("/healthz").Get([](const Request&, Response& res) {
    res.set_content("{\"status\":\"ok\"}\n", "application/json");
  });
  router_.Add("/readyz").Get([this](const Request&, Response& res) {
    if (!CheckReady(res)) return;
    res.set_content("{\"status\":\"ready\"}\n", "application/json");
  });
  router_.Add("/metrics").Get(bind(&Service::GetMetrics));
  router_.Add("/v1/streams/{name}")
      .Get(bind(&Service::GetStream))
      .Put(bind(&Service::PutStream))
      .Delete(bind(&Service::DeleteStream));
  router_.Add("/v1/streams/{name}/documents").Post([this](const Request& req, Response& res) {
    PostDocuments(req, res, false);
  });
  router_.Add("/v1/streams/{name}/check").Post([this](const Request& req, Response& res) {
    PostDocuments(req, res, true);
  });
  router_.Add("/v1/streams/{name}/documents/{id}")
      .Get(bind(&Service::GetDocument))
      .Delete(bind(&Service::DeleteDocument));
  router_.Add("/v1/streams/{name}/near_duplicates").Get(bind(&Service::ListStreamAnswers));
  router_.Add("/v1/collections/{name}").Get(bind(&Service::GetCollection));
  router_.Add("/v1/collections/{name}/query").Post(bind(&Service::QueryCollection));
  router_.Add("/v1/collections/{name}/documents").Post(bind(&Service::AddToCollection));
  router_.Add("/v1/collections/{name}/similar/{id}").Get(bind(&Service::GetSimilar));
  router_.Add("/v1/collections/{name}/documents/{id}")
      .Get(bind(&Service::GetCollectionDocument))
      .Delete(bind(&Service::RemoveFromCollection));
  router_.Add("/v1/collections/{name}/compact").Post(bind(&Service::CompactCollection));
  // The report pages (ui_routes.cc).
  router_.Add("/ui").Get([](const Request&, Response& res) { res.set_redirect("/ui/"); });
  router_.Add("/ui/").Get(bind(&Service::GetUiIndex));
  router_.Add("/ui/collections/{name}").Get(bind(&Service::GetUiCollection));
  router_.Add("/ui/streams/{name}").Get(bind(&Service::GetUiStream));
}

namespace {

std::string StreamJson(const std::string& name, const NearDuplicateStream& stream) {
  const StreamConfig& c = stream.config();
  const StreamStats stats = stream.Stats();
  std::string out = "{\"name\":";
  AppendJsonString(&out, name);
  out += ",\"config\":{\"method\":";
  AppendJsonString(&out, c.method == NearDuplicateMethod::kSimHash ? "simhash" : "minhash");
  out += ",\"threshold\":";
  AppendJsonDouble(&out, c.threshold);
  out += ",\"max_distance\":" + std::to_string(c.max_distance) + ",\"preset\":";
  AppendJsonString(&out, c.preset);
  out += ",\"window_seconds\":" + std::to_string(c.window_seconds) +
         ",\"max_documents\":" + std::to_string(c.max_documents) +
         ",\"keep_texts\":" + (c.keep_texts ? "true" : "false") + "},\"recipe_id\":";
  AppendJsonString(&out, RecipeId(stream.recipe()));
  out += ",\"documents\":" + std::to_string(stats.documents) +
         ",\"kept\":" + std::to_string(stats.kept) + ",\"added\":" + std::to_string(stats.added) +
         ",\"evicted\":" + std::to_string(stats.evicted) +
         ",\"removed\":" + std::to_string(stats.removed) + ",\"oldest_time\":";
  AppendOptionalTime(&out, stats.oldest_time);
  out += ",\"newest_time\":";
  AppendOptionalTime(&out, stats.newest_time);
  out += ",\"memory_bytes\":" + std::to_string(stats.memory_bytes) +
         ",\"log_bytes\":" + std::to_string(stats.log_bytes) + "}\n";
  return out;
}

}  // namespace

void Service::PutStream(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  Result<StreamConfig> config = ParseStreamConfig(req.body);
  if (!config.ok()) return SendStatus(res, config.status());
  if (Status valid = ValidateStreamConfig(*config); !valid.ok()) return SendStatus(res, valid);
  std::lock_guard<std::mutex> lock(streams_mutex_);
  auto it = streams_.find(name);
  if (it != streams_.end()) {
    if (!(it->second->config() == *config)) {
      return SendError(res, 409, "already_exists",
                       "stream \"" + name + "\" exists with another config");
    }
    res.set_content(StreamJson(name, *it->second), "application/json");
    return;
  }
  Result<std::unique_ptr<NearDuplicateStream>> stream =
      NearDuplicateStream::Open(StreamDir(name), *config, StreamOptions());
  if (!stream.ok()) return SendStatus(res, stream.status());
  auto shared = std::shared_ptr<NearDuplicateStream>(std::move(stream).value());
  streams_[name] = shared;
  res.status = 201;
  res.set_content(StreamJson(name, *shared), "application/json");
}

void Service::GetStream(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  res.set_content(StreamJson(name, *stream), "application/json");
}

void Service::DeleteStream(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::lock_guard<std::mutex> lock(streams_mutex_);
  if (streams_.erase(name) == 0) {
    return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  }
  std::error_code ec;
  fs::remove_all(StreamDir(name), ec);
  if (ec) return SendError(res, 500, "io_error", "cannot delete stream files: " + ec.message());
  res.status = 204;
}

void Service::PostDocuments(const Request& req, Response& res, bool check_only) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  // A WARC body's records carry their own times (WARC-Date): the window
  // follows the crawl (warc_input.h). Its answers are JSON lines.
  const bool warc = IsWarc(req);
  const bool lines = warc || IsJsonLines(req);
  // Every document is parsed before any is added: a bad line stores nothing.
  // JSON documents are views into the body (session 14: a text copied out
  // of it per document was ~2% of a batch POST's server CPU); a WARC
  // record's text is decoded, so owned.
  Result<std::vector<DocumentInput>> warc_documents = std::vector<DocumentInput>();
  Result<ParsedDocuments> parsed = ParsedDocuments();
  if (warc) {
    warc_documents = ParseWarcDocuments(req.body, static_cast<size_t>(options_.max_body_mb) << 20,
                                        MaxDocumentBytes());
    if (!warc_documents.ok()) return SendDocumentsError(res, warc_documents.status());
    for (const DocumentInput& document : *warc_documents) {
      parsed->documents.push_back(DocumentView{document.id, document.text, document.time});
    }
  } else {
    parsed = ParseDocumentViews(req.body, lines, check_only, MaxDocumentBytes());
    if (!parsed.ok()) return SendDocumentsError(res, parsed.status());
  }
  // ?texts=true: a near-duplicate's answer carries the kept document's text
  // (streams that keep texts only).
  bool with_texts = false;
  if (!TextFlagParam(req, res, "texts", *stream, &with_texts)) return;
  const int64_t now = NowSeconds();
  std::vector<StreamDocument> inputs;
  inputs.reserve(parsed->documents.size());
  for (const DocumentView& document : parsed->documents) {
    inputs.push_back(StreamDocument{document.id, document.text, document.time.value_or(now)});
  }
  // The whole body at once: its texts are fingerprinted in parallel, and the
  // answers are those of adding the documents one by one. On an error the
  // documents before the failed one are stored; a retry of the whole body is
  // idempotent.
  Result<std::vector<StreamAnswer>> answers =
      check_only ? stream->CheckBatch(inputs) : stream->AddBatch(inputs);
  if (!answers.ok()) return SendStatus(res, answers.status());
  std::string body;
  body.reserve(answers->size() * 128);
  for (const StreamAnswer& answer : *answers) {
    AppendAnswer(&body, answer);
    if (with_texts) AppendOfText(&body, *stream, answer);
    body += '\n';
  }
  SetBody(res, std::move(body), lines ? "application/x-ndjson" : "application/json");
}

void Service::GetDocument(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  // ?passages=true: the texts and their matching passages (stream_answers.cc).
  bool with_passages = false;
  if (!TextFlagParam(req, res, "passages", *stream, &with_passages)) return;
  if (with_passages) return SendDocumentEntry(req, res, *stream);
  bool with_texts = false;
  if (!TextFlagParam(req, res, "texts", *stream, &with_texts)) return;
  Result<StreamAnswer> answer = stream->Get(req.id);
  if (!answer.ok()) return SendStatus(res, answer.status());
  std::string body;
  AppendAnswer(&body, *answer);
  if (stream->config().keep_texts) AppendTextField(&body, "text", stream->Text(answer->id));
  if (with_texts) AppendOfText(&body, *stream, *answer);
  res.set_content(body + "\n", "application/json");
}

void Service::DeleteDocument(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  Status removed = stream->Remove(req.id);
  if (!removed.ok()) return SendStatus(res, removed);
  res.status = 204;
}

void Service::GetMetrics(const Request&, Response& res) {
  std::string out = metrics_.Render();
  std::vector<std::pair<std::string, std::shared_ptr<NearDuplicateStream>>> streams;
  {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    streams.assign(streams_.begin(), streams_.end());
  }
  struct Series {
    const char* name;
    const char* type;
    const char* help;
    uint64_t StreamStats::*field;
  };
  static constexpr Series kSeries[] = {
      {"neardup_stream_documents", "gauge", "Documents in the stream's window.",
       &StreamStats::documents},
      {"neardup_stream_kept_documents", "gauge", "Kept (indexed) documents in the window.",
       &StreamStats::kept},
      {"neardup_stream_added_total", "counter", "Documents accepted.", &StreamStats::added},
      {"neardup_stream_evictions_total", "counter", "Documents that left the window.",
       &StreamStats::evicted},
      {"neardup_stream_memory_bytes", "gauge", "Measured memory of the stream.",
       &StreamStats::memory_bytes},
      {"neardup_stream_log_bytes", "gauge", "Bytes in the current write-ahead log.",
       &StreamStats::log_bytes},
      {"neardup_stream_fsyncs_total", "counter", "Log fsyncs (one per commit group).",
       &StreamStats::log_syncs},
  };
  std::vector<StreamStats> stats;
  for (const auto& [name, stream] : streams) stats.push_back(stream->Stats());
  for (const Series& series : kSeries) {
    out += std::string("# HELP ") + series.name + " " + series.help + "\n# TYPE " + series.name +
           " " + series.type + "\n";
    for (size_t i = 0; i < streams.size(); ++i) {
      out += std::string(series.name) + "{stream=\"" + EscapeLabel(streams[i].first) + "\"} " +
             std::to_string(stats[i].*series.field) + "\n";
    }
  }
  out += "# HELP neardup_stream_fsync_seconds_total Time spent in log fsyncs.\n";
  out += "# TYPE neardup_stream_fsync_seconds_total counter\n";
  for (size_t i = 0; i < streams.size(); ++i) {
    char seconds[64];
    std::snprintf(seconds, sizeof(seconds), "%.9f", stats[i].log_sync_nanoseconds / 1e9);
    out += "neardup_stream_fsync_seconds_total{stream=\"" + EscapeLabel(streams[i].first) + "\"} " +
           seconds + "\n";
  }
  AppendCollectionMetrics(&out);
  out +=
      "# HELP neardup_http_open_connections Connections being served.\n"
      "# TYPE neardup_http_open_connections gauge\n"
      "neardup_http_open_connections " +
      std::to_string(http_->open_connections()) +
      "\n# HELP neardup_http_rejected_connections_total Connections refused (503) over "
      "--max-connections.\n# TYPE neardup_http_rejected_connections_total counter\n"
      "neardup_http_rejected_connections_total " +
      std::to_string(http_->rejected_connections()) + "\n";
  res.set_content(out, "text/plain; version=0.0.4");
}

}  // namespace neardup::server
