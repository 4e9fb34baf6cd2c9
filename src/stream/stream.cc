#include "neardup/stream.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "stream/stream_files.h"
#include "stream/stream_impl.h"
#include "stream/stream_record.h"
#include "stream/stream_state.h"
#include "util/status_fallback.h"

namespace neardup {

using internal::AnswerOf;
using internal::CheckStreamId;
using internal::StreamDoc;
using internal::StreamFileGenerations;
using internal::StreamFilePath;
using internal::StreamHeader;
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

Status ValidateStreamOpenOptions(const StreamOpenOptions& options) {
  if (options.snapshot_log_bytes < 1 || options.snapshot_log_bytes > kMaxStreamSnapshotLogBytes) {
    return InvalidArgumentError("snapshot_log_bytes (" +
                                std::to_string(options.snapshot_log_bytes) + ") must be in [1, " +
                                std::to_string(kMaxStreamSnapshotLogBytes) + "]");
  }
  return Status::Ok();
}

std::string_view StreamStatusName(StreamStatus status) {
  return status == StreamStatus::kNew ? "new" : "near_duplicate";
}

namespace {

namespace fs = std::filesystem;

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

NearDuplicateStream::NearDuplicateStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NearDuplicateStream::~NearDuplicateStream() = default;

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::Create(
    const StreamConfig& config) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(config));
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::OpenExisting(
    const std::string& dir, const StreamOpenOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamOpenOptions(options));
  std::vector<uint64_t> snapshots = StreamFileGenerations(dir, "snapshot");
  if (snapshots.empty()) return NotFoundError("no stream in " + dir);
  const std::string path = StreamFilePath(dir, "snapshot", snapshots.back());
  NEARDUP_ASSIGN_OR_RETURN(LogContents snapshot, ReadLogFile(path));
  if (snapshot.records.empty()) return DataLossError("snapshot " + path + " has no header");
  NEARDUP_ASSIGN_OR_RETURN(StreamHeader header, internal::DecodeHeader(snapshot.records[0]));
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl,
                           Impl::Make(header.config, options.schemes.get()));
  impl->dir_ = dir;
  impl->options_ = options;
  NEARDUP_RETURN_IF_ERROR(impl->Recover());
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<std::unique_ptr<NearDuplicateStream>> NearDuplicateStream::Open(
    const std::string& dir, const StreamConfig& config, const StreamOpenOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateStreamConfig(config));
  NEARDUP_RETURN_IF_ERROR(ValidateStreamOpenOptions(options));
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
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Make(config, options.schemes.get()));
  impl->dir_ = dir;
  impl->options_ = options;
  // The log first, then the snapshot that makes the directory a stream.
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<WriteAheadLog> log,
                           WriteAheadLog::Open(StreamFilePath(dir, "log", 0), 0, {options.sync}));
  impl->log_ = std::move(log);
  NEARDUP_RETURN_IF_ERROR(impl->WriteFirstSnapshotLocked());
  impl->spare_wanted_ = true;  // log-1, made ahead after the first write (OfferSpareLocked)
  return std::unique_ptr<NearDuplicateStream>(new NearDuplicateStream(std::move(impl)));
}

Result<StreamAnswer> NearDuplicateStream::Add(std::string_view id, std::string_view text,
                                              int64_t time) {
  try {
    NEARDUP_RETURN_IF_ERROR(CheckStreamId(id));
    Impl& s = *impl_;
    bool present = false;
    uint64_t id_hash = 0;
    {
      std::lock_guard<std::mutex> lock(s.mutex_);
      id_hash = s.state_.IdHash(id);
      present = s.state_.FindHashed(id, id_hash) != nullptr;
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
      added = s.AddLocked(StreamDocument{id, text, time}, id_hash, present ? nullptr : &fingerprint,
                          &answer);
      log = s.log_;
      lsn = log == nullptr ? 0 : log->size();
      finish = std::exchange(s.finish_due_, false);
    }
    s.FinishSnapshotIfDue(finish);
    NEARDUP_RETURN_IF_ERROR(added);
    NEARDUP_RETURN_IF_ERROR(s.SyncAll(log, lsn));
    return answer;
  } catch (const std::bad_alloc&) {
    // Before the record is written: nothing of the document is stored
    // (StreamState::Store, AddLocked). After it, AddLocked and the rotation
    // catch their own (WriteAppliedLocked, MaybeRotateAfterWriteLocked,
    // FinishSnapshot).
    return internal::OutOfMemoryStatus();
  }
}

Result<std::vector<StreamAnswer>> NearDuplicateStream::AddBatch(
    std::span<const StreamDocument> documents) {
  try {
    Impl& s = *impl_;
    std::vector<StreamAnswer> answers(documents.size());
    std::shared_ptr<WriteAheadLog> log;
    uint64_t lsn = 0;
    Status failed;
    std::vector<std::string_view> texts;
    std::vector<size_t> positions;    // of each group document's text in `texts`
    std::vector<uint64_t> id_hashes;  // state_.IdHash of each group document's id
    std::vector<Fingerprint> fingerprints;
    try {
      for (size_t first = 0; first < documents.size() && failed.ok(); first += kStreamBatchGroup) {
        const std::span<const StreamDocument> group =
            documents.subspan(first, std::min(kStreamBatchGroup, documents.size() - first));
        // Only the texts of ids absent now: a present id gets its stored answer
        // (one that leaves meanwhile is fingerprinted under the lock by
        // AddLocked, as Add would have done).
        texts.clear();
        positions.assign(group.size(), SIZE_MAX);
        id_hashes.assign(group.size(), 0);
        {
          std::lock_guard<std::mutex> lock(s.mutex_);
          for (size_t i = 0; i < group.size(); ++i) {
            if (!CheckStreamId(group[i].id).ok()) continue;
            id_hashes[i] = s.state_.IdHash(group[i].id);
            if (s.state_.FindHashed(group[i].id, id_hashes[i]) == nullptr) {
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
          failed = s.AddGroupLocked(group, id_hashes, positions, &fingerprints, &answers[first]);
          log = s.log_;
          lsn = log == nullptr ? 0 : log->size();
          finish = std::exchange(s.finish_due_, false);
        }
        s.FinishSnapshotIfDue(finish);
      }
    } catch (const std::bad_alloc&) {
      // Session 18: the groups before are stored (and the one that ran out
      // of memory stored up to its error, AddGroupLocked): synced below.
      failed = internal::OutOfMemoryStatus();
    }
    // What was stored before an error is made durable too, so that a retry of
    // the batch finds it with the same answers.
    NEARDUP_RETURN_IF_ERROR(s.SyncAll(log, lsn));
    NEARDUP_RETURN_IF_ERROR(failed);
    return answers;
  } catch (const std::bad_alloc&) {
    // Before the first group (the groups' own are caught above).
    return internal::OutOfMemoryStatus();
  }
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
  try {
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
      s.MaybeRotateAfterWriteLocked();
      finish = std::exchange(s.finish_due_, false);
    }
    s.FinishSnapshotIfDue(finish);
    return s.SyncAll(log, lsn);
  } catch (const std::bad_alloc&) {
    // Before the record: nothing changed (ApplyRemove allocates nothing, the
    // rotation after it catches its own: MaybeRotateAfterWriteLocked).
    return internal::OutOfMemoryStatus();
  }
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
      NEARDUP_RETURN_IF_ERROR(s.StepSnapshotLocked(SIZE_MAX, false));
      s.finish_due_ = false;
    }
    NEARDUP_RETURN_IF_ERROR(s.FinishSnapshot());
    if (!earlier) return Status::Ok();
  }
}

}  // namespace neardup
