#include "stream/stream_impl.h"

#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "stream/stream_files.h"
#include "stream/stream_record.h"
#include "util/status_fallback.h"

namespace neardup {

using internal::AnswerOf;
using internal::CheckStreamId;
using internal::StreamDoc;
using internal::StreamState;

namespace internal {

Status CheckStreamId(std::string_view id) {
  if (id.empty()) return InvalidArgumentError("id must not be empty");
  if (id.size() > kMaxStreamIdBytes) {
    return InvalidArgumentError("id (" + std::to_string(id.size()) + " bytes) must be at most " +
                                std::to_string(kMaxStreamIdBytes) + " bytes");
  }
  return Status::Ok();
}

}  // namespace internal

NearDuplicateStream::Impl::Impl(StreamState state, std::unique_ptr<Fingerprinter> fingerprinter)
    : state_(std::move(state)), fingerprinter_(std::move(fingerprinter)) {}

Result<std::unique_ptr<NearDuplicateStream::Impl>> NearDuplicateStream::Impl::Make(
    const StreamConfig& config, StreamSchemeMemo* schemes) {
  NEARDUP_ASSIGN_OR_RETURN(
      StreamState state,
      StreamState::Create(config, schemes == nullptr ? nullptr : &internal::SchemesOf(*schemes)));
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

StreamEntry NearDuplicateStream::Impl::EntryLocked(const StreamDoc& doc,
                                                   const StreamDetail& detail) const {
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

Status NearDuplicateStream::Impl::AddPassages(const StreamDetail& detail,
                                              StreamEntry* entry) const {
  if (!detail.passages || !entry->text || !entry->of_text) return Status::Ok();
  NEARDUP_ASSIGN_OR_RETURN(entry->passages, passage_matcher_->Match(*entry->text, *entry->of_text));
  return Status::Ok();
}

Status NearDuplicateStream::Impl::Recover() {
  internal::RemoveSnapshotLeftovers(dir_);
  uint64_t valid_bytes = 0;
  internal::StreamLogBeforeEmpty before_empty;
  NEARDUP_RETURN_IF_ERROR(internal::LoadStreamFiles(dir_, &state_, &recovery_, &generation_,
                                                    &valid_bytes, &earlier_bytes_, &snapshot_bytes_,
                                                    &before_empty));
  if (before_empty.found) {
    // The newest log is one made ahead of its roll-over (PrepareSpareLog)
    // and empty: the log before it is cut after its last whole record and
    // synced (WriteAheadLog::Open) before any record goes to the new one,
    // as a roll-over would have synced it.
    NEARDUP_RETURN_IF_ERROR(
        WriteAheadLog::Open(internal::StreamFilePath(dir_, "log", before_empty.generation),
                            before_empty.valid_bytes, {options_.sync})
            .status());
  }
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WriteAheadLog> log,
                           WriteAheadLog::Open(internal::StreamFilePath(dir_, "log", generation_),
                                               valid_bytes, {options_.sync}));
  log_ = std::move(log);
  if (options_.sync) NEARDUP_RETURN_IF_ERROR(SyncDirectory(dir_));
  spare_wanted_ = true;  // by the snapshot thread, started at the first write (OfferSpareLocked)
  // Files older than the snapshot just loaded are left-overs of a crash
  // between a snapshot's rename and FinishSnapshot's deletes; nothing reads
  // them (LoadStreamFiles starts from the newest snapshot, which was synced
  // before its rename, and its rename is durable now), and a window that
  // only grows may never write the next snapshot that would delete them.
  const std::vector<uint64_t> snapshots = internal::StreamFileGenerations(dir_, "snapshot");
  for (const char* prefix : {"log", "snapshot"}) {
    for (uint64_t old : internal::StreamFileGenerations(dir_, prefix)) {
      if (old < snapshots.back()) std::remove(internal::StreamFilePath(dir_, prefix, old).c_str());
    }
  }
  return Status::Ok();
}

void NearDuplicateStream::Impl::ReloadLocked() {
  Result<StreamState> fresh = StreamState::Create(state_.config(), nullptr, &state_.scheme());
  StreamRecovery unused;
  uint64_t generation = 0;
  uint64_t valid_bytes = 0;
  Status loaded = fresh.status();
  if (loaded.ok()) {
    // Up to the current log: a newer one is a spare, empty (PrepareSpareLog).
    loaded = internal::LoadStreamFiles(dir_, &*fresh, &unused, &generation, &valid_bytes, nullptr,
                                       nullptr, nullptr, generation_);
  }
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

namespace {

// What WriteAheadLog says of a payload past kMaxLogRecordBytes.
Status RecordTooLargeError(size_t bytes) {
  return InvalidArgumentError("log record of " + std::to_string(bytes) +
                              " bytes exceeds the maximum " + std::to_string(kMaxLogRecordBytes));
}

}  // namespace

Result<std::pair<std::shared_ptr<WriteAheadLog>, uint64_t>> NearDuplicateStream::Impl::AppendLocked(
    std::string_view record) {
  if (!failed_.ok()) return failed_;
  if (log_ == nullptr) return std::pair<std::shared_ptr<WriteAheadLog>, uint64_t>{nullptr, 0};
  RollIfDurableLocked(&roll_counts_.before_append);
  NEARDUP_ASSIGN_OR_RETURN(uint64_t lsn, log_->Append(record));
  return std::pair{log_, lsn};
}

Result<std::optional<StreamDoc>> NearDuplicateStream::Impl::PrepareLocked(
    const StreamDocument& document, uint64_t id_hash, Fingerprint* fingerprint,
    StreamAnswer* answer, std::vector<uint64_t>* band_keys) const {
  if (const StreamDoc* stored = state_.FindHashed(document.id, id_hash)) {
    *answer = AnswerOf(*stored);
    return std::optional<StreamDoc>();
  }
  Fingerprint computed;
  if (fingerprint == nullptr) {
    NEARDUP_RETURN_IF_ERROR(fingerprinter_->Compute(document.text, &computed));
    fingerprint = &computed;
  }
  const internal::StreamDecision decision = state_.Decide(*fingerprint, document.time, band_keys);
  StreamDoc doc = state_.MakeDoc(document.id, document.time, decision, std::move(*fingerprint));
  if (state_.config().keep_texts) doc.text = std::string(document.text);
  *answer = AnswerOf(doc);
  return std::optional<StreamDoc>(std::move(doc));
}

Status NearDuplicateStream::Impl::WriteAppliedLocked(std::string_view framed,
                                                     std::span<const size_t> ends,
                                                     size_t* appended) {
  Status written;
  try {
    RollIfDurableLocked(&roll_counts_.before_append);
    // failed_: a guard only (both callers check it before they apply).
    written = failed_.ok() ? log_->AppendFramed(framed, ends, appended).status() : failed_;
  } catch (const std::bad_alloc&) {
    written = internal::OutOfMemoryStatus();
    if (appended != nullptr) *appended = 0;
  }
  if (written.ok()) return written;
  try {
    ReloadLocked();
  } catch (const std::bad_alloc&) {
    failed_ = Status(StatusCode::kInternal, "reload failed");
  }
  // A log whose cut failed refuses every later write (WriteAheadLog::broken):
  // the stream refuses them too, so that each later add does not apply and
  // reload only to fail the same way (session 18's review).
  if (failed_.ok() && log_->broken()) {
    failed_ = internal::StatusOrShort(written.code(), "log broken", [&] { return written; });
  }
  return written;
}

// Session 14: framed in place into the reused group buffer and written by
// AppendFramed, as a batch's records (it was EncodeAdd's string, then
// Append's copy of it into the log's own buffer). Session 18: applied
// before it is written, as a batch's record, so that a document the state
// refuses (out of memory: the state is unchanged) is not in the log and the
// stream goes on; it was written first, and such a refusal failed the
// stream for good. A failed write reloads the state (WriteAppliedLocked).
Status NearDuplicateStream::Impl::AddLocked(const StreamDocument& document, uint64_t id_hash,
                                            Fingerprint* fingerprint, StreamAnswer* answer) {
  NEARDUP_ASSIGN_OR_RETURN(std::optional<StreamDoc> doc,
                           PrepareLocked(document, id_hash, fingerprint, answer, &band_keys_));
  if (!doc) return Status::Ok();
  if (log_ == nullptr) return state_.ApplyAddHashed(std::move(*doc), id_hash, band_keys_);
  if (!failed_.ok()) return failed_;
  const size_t bytes = internal::EncodedAddBytes(*doc);
  if (bytes > kMaxLogRecordBytes) return RecordTooLargeError(bytes);
  std::string& framed = group_records_;
  framed.clear();
  internal::AppendFramedAdd(*doc, bytes, &framed);
  const size_t end = framed.size();
  Status status = state_.ApplyAddHashed(std::move(*doc), id_hash, band_keys_);
  if (status.ok()) status = WriteAppliedLocked(framed, std::span<const size_t>(&end, 1), nullptr);
  if (framed.capacity() > kKeptGroupRecordBytes) std::string().swap(framed);
  NEARDUP_RETURN_IF_ERROR(status);
  MaybeRotateAfterWriteLocked();
  return Status::Ok();
}

void NearDuplicateStream::Impl::MaybeRotateAfterWriteLocked() {
  try {
    MaybeRotateLocked();
  } catch (const std::bad_alloc&) {
    // The operation's records are written and applied: it goes on to its
    // sync. A throw from the roll-over or a rotation's start leaves the
    // current log in use; from a snapshot step, StepSnapshotLocked has
    // abandoned the snapshot.
  }
}

Status NearDuplicateStream::Impl::AddGroupLocked(std::span<const StreamDocument> group,
                                                 std::span<const uint64_t> id_hashes,
                                                 std::span<const size_t> positions,
                                                 std::vector<Fingerprint>* fingerprints,
                                                 StreamAnswer* answers) {
  // The group's records, framed straight into one buffer (no string per
  // record) and written with one write().
  std::string& framed = group_records_;
  framed.clear();
  std::vector<size_t> ends;       // of each record in `framed`
  std::vector<size_t> record_of;  // the group index of each record
  // Allocated before the first document is applied: below, a bad_alloc
  // before a document's apply ends the group there (session 18).
  ends.reserve(group.size());
  record_of.reserve(group.size());
  Status error;
  size_t error_at = group.size();
  for (size_t i = 0; i < group.size(); ++i) {
    Status status;
    std::optional<StreamDoc> doc;
    try {
      status = CheckStreamId(group[i].id);
      if (status.ok()) {
        Fingerprint* fingerprint =
            positions[i] == SIZE_MAX ? nullptr : &(*fingerprints)[positions[i]];
        Result<std::optional<StreamDoc>> prepared =
            PrepareLocked(group[i], id_hashes[i], fingerprint, &answers[i], &band_keys_);
        status = prepared.status();
        if (status.ok()) doc = std::move(prepared).value();
      }
      // A stream that refuses writes still answers a present id (as Add).
      if (status.ok() && doc && log_ != nullptr && !failed_.ok()) status = failed_;
      if (status.ok() && doc && log_ != nullptr) {
        const size_t bytes = internal::EncodedAddBytes(*doc);
        if (bytes > kMaxLogRecordBytes) {
          status = RecordTooLargeError(bytes);
        } else {
          internal::AppendFramedAdd(*doc, bytes, &framed);
          ends.push_back(framed.size());
          record_of.push_back(i);
        }
      }
    } catch (const std::bad_alloc&) {
      // Nothing of document i is applied; a part-framed record is cut.
      // (Its ends/record_of entries are never pushed: the push_backs are
      // the try's last statements and cannot throw, both being reserved.)
      status = internal::OutOfMemoryStatus();
      doc.reset();
      framed.resize(ends.empty() ? 0 : ends.back());
    }
    if (status.ok() && doc) {
      // The group is written after it is applied: a record the state
      // refuses (unchanged) is cut from the group, which ends before it,
      // and the stream goes on.
      status = state_.ApplyAddHashed(std::move(*doc), id_hashes[i], band_keys_);
      if (!status.ok() && log_ != nullptr) {
        ends.pop_back();
        record_of.pop_back();
        framed.resize(ends.empty() ? 0 : ends.back());
      }
    }
    if (!status.ok()) {
      error = std::move(status);  // no copy: nothing may throw between the apply and the write
      error_at = i;
      break;
    }
  }
  if (!ends.empty()) {
    size_t appended = 0;
    Status written = WriteAppliedLocked(framed, ends, &appended);
    if (!written.ok()) {
      error = std::move(written);
      error_at = record_of[appended];
    }
  }
  // A large group's buffer is not kept for ever.
  if (framed.capacity() > kKeptGroupRecordBytes) std::string().swap(framed);
  if (log_ != nullptr && (error.ok() || error_at > 0)) MaybeRotateAfterWriteLocked();
  if (!error.ok()) {
    // The documents before error_at are stored: out of memory building the
    // context must not hide that behind a bare bad_alloc (the caller syncs
    // them, NearDuplicateStream::AddBatch).
    try {
      return error.WithContext("document \"" + std::string(group[error_at].id) + "\"");
    } catch (const std::bad_alloc&) {
      return error;
    }
  }
  return Status::Ok();
}

Status NearDuplicateStream::Impl::FingerprintAll(std::span<const std::string_view> texts,
                                                 std::vector<Fingerprint>* out) const {
  if (texts.size() != 1) return fingerprinter_->ComputeBatch(texts, out);
  out->resize(1);
  return fingerprinter_->Compute(texts[0], &(*out)[0]);
}

Status NearDuplicateStream::Impl::SyncAll(const std::shared_ptr<WriteAheadLog>& log, uint64_t lsn) {
  if (log == nullptr) return Status::Ok();
  Status synced = SyncNewLogNames();
  if (synced.ok()) synced = log->SyncTo(lsn);
  if (!synced.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.ok()) failed_ = synced;
    return synced;
  }
  // The calls are durable now: what follows only saves later writers lock
  // time, so running out of memory in it must not fail them (the roll-over
  // and the spare are retried by a later writer, or made under the lock).
  try {
    if (roll_wanted_.load()) RollLogAfterSync(log);
  } catch (const std::bad_alloc&) {
    roll_helper_busy_ = false;
  }
  try {
    // The snapshot thread makes it unless it was handed to the writers
    // (OfferSpareLocked).
    if (spare_wanted_.load() && spare_by_writers_.load()) PrepareSpareLog(/*by_thread=*/false);
  } catch (const std::bad_alloc&) {
    // A file it may have made is not recorded as the spare: the roll-over
    // opens it as any other and counts its name.
    spare_wanted_ = true;
  }
  return Status::Ok();
}

}  // namespace neardup
