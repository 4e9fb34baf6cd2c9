#include "neardup/stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "engine/containment_passages.h"
#include "neardup/fingerprinter.h"
#include "neardup/write_ahead_log.h"
#include "stream/stream_record.h"
#include "stream/stream_state.h"

namespace neardup {

using internal::StreamDoc;
using internal::StreamHeader;
using internal::StreamRecordType;
using internal::StreamState;

Status ValidateStreamConfig(const StreamConfig& config) {
  if (config.method == NearDuplicateMethod::kMinHash &&
      !(config.threshold > 0.0 && config.threshold <= 1.0)) {
    return InvalidArgumentError("threshold (" + std::to_string(config.threshold) +
                                ") must be in (0, 1]");
  }
  if (config.method == NearDuplicateMethod::kSimHash &&
      !(config.max_distance >= 0 && config.max_distance < 64)) {
    return InvalidArgumentError("max_distance (" + std::to_string(config.max_distance) +
                                ") must be in [0, 64)");
  }
  if (config.window_seconds < 0) {
    return InvalidArgumentError("window_seconds (" + std::to_string(config.window_seconds) +
                                ") must be >= 0");
  }
  return PresetRecipe(config.preset).status();
}

std::string_view StreamStatusName(StreamStatus status) {
  return status == StreamStatus::kNew ? "new" : "near_duplicate";
}

namespace {

namespace fs = std::filesystem;

std::string Numbered(const std::string& dir, const char* prefix, uint64_t generation) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%020llu", prefix,
                static_cast<unsigned long long>(generation));
  return (fs::path(dir) / name).string();
}

// The generations of the files named PREFIX-<20 digits> in `dir`, ascending.
std::vector<uint64_t> Generations(const std::string& dir, const std::string& prefix) {
  std::vector<uint64_t> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != prefix.size() + 21 || name.compare(0, prefix.size(), prefix) != 0 ||
        name[prefix.size()] != '-') {
      continue;
    }
    const std::string digits = name.substr(prefix.size() + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    found.push_back(std::stoull(digits));
  }
  std::sort(found.begin(), found.end());
  return found;
}

StreamAnswer AnswerOf(const StreamDoc& doc) {
  return StreamAnswer{doc.id, doc.status, doc.of, doc.similarity, doc.time};
}

// The errors of a full disk, quota or file size limit.
bool IsDiskFull(int error) { return error == ENOSPC || error == EDQUOT || error == EFBIG; }

Status CheckId(std::string_view id) {
  if (id.empty()) return InvalidArgumentError("id must not be empty");
  if (id.size() > kMaxStreamIdBytes) {
    return InvalidArgumentError("id (" + std::to_string(id.size()) + " bytes) must be at most " +
                                std::to_string(kMaxStreamIdBytes) + " bytes");
  }
  return Status::Ok();
}

Status CheckDetail(const StreamDetail& detail, const StreamConfig& config) {
  if ((detail.texts || detail.passages) && !config.keep_texts) {
    return FailedPreconditionError("the stream does not keep texts (keep_texts is false)");
  }
  return Status::Ok();
}

// A list cursor is "<time>.<arrival number>" of the entry the page ended at.
std::string EncodeCursor(const StreamState::ListKey& key) {
  return std::to_string(key.first) + "." + std::to_string(key.second);
}

Result<StreamState::ListKey> DecodeCursor(std::string_view cursor) {
  StreamState::ListKey key;
  const char* end = cursor.data() + cursor.size();
  auto [dot, time_error] = std::from_chars(cursor.data(), end, key.first);
  Status bad =
      InvalidArgumentError("cursor (\"" + std::string(cursor) + "\") is not one a page returned");
  if (time_error != std::errc() || dot == end || *dot != '.' || dot + 1 == end || dot[1] == '-' ||
      dot[1] == '+') {
    return bad;
  }
  auto [last, seq_error] = std::from_chars(dot + 1, end, key.second);
  if (seq_error != std::errc() || last != end) return bad;
  return key;
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool ContainsFolded(std::string_view text, std::string_view folded_needle) {
  if (folded_needle.size() > text.size()) return false;
  for (size_t at = 0; at + folded_needle.size() <= text.size(); ++at) {
    size_t i = 0;
    while (i < folded_needle.size() && AsciiLower(text[at + i]) == folded_needle[i]) ++i;
    if (i == folded_needle.size()) return true;
  }
  return false;
}

}  // namespace

class NearDuplicateStream::Impl {
 public:
  Impl(StreamState state, std::unique_ptr<Fingerprinter> fingerprinter)
      : state_(std::move(state)), fingerprinter_(std::move(fingerprinter)) {}

  static Result<std::unique_ptr<Impl>> Make(const StreamConfig& config) {
    NEARDUP_ASSIGN_OR_RETURN(StreamState state, StreamState::Create(config));
    NEARDUP_ASSIGN_OR_RETURN(
        std::unique_ptr<Fingerprinter> fingerprinter,
        CreateCpuFingerprinter(state.recipe(), SketchesForNearDuplicates(state.options())));
    auto impl = std::make_unique<Impl>(std::move(state), std::move(fingerprinter));
    if (config.keep_texts) {
      NEARDUP_ASSIGN_OR_RETURN(
          internal::PassageMatcher matcher,
          internal::PassageMatcher::Create(NearDuplicatePassageRecipe(impl->state_.recipe())));
      impl->passage_matcher_.emplace(std::move(matcher));
    }
    return impl;
  }

  // `doc`'s entry with the texts `detail` asks for (passages are added by
  // AddPassages, outside the lock). REQUIRES: mutex_ held.
  StreamEntry EntryLocked(const StreamDoc& doc, const StreamDetail& detail) const {
    StreamEntry entry;
    entry.answer = AnswerOf(doc);
    const bool texts = detail.texts || detail.passages;
    if (texts) entry.text = doc.text;
    if (doc.status == StreamStatus::kNearDuplicate) {
      // The kept document, unless its id left and came back as another
      // (later) document.
      const StreamDoc* kept = state_.Find(doc.of);
      if (kept != nullptr && kept->kept && kept->seq < doc.seq) {
        entry.of_time = kept->time;
        if (texts) entry.of_text = kept->text;
      }
    }
    return entry;
  }

  Status AddPassages(const StreamDetail& detail, StreamEntry* entry) const {
    if (!detail.passages || !entry->text || !entry->of_text) return Status::Ok();
    NEARDUP_ASSIGN_OR_RETURN(entry->passages,
                             passage_matcher_->Match(*entry->text, *entry->of_text));
    return Status::Ok();
  }

  // Writes snapshot-<generation> atomically (temporary file, fsync, rename,
  // directory fsync). REQUIRES: mutex_ held (or not yet shared).
  Status WriteSnapshot(uint64_t generation) {
    const std::string path = Numbered(dir_, "snapshot", generation);
    const std::string temporary = path + ".tmp";
    FILE* out = std::fopen(temporary.c_str(), "wb");
    if (out == nullptr) return IoError("cannot create " + temporary + ": " + std::strerror(errno));
    // Written in pieces of about kSnapshotBufferBytes: the snapshot of a
    // large window is never held in memory whole (it was one string as large
    // as the window's state, grown by reallocation, under the writer lock).
    constexpr size_t kSnapshotBufferBytes = size_t{1} << 20;
    std::string bytes;
    uint64_t total = 0;
    bool written = true;
    auto flush = [&] {
      written = written && std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
      total += bytes.size();
      bytes.clear();
    };
    AppendLogRecord(internal::EncodeHeader(state_.Header()), &bytes);
    state_.ForEachDoc([&](const StreamDoc& doc) {
      AppendLogRecord(internal::EncodeAdd(doc), &bytes);
      if (bytes.size() >= kSnapshotBufferBytes) flush();
    });
    flush();
    written = written && std::fflush(out) == 0 && (!options_.sync || ::fsync(fileno(out)) == 0);
    const int saved_errno = errno;
    std::fclose(out);
    if (!written) {
      std::remove(temporary.c_str());
      const std::string message =
          "cannot write snapshot " + temporary + ": " + std::strerror(saved_errno);
      return IsDiskFull(saved_errno) ? ResourceExhaustedError(message) : IoError(message);
    }
    snapshot_bytes_ = total;
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      return IoError("cannot rename " + temporary + ": " + std::strerror(errno));
    }
    return options_.sync ? SyncDirectory(dir_) : Status::Ok();
  }

  // Snapshot, new log, then old files deleted. REQUIRES: mutex_ held.
  Status RotateLocked() {
    if (!failed_.ok()) return failed_;
    NEARDUP_RETURN_IF_ERROR(log_->SyncTo(log_->size()));
    const uint64_t next = generation_ + 1;
    NEARDUP_RETURN_IF_ERROR(WriteSnapshot(next));
    // From here the new snapshot is what recovery reads: appending to the old
    // log would be lost, so a failure to start the new one stops all writes.
    Result<std::unique_ptr<WriteAheadLog>> log =
        WriteAheadLog::Open(Numbered(dir_, "log", next), 0, {options_.sync});
    if (!log.ok()) {
      failed_ = log.status();
      return failed_;
    }
    Status synced = options_.sync ? SyncDirectory(dir_) : Status::Ok();
    if (!synced.ok()) {
      failed_ = synced;
      return failed_;
    }
    log_ = std::shared_ptr<WriteAheadLog>(std::move(log).value());
    generation_ = next;
    ++snapshots_;
    for (uint64_t old : Generations(dir_, "log")) {
      if (old < next) std::remove(Numbered(dir_, "log", old).c_str());
    }
    for (uint64_t old : Generations(dir_, "snapshot")) {
      if (old < next) std::remove(Numbered(dir_, "snapshot", old).c_str());
    }
    return Status::Ok();
  }

  Status Recover() {
    std::vector<uint64_t> snapshots = Generations(dir_, "snapshot");
    if (snapshots.empty()) return NotFoundError("no stream in " + dir_);
    generation_ = snapshots.back();
    const std::string snapshot_path = Numbered(dir_, "snapshot", generation_);
    NEARDUP_ASSIGN_OR_RETURN(LogContents snapshot, ReadLogFile(snapshot_path));
    if (!snapshot.tail_error.empty() || snapshot.records.empty()) {
      return DataLossError("snapshot " + snapshot_path + " is corrupt: " +
                           (snapshot.tail_error.empty() ? "no header" : snapshot.tail_error));
    }
    for (size_t i = 1; i < snapshot.records.size(); ++i) {
      NEARDUP_ASSIGN_OR_RETURN(StreamDoc doc, internal::DecodeAdd(snapshot.records[i]));
      NEARDUP_RETURN_IF_ERROR(state_.LoadDoc(std::move(doc)));
      ++recovery_.snapshot_documents;
    }
    // Logs from the snapshot's generation on; older ones are left-overs of an
    // interrupted clean-up and hold nothing the snapshot lacks.
    std::vector<uint64_t> logs;
    for (uint64_t g : Generations(dir_, "log")) {
      if (g >= generation_) logs.push_back(g);
    }
    uint64_t valid_bytes = 0;
    for (size_t i = 0; i < logs.size(); ++i) {
      const std::string path = Numbered(dir_, "log", logs[i]);
      NEARDUP_ASSIGN_OR_RETURN(LogContents contents, ReadLogFile(path));
      const bool last = i + 1 == logs.size();
      if (!contents.tail_error.empty()) {
        if (!last) return DataLossError("log " + path + " is corrupt: " + contents.tail_error);
        recovery_.truncated_bytes = contents.file_bytes - contents.valid_bytes;
        recovery_.truncation = path + ": " + contents.tail_error + "; " +
                               std::to_string(recovery_.truncated_bytes) + " bytes cut";
      }
      for (const std::string& record : contents.records) {
        NEARDUP_RETURN_IF_ERROR(ApplyRecord(record).WithContext(path));
        ++recovery_.replayed_records;
      }
      if (last) {
        generation_ = logs[i];
        valid_bytes = contents.valid_bytes;
      }
    }
    NEARDUP_ASSIGN_OR_RETURN(
        std::unique_ptr<WriteAheadLog> log,
        WriteAheadLog::Open(Numbered(dir_, "log", generation_), valid_bytes, {options_.sync}));
    log_ = std::move(log);
    return options_.sync ? SyncDirectory(dir_) : Status::Ok();
  }

  Status ApplyRecord(std::string_view record) {
    NEARDUP_ASSIGN_OR_RETURN(StreamRecordType type, internal::RecordType(record));
    if (type == StreamRecordType::kAdd) {
      NEARDUP_ASSIGN_OR_RETURN(StreamDoc doc, internal::DecodeAdd(record));
      return state_.ApplyAdd(std::move(doc));
    }
    if (type == StreamRecordType::kRemove) {
      NEARDUP_ASSIGN_OR_RETURN(std::string id, internal::DecodeRemove(record));
      Status status = state_.ApplyRemove(id);
      // A logged remove always found its document.
      return status.ok() ? status : DataLossError("log removes an absent id \"" + id + "\"");
    }
    return DataLossError("a header record inside a log");
  }

  // Appends `record` (REQUIRES: mutex_ held); returns the log and LSN to wait
  // on after unlocking (null for an in-memory stream).
  Result<std::pair<std::shared_ptr<WriteAheadLog>, uint64_t>> AppendLocked(
      std::string_view record) {
    if (!failed_.ok()) return failed_;
    if (log_ == nullptr) return std::pair<std::shared_ptr<WriteAheadLog>, uint64_t>{nullptr, 0};
    NEARDUP_ASSIGN_OR_RETURN(uint64_t lsn, log_->Append(record));
    return std::pair{log_, lsn};
  }

  // Decides and stores one document, or finds its stored answer (an id
  // present already). `fingerprint` is the text's, or null when the caller
  // skipped it (the id was present when it looked): it is then computed here
  // if the id has left meanwhile. REQUIRES: mutex_ held; a valid id.
  Status AddLocked(const StreamDocument& document, Fingerprint* fingerprint, StreamAnswer* answer) {
    if (const StreamDoc* stored = state_.Find(document.id)) {
      // A retry, or a concurrent request's add: the stored answer, durable
      // once the caller's SyncAll returns.
      *answer = AnswerOf(*stored);
      return Status::Ok();
    }
    Fingerprint computed;
    if (fingerprint == nullptr) {
      NEARDUP_RETURN_IF_ERROR(fingerprinter_->Compute(document.text, &computed));
      fingerprint = &computed;
    }
    const internal::StreamDecision decision = state_.Decide(*fingerprint, document.time);
    StreamDoc doc = state_.MakeDoc(document.id, document.time, decision, std::move(*fingerprint));
    if (state_.config().keep_texts) doc.text = std::string(document.text);
    NEARDUP_RETURN_IF_ERROR(AppendLocked(internal::EncodeAdd(doc)).status());
    *answer = AnswerOf(doc);
    Status applied = state_.ApplyAdd(std::move(doc));
    if (!applied.ok()) {
      // Memory and log now disagree: refuse further writes.
      failed_ = InternalError("stream state diverged from its log: " + applied.ToString());
      return failed_;
    }
    MaybeRotateLocked();
    return Status::Ok();
  }

  // ComputeBatch (parallel), or Compute on this thread for one text (a
  // single-document request pays no task scheduling).
  Status FingerprintAll(std::span<const std::string_view> texts,
                        std::vector<Fingerprint>* out) const {
    if (texts.size() != 1) return fingerprinter_->ComputeBatch(texts, out);
    out->resize(1);
    return fingerprinter_->Compute(texts[0], &(*out)[0]);
  }

  // Returns once `log` is durable up to `lsn`: the caller reads log_ and its
  // size under mutex_ after its last write (a rotation synced the older
  // logs). A failed sync stops every later write.
  Status SyncAll(const std::shared_ptr<WriteAheadLog>& log, uint64_t lsn) {
    if (log == nullptr) return Status::Ok();
    Status synced = log->SyncTo(lsn);
    if (!synced.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failed_.ok()) failed_ = synced;
    }
    return synced;
  }

  void MaybeRotateLocked() {
    // Past the larger of snapshot_log_bytes and the last snapshot's size (see
    // StreamOpenOptions::snapshot_grows_with_state).
    const uint64_t due = options_.snapshot_grows_with_state
                             ? std::max(options_.snapshot_log_bytes, snapshot_bytes_)
                             : options_.snapshot_log_bytes;
    if (log_ != nullptr && log_->size() >= due) {
      // A failed snapshot leaves the old log in use (or, past the point of no
      // return, failed_ set): the record just appended stays valid either way.
      RotateLocked().IgnoreError();
    }
  }

  StreamState state_;
  std::unique_ptr<Fingerprinter> fingerprinter_;
  std::optional<internal::PassageMatcher> passage_matcher_;  // keep_texts streams
  mutable std::mutex mutex_;  // the writer lock; guards everything below and state_
  std::string dir_;           // "" in memory
  StreamOpenOptions options_;
  std::shared_ptr<WriteAheadLog> log_;
  uint64_t generation_ = 0;
  uint64_t snapshots_ = 0;
  uint64_t snapshot_bytes_ = 0;  // of the last snapshot written (0: none since open)
  Status failed_;                // set once: writes refused after a log failure
  StreamRecovery recovery_;
};

NearDuplicateStream::NearDuplicateStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NearDuplicateStream::~NearDuplicateStream() = default;

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::Create(
    const StreamConfig& config) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(config));
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::OpenExisting(
    const std::string& dir, const StreamOpenOptions& options) {
  std::vector<uint64_t> snapshots = Generations(dir, "snapshot");
  if (snapshots.empty()) return NotFoundError("no stream in " + dir);
  const std::string path = Numbered(dir, "snapshot", snapshots.back());
  NEARDUP_ASSIGN_OR_RETURN(LogContents snapshot, ReadLogFile(path));
  if (snapshot.records.empty()) return DataLossError("snapshot " + path + " has no header");
  NEARDUP_ASSIGN_OR_RETURN(StreamHeader header, internal::DecodeHeader(snapshot.records[0]));
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(header.config));
  impl->dir_ = dir;
  impl->options_ = options;
  impl->state_.RestoreHeader(header);
  NEARDUP_RETURN_IF_ERROR(impl->Recover());
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::Open(
    const std::string& dir, const StreamConfig& config, const StreamOpenOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamConfig(config));
  if (!Generations(dir, "snapshot").empty()) {
    NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<NearDuplicateStream> stream,
                             OpenExisting(dir, options));
    if (!(stream->config() == config)) {
      return AlreadyExistsError("stream in " + dir + " exists with another config");
    }
    return stream;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(config));
  impl->dir_ = dir;
  impl->options_ = options;
  // The log first, then the snapshot that makes the directory a stream.
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WriteAheadLog> log,
                           WriteAheadLog::Open(Numbered(dir, "log", 0), 0, {options.sync}));
  impl->log_ = std::move(log);
  NEARDUP_RETURN_IF_ERROR(impl->WriteSnapshot(0));
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<StreamAnswer> NearDuplicateStream::Add(std::string_view id, std::string_view text,
                                              int64_t time) {
  NEARDUP_RETURN_IF_ERROR(CheckId(id));
  Impl& s = *impl_;
  bool present = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    present = s.state_.Find(id) != nullptr;
  }
  // Fingerprinting, the expensive part, runs outside the lock (a retry of a
  // present id needs none).
  Fingerprint fingerprint;
  if (!present) NEARDUP_RETURN_IF_ERROR(s.fingerprinter_->Compute(text, &fingerprint));
  StreamAnswer answer;
  std::shared_ptr<WriteAheadLog> log;
  uint64_t lsn = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    NEARDUP_RETURN_IF_ERROR(
        s.AddLocked(StreamDocument{id, text, time}, present ? nullptr : &fingerprint, &answer));
    log = s.log_;
    lsn = log == nullptr ? 0 : log->size();
  }
  NEARDUP_RETURN_IF_ERROR(s.SyncAll(log, lsn));
  return answer;
}

Result<std::vector<StreamAnswer>> NearDuplicateStream::AddBatch(
    std::span<const StreamDocument> documents) {
  Impl& s = *impl_;
  std::vector<StreamAnswer> answers(documents.size());
  std::shared_ptr<WriteAheadLog> log;
  uint64_t lsn = 0;
  Status failed;
  std::vector<std::string_view> texts;
  std::vector<size_t> positions;  // of each group document's text in `texts`
  std::vector<Fingerprint> fingerprints;
  for (size_t first = 0; first < documents.size() && failed.ok(); first += kStreamBatchGroup) {
    const std::span<const StreamDocument> group =
        documents.subspan(first, std::min(kStreamBatchGroup, documents.size() - first));
    // Only the texts of ids absent now: a present id gets its stored answer
    // (one that leaves meanwhile is fingerprinted under the lock by
    // AddLocked, as Add would have done).
    texts.clear();
    positions.assign(group.size(), SIZE_MAX);
    {
      std::lock_guard<std::mutex> lock(s.mutex_);
      for (size_t i = 0; i < group.size(); ++i) {
        if (CheckId(group[i].id).ok() && s.state_.Find(group[i].id) == nullptr) {
          positions[i] = texts.size();
          texts.push_back(group[i].text);
        }
      }
    }
    failed = s.FingerprintAll(texts, &fingerprints);
    if (!failed.ok()) {
      failed = failed.WithContext("document \"" + std::string(group[0].id) + "\"");
      break;
    }
    std::lock_guard<std::mutex> lock(s.mutex_);
    for (size_t i = 0; i < group.size() && failed.ok(); ++i) {
      const StreamDocument& document = group[i];
      failed = CheckId(document.id);
      if (failed.ok()) {
        Fingerprint* fingerprint = positions[i] == SIZE_MAX ? nullptr : &fingerprints[positions[i]];
        failed = s.AddLocked(document, fingerprint, &answers[first + i]);
      }
      if (!failed.ok())
        failed = failed.WithContext("document \"" + std::string(document.id) + "\"");
    }
    log = s.log_;
    lsn = log == nullptr ? 0 : log->size();
  }
  // What was stored before an error is made durable too, so that a retry of
  // the batch finds it with the same answers.
  NEARDUP_RETURN_IF_ERROR(s.SyncAll(log, lsn));
  NEARDUP_RETURN_IF_ERROR(failed);
  return answers;
}

Result<StreamAnswer> NearDuplicateStream::Check(std::string_view id, std::string_view text,
                                                int64_t time) const {
  Fingerprint fingerprint;
  NEARDUP_RETURN_IF_ERROR(impl_->fingerprinter_->Compute(text, &fingerprint));
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  internal::StreamDecision decision = impl_->state_.Decide(fingerprint, time);
  return StreamAnswer{std::string(id), decision.status, decision.of, decision.similarity, time};
}

Result<std::vector<StreamAnswer>> NearDuplicateStream::CheckBatch(
    std::span<const StreamDocument> documents) const {
  std::vector<std::string_view> texts;
  texts.reserve(documents.size());
  for (const StreamDocument& document : documents) texts.push_back(document.text);
  std::vector<Fingerprint> fingerprints;
  NEARDUP_RETURN_IF_ERROR(impl_->FingerprintAll(texts, &fingerprints));
  std::vector<StreamAnswer> answers;
  answers.reserve(documents.size());
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  for (size_t i = 0; i < documents.size(); ++i) {
    const internal::StreamDecision decision =
        impl_->state_.Decide(fingerprints[i], documents[i].time);
    answers.push_back(StreamAnswer{std::string(documents[i].id), decision.status, decision.of,
                                   decision.similarity, documents[i].time});
  }
  return answers;
}

Result<StreamAnswer> NearDuplicateStream::Get(std::string_view id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  const StreamDoc* doc = impl_->state_.Find(id);
  if (doc == nullptr) return NotFoundError("no document \"" + std::string(id) + "\"");
  return AnswerOf(*doc);
}

Result<std::string> NearDuplicateStream::Text(std::string_view id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  if (!impl_->state_.config().keep_texts) {
    return FailedPreconditionError("the stream does not keep texts (keep_texts is false)");
  }
  const StreamDoc* doc = impl_->state_.Find(id);
  if (doc == nullptr) return NotFoundError("no document \"" + std::string(id) + "\"");
  return doc->text;
}

Result<StreamEntry> NearDuplicateStream::Entry(std::string_view id,
                                               const StreamDetail& detail) const {
  NEARDUP_RETURN_IF_ERROR(CheckDetail(detail, impl_->state_.config()));
  StreamEntry entry;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex_);
    const StreamDoc* doc = impl_->state_.Find(id);
    if (doc == nullptr) return NotFoundError("no document \"" + std::string(id) + "\"");
    entry = impl_->EntryLocked(*doc, detail);
  }
  NEARDUP_RETURN_IF_ERROR(impl_->AddPassages(detail, &entry));
  return entry;
}

Result<StreamPage> NearDuplicateStream::List(const StreamListOptions& options) const {
  NEARDUP_RETURN_IF_ERROR(CheckDetail(options.detail, impl_->state_.config()));
  if (options.limit < 1 || options.limit > kMaxStreamListLimit) {
    return InvalidArgumentError("limit (" + std::to_string(options.limit) + ") must be in [1, " +
                                std::to_string(kMaxStreamListLimit) + "]");
  }
  if (options.max_scanned < 1) return InvalidArgumentError("max_scanned (0) must be at least 1");
  std::optional<StreamState::ListKey> after;
  if (!options.cursor.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(after, DecodeCursor(options.cursor));
  }
  std::string needle = options.search;
  std::transform(needle.begin(), needle.end(), needle.begin(), AsciiLower);
  auto accept = [&](const StreamDoc& doc) {
    return needle.empty() || ContainsFolded(doc.id, needle) || ContainsFolded(doc.of, needle);
  };
  StreamPage page;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex_);
    std::vector<const StreamDoc*> docs;
    std::optional<StreamState::ListKey> next =
        impl_->state_.ListNearDuplicates(options, after, accept, &docs, &page.scanned);
    if (next) page.next_cursor = EncodeCursor(*next);
    page.entries.reserve(docs.size());
    for (const StreamDoc* doc : docs) {
      page.entries.push_back(impl_->EntryLocked(*doc, options.detail));
    }
  }
  for (StreamEntry& entry : page.entries) {
    NEARDUP_RETURN_IF_ERROR(impl_->AddPassages(options.detail, &entry));
  }
  return page;
}

Status NearDuplicateStream::Remove(std::string_view id) {
  Impl& s = *impl_;
  std::shared_ptr<WriteAheadLog> log;
  uint64_t lsn = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    if (s.state_.Find(id) == nullptr) {
      return NotFoundError("no document \"" + std::string(id) + "\"");
    }
    NEARDUP_ASSIGN_OR_RETURN(auto appended, s.AppendLocked(internal::EncodeRemove(id)));
    std::tie(log, lsn) = appended;
    NEARDUP_RETURN_IF_ERROR(s.state_.ApplyRemove(id));
    s.MaybeRotateLocked();
  }
  return log == nullptr ? Status::Ok() : log->SyncTo(lsn);
}

StreamStats NearDuplicateStream::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  StreamStats stats;
  impl_->state_.FillStats(&stats);
  if (impl_->log_ != nullptr) {
    stats.log_bytes = impl_->log_->size();
    stats.log_syncs = impl_->log_->syncs();
    stats.log_sync_nanoseconds = impl_->log_->sync_nanoseconds();
  }
  stats.snapshots = impl_->snapshots_;
  return stats;
}

const StreamConfig& NearDuplicateStream::config() const { return impl_->state_.config(); }
const Recipe& NearDuplicateStream::recipe() const { return impl_->state_.recipe(); }
const StreamRecovery& NearDuplicateStream::recovery() const { return impl_->recovery_; }

Status NearDuplicateStream::Snapshot() {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  if (impl_->log_ == nullptr) return Status::Ok();
  return impl_->RotateLocked();
}

}  // namespace neardup
