// neardup.Stream: the streaming near-duplicate detector of `neardup serve`
// (neardup::NearDuplicateStream, include/neardup/stream.h) without HTTP: for
// each document added, whether it is a near-duplicate of an earlier one in
// the window (the leader rule of `neardup clusters --rule leader`), held in
// memory or durably in a directory.
//
// Answers are the dicts the HTTP routes print as JSON: {id, status ("new" |
// "near_duplicate"), of (None when new), similarity, time}.
// Thread safety: a Stream may be shared between Python threads (the library
// stream is thread-safe); calls release the GIL while they fingerprint,
// decide and wait for the log's fsync.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "neardup/stream.h"

namespace neardup::python {
namespace {

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

py::dict AnswerToDict(const StreamAnswer& answer) {
  py::dict out;
  out["id"] = answer.id;
  out["status"] = std::string(StreamStatusName(answer.status));
  out["of"] = answer.status == StreamStatus::kNearDuplicate ? py::object(py::str(answer.of))
                                                            : py::object(py::none());
  out["similarity"] = answer.similarity;
  out["time"] = answer.time;
  return out;
}

py::object OptionalStr(const std::optional<std::string>& value) {
  return value ? py::object(py::str(*value)) : py::object(py::none());
}

// An entry with the fields of the HTTP routes' JSON (apps/server): the
// answer; for a near-duplicate of_time (None once its kept document left);
// with texts: text (and of_text for a near-duplicate); with passages, for a
// near-duplicate: passages, a list of {query: [begin, end], match: [begin,
// end]} byte ranges (None when the kept text is gone).
py::dict EntryToDict(const StreamEntry& entry, const StreamDetail& detail) {
  py::dict out = AnswerToDict(entry.answer);
  const bool near_duplicate = entry.answer.status == StreamStatus::kNearDuplicate;
  if (near_duplicate) {
    out["of_time"] = entry.of_time ? py::object(py::int_(*entry.of_time)) : py::none();
  }
  if (detail.texts || detail.passages) {
    out["text"] = OptionalStr(entry.text);
    if (near_duplicate) out["of_text"] = OptionalStr(entry.of_text);
  }
  if (detail.passages && near_duplicate) {
    if (!entry.of_text) {
      out["passages"] = py::none();
    } else {
      py::list passages;
      for (const Passage& p : entry.passages) {
        py::dict passage;
        py::list query;
        query.append(p.query_begin);
        query.append(p.query_end);
        py::list match;
        match.append(p.match_begin);
        match.append(p.match_end);
        passage["query"] = query;
        passage["match"] = match;
        passages.append(passage);
      }
      out["passages"] = passages;
    }
  }
  return out;
}

// `work` run with the GIL released (the library never touches Python).
template <typename Fn>
auto WithoutGil(Fn&& work) {
  py::gil_scoped_release release;
  return work();
}

std::string IdOf(const py::handle& id, const char* where) {
  if (!PyUnicode_Check(id.ptr())) {
    throw py::type_error(std::string(where) + ": ids must be str");
  }
  return id.cast<std::string>();
}

class PyStream {
 public:
  PyStream(const py::object& path, const std::string& method, double threshold, int max_distance,
           const std::string& preset, int64_t window_seconds, uint64_t max_documents,
           bool keep_texts, bool sync) {
    StreamConfig config;
    config.method = ValueOrThrow(ParseNearDuplicateMethod(method));
    config.threshold = threshold;
    config.max_distance = max_distance;
    config.preset = preset;
    config.window_seconds = window_seconds;
    config.max_documents = max_documents;
    config.keep_texts = keep_texts;
    if (path.is_none()) {
      stream_ = ValueOrThrow(NearDuplicateStream::Create(config));
      return;
    }
    const std::string dir = path.cast<std::string>();
    StreamOpenOptions options;
    options.sync = sync;
    stream_ =
        ValueOrThrow(WithoutGil([&] { return NearDuplicateStream::Open(dir, config, options); }));
  }

  explicit PyStream(std::unique_ptr<NearDuplicateStream> stream) : stream_(std::move(stream)) {}

  static std::unique_ptr<PyStream> OpenExisting(const std::string& path, bool sync) {
    StreamOpenOptions options;
    options.sync = sync;
    return std::make_unique<PyStream>(
        ValueOrThrow(WithoutGil([&] { return NearDuplicateStream::OpenExisting(path, options); })));
  }

  py::dict Add(const py::handle& id, const py::handle& text, const std::optional<int64_t>& time) {
    return AddOrCheck(IdOf(id, "Stream.add"), text, time, /*check_only=*/false);
  }

  py::dict Check(const py::handle& text, const py::handle& id,
                 const std::optional<int64_t>& time) const {
    return AddOrCheck(IdOf(id, "Stream.check"), text, time, /*check_only=*/true);
  }

  // Adds (id, text) pairs in order; `times` (one per document) or now.
  py::list AddMany(const py::handle& documents, const py::object& times_arg) {
    DocumentViews docs = ReadDocuments(documents);
    std::vector<std::string> ids;
    ids.reserve(docs.texts.size());
    for (size_t i = 0; i < docs.texts.size(); ++i) {
      if (!docs.has_ids) throw py::type_error("Stream.add_many takes (id, text) pairs");
      ids.push_back(IdOf(docs.ids[i], "Stream.add_many"));
    }
    std::vector<int64_t> times;
    if (!times_arg.is_none()) {
      for (py::handle t : py::iter(times_arg)) times.push_back(t.cast<int64_t>());
      if (times.size() != ids.size()) {
        throw py::value_error("Stream.add_many: " + std::to_string(times.size()) + " times for " +
                              std::to_string(ids.size()) + " documents");
      }
    }
    std::vector<StreamDocument> batch(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      batch[i] = StreamDocument{ids[i], docs.texts[i], times.empty() ? 0 : times[i]};
    }
    // AddBatch: texts fingerprinted in parallel, one log write per group and
    // one fsync; on an error the documents before it are stored (a retry is
    // idempotent) and the message names the document.
    const std::vector<StreamAnswer> answers = ValueOrThrow(WithoutGil([&] {
      if (times.empty()) {
        const int64_t now = NowSeconds();
        for (StreamDocument& document : batch) document.time = now;
      }
      return stream_->AddBatch(batch);
    }));
    py::list out;
    for (const StreamAnswer& answer : answers) out.append(AnswerToDict(answer));
    return out;
  }

  py::object Get(const std::string& id) const {
    Result<StreamAnswer> answer = stream_->Get(id);
    if (answer.status().code() == StatusCode::kNotFound) return py::none();
    return AnswerToDict(ValueOrThrow(std::move(answer)));
  }

  // The stored answer of `id` with what `texts` / `passages` ask for, as the
  // HTTP route GET /v1/streams/{name}/documents/{id}?passages=true prints
  // it; None when absent.
  py::object Entry(const std::string& id, bool texts, bool passages) const {
    const StreamDetail detail{.texts = texts, .passages = passages};
    Result<StreamEntry> entry = WithoutGil([&] { return stream_->Entry(id, detail); });
    if (entry.status().code() == StatusCode::kNotFound) return py::none();
    return EntryToDict(ValueOrThrow(std::move(entry)), detail);
  }

  // A page of the near-duplicate answers in the window, as the HTTP route
  // GET /v1/streams/{name}/answers prints it: {answers, next_cursor,
  // scanned}.
  py::dict List(size_t limit, const std::string& order, const std::optional<int64_t>& from_time,
                const std::optional<int64_t>& to_time, const std::string& search,
                const std::optional<std::string>& cursor, bool texts, bool passages,
                size_t max_scanned) const {
    if (order != "newest" && order != "oldest") {
      throw py::value_error("Stream.list: order (" + order + ") must be newest or oldest");
    }
    StreamListOptions options;
    options.limit = limit;
    options.oldest_first = order == "oldest";
    options.from_time = from_time;
    options.to_time = to_time;
    options.search = search;
    options.cursor = cursor.value_or("");
    options.max_scanned = max_scanned;
    options.detail = StreamDetail{.texts = texts, .passages = passages};
    const StreamPage page = ValueOrThrow(WithoutGil([&] { return stream_->List(options); }));
    py::list answers;
    for (const StreamEntry& entry : page.entries)
      answers.append(EntryToDict(entry, options.detail));
    py::dict out;
    out["answers"] = answers;
    out["next_cursor"] =
        page.next_cursor.empty() ? py::object(py::none()) : py::object(py::str(page.next_cursor));
    out["scanned"] = page.scanned;
    return out;
  }

  bool Contains(const std::string& id) const { return stream_->Get(id).ok(); }

  std::string Text(const std::string& id) const { return ValueOrThrow(stream_->Text(id)); }

  void Remove(const std::string& id) {
    ThrowIfError(WithoutGil([&] { return stream_->Remove(id); }));
  }

  void Snapshot() {
    ThrowIfError(WithoutGil([&] { return stream_->Snapshot(); }));
  }

  size_t size() const { return static_cast<size_t>(stream_->Stats().documents); }

  py::dict Stats() const {
    const StreamStats stats = stream_->Stats();
    py::dict out;
    out["documents"] = stats.documents;
    out["kept"] = stats.kept;
    out["added"] = stats.added;
    out["evicted"] = stats.evicted;
    out["removed"] = stats.removed;
    out["oldest_time"] = stats.oldest_time ? py::object(py::int_(*stats.oldest_time)) : py::none();
    out["newest_time"] = stats.newest_time ? py::object(py::int_(*stats.newest_time)) : py::none();
    out["memory_bytes"] = stats.memory_bytes;
    out["log_bytes"] = stats.log_bytes;
    out["snapshots"] = stats.snapshots;
    return out;
  }

  py::dict Config() const {
    const StreamConfig& c = stream_->config();
    py::dict out;
    out["method"] = c.method == NearDuplicateMethod::kSimHash ? "simhash" : "minhash";
    out["threshold"] = c.threshold;
    out["max_distance"] = c.max_distance;
    out["preset"] = c.preset;
    out["window_seconds"] = c.window_seconds;
    out["max_documents"] = c.max_documents;
    out["keep_texts"] = c.keep_texts;
    return out;
  }

  std::string recipe_id() const { return RecipeId(stream_->recipe()); }

 private:
  py::dict AddOrCheck(const std::string& id, const py::handle& text,
                      const std::optional<int64_t>& time, bool check_only) const {
    py::list one;
    one.append(text);
    DocumentViews docs = ReadDocuments(one);
    return AnswerToDict(ValueOrThrow(WithoutGil([&] {
      const int64_t at = time.value_or(NowSeconds());
      return check_only ? stream_->Check(id, docs.texts[0], at)
                        : stream_->Add(id, docs.texts[0], at);
    })));
  }

  std::unique_ptr<NearDuplicateStream> stream_;
};

}  // namespace

void RegisterStream(py::module_& m) {
  py::class_<PyStream>(
      m, "Stream",
      "A stream of documents answered as they come, as `neardup serve` answers them: a "
      "document is a near-duplicate of the earliest kept document still in the window that "
      "it is verified similar to (the leader rule of `neardup clusters --rule leader`), "
      "otherwise it is kept. Answers are dicts {id, status ('new' | 'near_duplicate'), of, "
      "similarity, time}. In memory, or durable in a directory (`path`): every add is on "
      "disk before it returns (sync=False: not durable, for tests and benchmarks).")
      .def(py::init<const py::object&, const std::string&, double, int, const std::string&, int64_t,
                    uint64_t, bool, bool>(),
           py::arg("path") = py::none(), py::arg("method") = "minhash", py::arg("threshold") = 0.8,
           py::arg("max_distance") = 3, py::arg("preset") = "default",
           py::arg("window_seconds") = 0, py::arg("max_documents") = 0,
           py::arg("keep_texts") = false, py::arg("sync") = true,
           "A stream in memory (path None) or in directory `path` (created when it holds "
           "none; InvalidArgumentError (already_exists) when it holds one with another "
           "config). "
           "window_seconds / max_documents: documents older than the newest time minus "
           "window_seconds, or past max_documents (oldest first), leave (0: no limit). "
           "keep_texts: hold each text while its document is in the window (Stream.text).")
      .def_static("open", &PyStream::OpenExisting, py::arg("path"), py::arg("sync") = true,
                  "Opens the stream stored in `path` with its stored config. StorageError "
                  "(not_found) when there is none; a torn log tail is cut (see stats()).")
      .def("add", &PyStream::Add, py::arg("id"), py::arg("text"), py::arg("time") = py::none(),
           "Decides and stores one document (time: seconds since the epoch; None: now). "
           "Adding an id that is present returns its stored answer and changes nothing.")
      .def("add_many", &PyStream::AddMany, py::arg("documents"), py::arg("times") = py::none(),
           "Adds (id, text) pairs in order (times: one int per document, or None: now); "
           "the list of answers, equal to add() on each in turn. Faster: the texts are "
           "fingerprinted in parallel and written to the log together (one fsync). On an "
           "error the documents before the one named are stored, none after it.")
      .def("check", &PyStream::Check, py::arg("text"), py::arg("id") = "",
           py::arg("time") = py::none(), "The answer add would give now; stores nothing.")
      .def("get", &PyStream::Get, py::arg("id"),
           "The stored answer of `id`, or None (never added, evicted or removed).")
      .def("entry", &PyStream::Entry, py::arg("id"), py::arg("texts") = false,
           py::arg("passages") = false,
           "The stored answer of `id` with of_time (near-duplicates), and with texts=True "
           "text / of_text, with passages=True also passages ({query: [begin, end], match: "
           "[begin, end]} byte ranges of the two texts): the JSON of the HTTP route. None "
           "when absent; InvalidArgumentError for texts or passages on a stream that keeps "
           "no texts.")
      .def("list", &PyStream::List, py::kw_only(), py::arg("limit") = 100,
           py::arg("order") = "newest", py::arg("from_time") = py::none(),
           py::arg("to_time") = py::none(), py::arg("search") = "", py::arg("cursor") = py::none(),
           py::arg("texts") = false, py::arg("passages") = false, py::arg("max_scanned") = 100000,
           "A page of the near-duplicate answers in the window: {answers (entries as "
           "entry() gives them), next_cursor (pass as cursor for the next page; None at the "
           "end), scanned}. order: 'newest' or 'oldest' first; from_time / to_time: the "
           "answers' times, inclusive; search: ids or kept ids containing it (ASCII "
           "case-insensitive); limit in [1, 10000]; max_scanned: the most near-duplicates "
           "looked at (a page may end early with a cursor).")
      .def("text", &PyStream::Text, py::arg("id"),
           "The text of stored document `id` (keep_texts streams). InvalidArgumentError when "
           "the stream does not keep texts; StorageError (not_found) when absent.")
      .def("remove", &PyStream::Remove, py::arg("id"),
           "Removes `id`; StorageError (not_found) when absent.")
      .def("snapshot", &PyStream::Snapshot,
           "Writes a snapshot now (bounds recovery; also done automatically).")
      .def("stats", &PyStream::Stats,
           "Counts: documents (in the window), kept, added, evicted, removed, oldest_time, "
           "newest_time, memory_bytes, log_bytes, snapshots.")
      .def_property_readonly("config", &PyStream::Config, "The stream's config, as a dict.")
      .def_property_readonly("recipe_id", &PyStream::recipe_id,
                             "The id of the recipe the stream fingerprints with.")
      .def("__len__", &PyStream::size, "The number of documents in the window.")
      .def("__contains__", &PyStream::Contains, py::arg("id"));
}

}  // namespace neardup::python
