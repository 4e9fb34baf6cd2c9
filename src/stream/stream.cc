#include "neardup/stream.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/containment_passages.h"
#include "neardup/fingerprinter.h"
#include "neardup/write_ahead_log.h"
#include "stream/stream_files.h"
#include "stream/stream_record.h"
#include "stream/stream_state.h"

namespace neardup {

using internal::LoadStreamFiles;
using internal::StreamDoc;
using internal::StreamFileGenerations;
using internal::StreamFilePath;
using internal::StreamHeader;
using internal::StreamState;
using internal::WriteStreamSnapshot;

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

StreamAnswer AnswerOf(const StreamDoc& doc) {
  return StreamAnswer{doc.id, doc.status, doc.of, doc.similarity, doc.time};
}

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

  // Writes snapshot-<generation> (see WriteStreamSnapshot). REQUIRES: mutex_
  // held (or not yet shared).
  Status WriteSnapshotLocked(uint64_t generation) {
    return WriteStreamSnapshot(dir_, generation, state_, options_.sync, &snapshot_bytes_);
  }

  // Rotation, in three steps, so that no request waits for a whole
  // snapshot (a 1M-document window's is gigabytes; written under the writer
  // lock it stalled every request for hundreds of milliseconds):
  // 1. StartRotationLocked: the old log synced, a new log-<g+1> started, and
  //    snapshot-<g+1>.tmp begun with the header of the state at that moment
  //    (StreamState::BeginSnapshot fixes its documents).
  // 2. StepSnapshotLocked, after each write operation: the next piece of the
  //    snapshot, at least snapshot_step_bytes and four times what the
  //    operation added to the log (so it ends while the new log is still a
  //    fraction of it); the documents the window or a remove erases
  //    meanwhile are kept aside until written.
  // 3. FinishSnapshot, outside the lock, by the caller whose step wrote the
  //    last piece: fsync, rename to snapshot-<g+1>, then older files deleted.
  // Until the rename, recovery reads snapshot-<g> and replays log-<g> and
  // log-<g+1> (each record follows the previous one): a crash or a failure
  // at any step loses nothing, it only leaves the older files in use until
  // the next rotation. REQUIRES: mutex_ held, no snapshot in progress.
  Status StartRotationLocked() {
    if (!failed_.ok()) return failed_;
    // A record of the new log must never be on disk while one before it is
    // not (recovery would find a gap).
    NEARDUP_RETURN_IF_ERROR(log_->SyncTo(log_->size()));
    const uint64_t next = generation_ + 1;
    NEARDUP_ASSIGN_OR_RETURN(
        std::unique_ptr<internal::SnapshotFile> snapshot,
        internal::SnapshotFile::Create(dir_, next, internal::EncodeHeader(state_.Header())));
    const std::string log_path = StreamFilePath(dir_, "log", next);
    Result<std::unique_ptr<WriteAheadLog>> log = WriteAheadLog::Open(log_path, 0, {options_.sync});
    // The new log's name must be durable before a record in it is.
    Status synced = !log.ok() ? log.status() : options_.sync ? SyncDirectory(dir_) : Status::Ok();
    if (!synced.ok()) {
      if (log.ok()) std::remove(log_path.c_str());
      return synced;
    }
    log_ = std::shared_ptr<WriteAheadLog>(std::move(log).value());
    log_bytes_stepped_ = 0;
    generation_ = next;
    snapshot_ = std::move(snapshot);
    state_.BeginSnapshot();
    return Status::Ok();
  }

  // Writes the next piece of the snapshot in progress (all of it for
  // SIZE_MAX); once the last is written, finish_due_ tells the caller to
  // call FinishSnapshot after unlocking. A failed write abandons the
  // snapshot (see StartRotationLocked). REQUIRES: mutex_ held, a snapshot
  // being written.
  Status StepSnapshotLocked(size_t min_bytes) {
    std::string records;
    const bool last = state_.AppendSnapshotRecords(min_bytes, &records);
    Status written = snapshot_->Append(records);
    if (!written.ok()) {
      AbandonSnapshotLocked();
      return written;
    }
    if (last) {
      state_.EndSnapshot();
      snapshot_finishing_ = true;
      finish_due_ = true;
    }
    return Status::Ok();
  }

  // REQUIRES: mutex_ held, a snapshot being written (not finishing).
  void AbandonSnapshotLocked() {
    state_.EndSnapshot();
    snapshot_.reset();  // removes the temporary file
  }

  // Step 3 of a rotation. REQUIRES: mutex_ not held; the caller took
  // finish_due_ (only it touches snapshot_ until snapshot_finishing_ is
  // cleared).
  Status FinishSnapshot() {
    Status finished = snapshot_->Finish(options_.sync);
    const uint64_t next = snapshot_->generation();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (finished.ok()) {
        snapshot_bytes_ = snapshot_->bytes();
        ++snapshots_;
      }
      snapshot_.reset();
      snapshot_finishing_ = false;
      snapshot_done_.notify_all();
    }
    // Outside the lock: unlinking a large file frees its page cache, tens of
    // milliseconds per 100 MB. Only files older than the snapshot just
    // renamed go, which nothing reads any more (recovery and ReloadLocked
    // start from the newest snapshot), and a later rotation only creates
    // newer ones.
    if (finished.ok()) {
      for (const char* prefix : {"log", "snapshot"}) {
        for (uint64_t old : StreamFileGenerations(dir_, prefix)) {
          if (old < next) std::remove(StreamFilePath(dir_, prefix, old).c_str());
        }
      }
    }
    return finished;
  }

  // After a write operation's critical section: FinishSnapshot when its step
  // wrote the snapshot's last piece. `due` is finish_due_, taken under the
  // lock. A failed snapshot leaves the older files in use: nothing is lost,
  // and the next rotation tries again.
  void FinishSnapshotIfDue(bool due) {
    if (due) FinishSnapshot().IgnoreError();
  }

  Status Recover() {
    internal::RemoveSnapshotLeftovers(dir_);
    uint64_t valid_bytes = 0;
    NEARDUP_RETURN_IF_ERROR(LoadStreamFiles(dir_, &state_, &recovery_, &generation_, &valid_bytes));
    NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WriteAheadLog> log,
                             WriteAheadLog::Open(StreamFilePath(dir_, "log", generation_),
                                                 valid_bytes, {options_.sync}));
    log_ = std::move(log);
    return options_.sync ? SyncDirectory(dir_) : Status::Ok();
  }

  // After a failed batch write: state_ becomes again what the log holds
  // (snapshot + log replayed: the adds that were applied but not written whole
  // are undone, evictions they caused included). Costs a recovery, under the
  // writer lock, only when the disk fails. If the files cannot be read back
  // to exactly the log's length, every later write is refused.
  void ReloadLocked() {
    Result<StreamState> fresh = StreamState::Create(state_.config());
    StreamRecovery unused;
    uint64_t generation = 0;
    uint64_t valid_bytes = 0;
    Status loaded = fresh.status();
    if (loaded.ok()) loaded = LoadStreamFiles(dir_, &*fresh, &unused, &generation, &valid_bytes);
    if (loaded.ok() && (generation != generation_ || valid_bytes != log_->size())) {
      loaded = InternalError("log " + log_->path() + " holds " + std::to_string(valid_bytes) +
                             " valid bytes; " + std::to_string(log_->size()) + " were written");
    }
    if (!loaded.ok()) {
      failed_ = InternalError("cannot undo a failed log write: " + loaded.ToString());
      return;
    }
    // The snapshot being written holds documents of the state replaced here;
    // one already complete (finishing) is valid as it is.
    if (snapshot_ != nullptr && !snapshot_finishing_) AbandonSnapshotLocked();
    state_ = std::move(fresh).value();
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

  // The document to store for `document`, decided against the state now, or
  // nullopt when its id is present: *answer is then the stored answer (a
  // retry, or a concurrent request's add, durable once the caller's SyncAll
  // returns). `fingerprint` is the text's, or null when the caller skipped it
  // (the id was present when it looked): it is then computed here if the id
  // has left meanwhile. REQUIRES: mutex_ held; a valid id.
  Result<std::optional<StreamDoc>> PrepareLocked(const StreamDocument& document,
                                                 Fingerprint* fingerprint,
                                                 StreamAnswer* answer) const {
    if (const StreamDoc* stored = state_.Find(document.id)) {
      *answer = AnswerOf(*stored);
      return std::optional<StreamDoc>();
    }
    Fingerprint computed;
    if (fingerprint == nullptr) {
      NEARDUP_RETURN_IF_ERROR(fingerprinter_->Compute(document.text, &computed));
      fingerprint = &computed;
    }
    const internal::StreamDecision decision = state_.Decide(*fingerprint, document.time);
    StreamDoc doc = state_.MakeDoc(document.id, document.time, decision, std::move(*fingerprint));
    if (state_.config().keep_texts) doc.text = std::string(document.text);
    *answer = AnswerOf(doc);
    return std::optional<StreamDoc>(std::move(doc));
  }

  // Stores a decided document in memory. REQUIRES: mutex_ held.
  Status ApplyLocked(StreamDoc doc) {
    Status applied = state_.ApplyAdd(std::move(doc));
    if (!applied.ok()) {
      // Memory and log now disagree: refuse further writes.
      failed_ = InternalError("stream state diverged from its log: " + applied.ToString());
      return failed_;
    }
    return Status::Ok();
  }

  // Decides and stores one document (Add): its record is written before it
  // is applied, so a failed write leaves nothing to undo. REQUIRES: mutex_
  // held; a valid id.
  Status AddLocked(const StreamDocument& document, Fingerprint* fingerprint, StreamAnswer* answer) {
    NEARDUP_ASSIGN_OR_RETURN(std::optional<StreamDoc> doc,
                             PrepareLocked(document, fingerprint, answer));
    if (!doc) return Status::Ok();
    if (log_ != nullptr) NEARDUP_RETURN_IF_ERROR(AppendLocked(internal::EncodeAdd(*doc)).status());
    NEARDUP_RETURN_IF_ERROR(ApplyLocked(std::move(*doc)));
    MaybeRotateLocked();
    return Status::Ok();
  }

  // Decides and stores the documents of one group of AddBatch in order
  // (fingerprints[positions[i]] is group[i]'s, SIZE_MAX: skipped, see
  // PrepareLocked), answers[i] for group[i], then writes their records with
  // one log write (WriteAheadLog::AppendBatch). Each document is applied to
  // memory as it is decided (the next one's decision depends on it) and the
  // write comes last, so a failed write is undone by ReloadLocked: the
  // documents whose records are in the log whole stay, the rest leave
  // memory too. On an error at group[i] (its own, or its record not written)
  // the documents before it are stored, none from it on, and the error names
  // it. REQUIRES: mutex_ held.
  Status AddGroupLocked(std::span<const StreamDocument> group, std::span<const size_t> positions,
                        std::vector<Fingerprint>* fingerprints, StreamAnswer* answers) {
    std::vector<std::string> records;
    std::vector<size_t> record_of;  // the group index of each record
    Status error;
    size_t error_at = group.size();
    for (size_t i = 0; i < group.size(); ++i) {
      Status status = CheckId(group[i].id);
      std::optional<StreamDoc> doc;
      if (status.ok()) {
        Fingerprint* fingerprint =
            positions[i] == SIZE_MAX ? nullptr : &(*fingerprints)[positions[i]];
        Result<std::optional<StreamDoc>> prepared =
            PrepareLocked(group[i], fingerprint, &answers[i]);
        status = prepared.status();
        if (status.ok()) doc = std::move(prepared).value();
      }
      // A stream that refuses writes still answers a present id (as Add).
      if (status.ok() && doc && log_ != nullptr && !failed_.ok()) status = failed_;
      if (status.ok() && doc && log_ != nullptr) {
        std::string record = internal::EncodeAdd(*doc);
        if (record.size() > kMaxLogRecordBytes) {
          status = InvalidArgumentError("log record of " + std::to_string(record.size()) +
                                        " bytes exceeds the maximum " +
                                        std::to_string(kMaxLogRecordBytes));
        } else {
          records.push_back(std::move(record));
          record_of.push_back(i);
        }
      }
      if (status.ok() && doc) status = ApplyLocked(std::move(*doc));
      if (!status.ok()) {
        error = status;
        error_at = i;
        break;
      }
    }
    if (!records.empty()) {
      size_t appended = 0;
      Status written = failed_.ok() ? log_->AppendBatch(records, &appended).status() : failed_;
      if (!written.ok()) {
        ReloadLocked();
        error = written;
        error_at = record_of[appended];
      }
    }
    if (log_ != nullptr && (error.ok() || error_at > 0)) MaybeRotateLocked();
    if (!error.ok()) {
      return error.WithContext("document \"" + std::string(group[error_at].id) + "\"");
    }
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

  // After each write operation: the next piece of a snapshot in progress,
  // or a rotation once the log is past the larger of snapshot_log_bytes and
  // the last snapshot's size (see StreamOpenOptions). A failure leaves the
  // older files in use: the record just appended stays valid either way.
  // REQUIRES: mutex_ held.
  void MaybeRotateLocked() {
    if (log_ == nullptr || snapshot_finishing_) return;
    const uint64_t grown = log_->size() - log_bytes_stepped_;
    log_bytes_stepped_ = log_->size();
    if (snapshot_ == nullptr) {
      const uint64_t due = options_.snapshot_grows_with_state
                               ? std::max(options_.snapshot_log_bytes, snapshot_bytes_)
                               : options_.snapshot_log_bytes;
      if (log_->size() < due || !StartRotationLocked().ok()) return;
    }
    const uint64_t step = std::max<uint64_t>(options_.snapshot_step_bytes, 4 * grown);
    StepSnapshotLocked(static_cast<size_t>(std::min<uint64_t>(step, SIZE_MAX))).IgnoreError();
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
  // The snapshot in progress (see StartRotationLocked), null when none; once
  // snapshot_finishing_, only the thread that took finish_due_ touches it.
  std::unique_ptr<internal::SnapshotFile> snapshot_;
  bool snapshot_finishing_ = false;
  bool finish_due_ = false;                // taken by the writer whose step ended the snapshot
  std::condition_variable snapshot_done_;  // snapshot_finishing_ cleared
  uint64_t log_bytes_stepped_ = 0;         // log size at the last MaybeRotateLocked
  Status failed_;                          // set once: writes refused after a log failure
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
  std::vector<uint64_t> snapshots = StreamFileGenerations(dir, "snapshot");
  if (snapshots.empty()) return NotFoundError("no stream in " + dir);
  const std::string path = StreamFilePath(dir, "snapshot", snapshots.back());
  NEARDUP_ASSIGN_OR_RETURN(LogContents snapshot, ReadLogFile(path));
  if (snapshot.records.empty()) return DataLossError("snapshot " + path + " has no header");
  NEARDUP_ASSIGN_OR_RETURN(StreamHeader header, internal::DecodeHeader(snapshot.records[0]));
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(header.config));
  impl->dir_ = dir;
  impl->options_ = options;
  NEARDUP_RETURN_IF_ERROR(impl->Recover());
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::Open(
    const std::string& dir, const StreamConfig& config, const StreamOpenOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamConfig(config));
  if (!StreamFileGenerations(dir, "snapshot").empty()) {
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
                           WriteAheadLog::Open(StreamFilePath(dir, "log", 0), 0, {options.sync}));
  impl->log_ = std::move(log);
  NEARDUP_RETURN_IF_ERROR(impl->WriteSnapshotLocked(0));
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
  Status added;
  bool finish = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    added = s.AddLocked(StreamDocument{id, text, time}, present ? nullptr : &fingerprint, &answer);
    log = s.log_;
    lsn = log == nullptr ? 0 : log->size();
    finish = std::exchange(s.finish_due_, false);
  }
  s.FinishSnapshotIfDue(finish);
  NEARDUP_RETURN_IF_ERROR(added);
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
    bool finish = false;
    {
      std::lock_guard<std::mutex> lock(s.mutex_);
      failed = s.AddGroupLocked(group, positions, &fingerprints, &answers[first]);
      log = s.log_;
      lsn = log == nullptr ? 0 : log->size();
      finish = std::exchange(s.finish_due_, false);
    }
    s.FinishSnapshotIfDue(finish);
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
  bool finish = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    if (s.state_.Find(id) == nullptr) {
      return NotFoundError("no document \"" + std::string(id) + "\"");
    }
    NEARDUP_ASSIGN_OR_RETURN(auto appended, s.AppendLocked(internal::EncodeRemove(id)));
    std::tie(log, lsn) = appended;
    NEARDUP_RETURN_IF_ERROR(s.state_.ApplyRemove(id));
    s.MaybeRotateLocked();
    finish = std::exchange(s.finish_due_, false);
  }
  s.FinishSnapshotIfDue(finish);
  return log == nullptr ? Status::Ok() : log->SyncTo(lsn);
}

StreamStats NearDuplicateStream::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  StreamStats stats;
  impl_->state_.FillStats(&stats);
  if (impl_->log_ != nullptr) {
    stats.log_bytes = impl_->log_->size();
    stats.log_appends = impl_->log_->appends();
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
  Impl& s = *impl_;
  // One in progress (or finishing) holds the state of an earlier moment:
  // it is completed first, then one of now is written.
  for (;;) {
    bool earlier = false;
    {
      std::unique_lock<std::mutex> lock(s.mutex_);
      if (s.log_ == nullptr) return Status::Ok();
      s.snapshot_done_.wait(lock, [&s] { return !s.snapshot_finishing_; });
      earlier = s.snapshot_ != nullptr;
      if (!earlier) NEARDUP_RETURN_IF_ERROR(s.StartRotationLocked());
      NEARDUP_RETURN_IF_ERROR(s.StepSnapshotLocked(SIZE_MAX));
      s.finish_due_ = false;
    }
    NEARDUP_RETURN_IF_ERROR(s.FinishSnapshot());
    if (!earlier) return Status::Ok();
  }
}

}  // namespace neardup
