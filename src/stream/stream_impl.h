// NearDuplicateStream's state behind its public API (neardup/stream.h):
// the window (StreamState), the fingerprinter, the write-ahead log and the
// rotation that bounds it (snapshots written in pieces, by a background
// thread when there is one: stream_rotation.cc). stream.cc holds the public
// methods, stream_impl.cc the decisions and the log, stream_rotation.cc the
// snapshots.
// Thread safety: mutex_ (the writer lock) guards the state, the log and
// the rotation fields; see each member.
#ifndef NEARDUP_STREAM_STREAM_IMPL_H_
#define NEARDUP_STREAM_STREAM_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "engine/containment_passages.h"
#include "neardup/fingerprinter.h"
#include "neardup/stream.h"
#include "neardup/write_ahead_log.h"
#include "stream/stream_files.h"
#include "stream/stream_state.h"

namespace neardup {

namespace internal {

inline StreamAnswer AnswerOf(const StreamDoc& doc) {
  return StreamAnswer{doc.id, doc.status, doc.of, doc.similarity, doc.time};
}

Status CheckStreamId(std::string_view id);

}  // namespace internal

class NearDuplicateStream::Impl {
 public:
  Impl(internal::StreamState state, std::unique_ptr<Fingerprinter> fingerprinter);
  // Stops the snapshot thread (a snapshot in progress is abandoned: its
  // temporary file removed, the older files still complete).
  ~Impl();

  // `schemes`: StreamOpenOptions::schemes, or null.
  static Result<std::unique_ptr<Impl>> Make(const StreamConfig& config,
                                            StreamSchemeMemo* schemes = nullptr);

  // `doc`'s entry with the texts `detail` asks for (passages are added by
  // AddPassages, outside the lock). REQUIRES: mutex_ held.
  StreamEntry EntryLocked(const internal::StreamDoc& doc, const StreamDetail& detail) const;
  Status AddPassages(const StreamDetail& detail, StreamEntry* entry) const;

  Status Recover();
  // After a failed batch write: state_ becomes again what the log holds
  // (snapshot + log replayed: the adds that were applied but not written whole
  // are undone, evictions they caused included). Costs a recovery, under the
  // writer lock, only when the disk fails. If the files cannot be read back
  // to exactly the log's length, every later write is refused.
  void ReloadLocked();

  // Appends `record` (REQUIRES: mutex_ held); returns the log and LSN to wait
  // on after unlocking (null for an in-memory stream).
  Result<std::pair<std::shared_ptr<WriteAheadLog>, uint64_t>> AppendLocked(std::string_view record);
  // Writes framed add records whose documents the state already holds
  // (AppendFramed's arguments; log_ not null). On error (the stream failed,
  // the write failed, or out of memory) the state is reloaded from the
  // files (ReloadLocked: the adds not written are undone) and the error
  // returned; *appended as AppendFramed's. REQUIRES: mutex_ held.
  Status WriteAppliedLocked(std::string_view framed, std::span<const size_t> ends,
                            size_t* appended);

  // The document to store for `document`, decided against the state now, or
  // nullopt when its id is present: *answer is then the stored answer (a
  // retry, or a concurrent request's add, durable once the caller's SyncAll
  // returns). `fingerprint` is the text's, or null when the caller skipped it
  // (the id was present when it looked): it is then computed here if the id
  // has left meanwhile. `id_hash` is state_.IdHash(document.id) (taken by
  // the caller when it looked the id up: one SipHash per new document).
  // `band_keys` (the caller passes band_keys_) receives the sketch's LSH
  // keys for the apply: the one member a const call writes, through the
  // pointer.
  // REQUIRES: mutex_ held; a valid id.
  Result<std::optional<internal::StreamDoc>> PrepareLocked(const StreamDocument& document,
                                                           uint64_t id_hash,
                                                           Fingerprint* fingerprint,
                                                           StreamAnswer* answer,
                                                           std::vector<uint64_t>* band_keys) const;
  // Decides and stores one document (Add): its record is framed (all that
  // allocates), the document applied (a refusal, e.g. out of memory, leaves
  // the state unchanged and writes nothing), then the record written; a
  // failed write reloads the state (WriteAppliedLocked). REQUIRES: mutex_
  // held; a valid id; id_hash as PrepareLocked.
  Status AddLocked(const StreamDocument& document, uint64_t id_hash, Fingerprint* fingerprint,
                   StreamAnswer* answer);
  // Decides and stores the documents of one group of AddBatch in order
  // (fingerprints[positions[i]] is group[i]'s, SIZE_MAX: skipped, see
  // PrepareLocked; id_hashes[i] is state_.IdHash(group[i].id), or anything
  // for an invalid id), answers[i] for group[i], then writes their records with
  // one log write (framed in place into group_records_, then
  // WriteAheadLog::AppendFramed: no copy). Each document is applied to
  // memory as it is decided (the next one's decision depends on it) and the
  // write comes last, so a failed write is undone by ReloadLocked: the
  // documents whose records are in the log whole stay, the rest leave
  // memory too. On an error at group[i] (its own, or its record not written)
  // the documents before it are stored, none from it on, and the error names
  // it. REQUIRES: mutex_ held.
  Status AddGroupLocked(std::span<const StreamDocument> group, std::span<const uint64_t> id_hashes,
                        std::span<const size_t> positions, std::vector<Fingerprint>* fingerprints,
                        StreamAnswer* answers);
  // ComputeBatch (parallel), or Compute on this thread for one text (a
  // single-document request pays no task scheduling).
  Status FingerprintAll(std::span<const std::string_view> texts,
                        std::vector<Fingerprint>* out) const;
  // Returns once `log` is durable up to `lsn`, and its name (a log started
  // by a roll-over has its directory synced here, by the first writer to
  // need it: SyncNewLogNames): the caller reads log_ and its size under
  // mutex_ after its last write (an older log was durable whole before a
  // newer one started). A failed sync stops every later write. Then, when a
  // roll-over waits (roll_wanted_), RollLogAfterSync; and the next log when
  // it is the writers' to make (spare_by_writers_: PrepareSpareLog).
  Status SyncAll(const std::shared_ptr<WriteAheadLog>& log, uint64_t lsn);
  // Makes the names of the logs started so far durable (one directory
  // fsync, shared by the writers that need it; none when all are). A
  // failed fsync is kept (names_failed_) and returned by every later call:
  // a later fsync, on a new descriptor, may return OK without the name
  // having reached the disk.
  // Lock order: mutex_ may be held (RollLogLocked's fallback);
  // directory_mutex_ is never held while taking mutex_.
  Status SyncNewLogNames();
  // The roll-over that RollLogLocked left waiting, off the writer lock
  // (session 16): syncs the names and all of `log` written so far, then,
  // under the lock, starts the next log if nothing was written to `log`
  // meanwhile (else a later writer tries again). A failed sync stops every
  // later write (failed_). REQUIRES: mutex_ not held.
  void RollLogAfterSync(const std::shared_ptr<WriteAheadLog>& log);
  // SyncDirectory(dir_), or sync_directory_for_tests_ when set.
  Status SyncThisDirectory();
  // A failed fsync of the directory (a rotation's, PrepareSpareLog's): sets
  // failed_ and names_failed_, so that no later write is acknowledged, as
  // after SyncNewLogNames' own failure. REQUIRES: mutex_ held.
  void DirectorySyncFailedLocked(const Status& failure);
  // Creates the next log, log-<g+1>, ahead of its roll-over (session 18):
  // the file's creation (~1 ms, more while the journal commits another
  // writer's sync) was the only I/O left under the writer lock at a
  // roll-over; the roll-over now opens an existing empty file. Called when
  // spare_wanted_ (set by each new log and at open), outside the lock: by
  // the snapshot thread (session 20: `by_thread`), or by a writer after its
  // sync once spare_by_writers_ (OfferSpareLocked); with options_.sync the
  // directory is synced too, so that the roll-over has no name left to make
  // durable. Recovery accepts a torn log followed by empty ones
  // (LoadStreamFiles: nothing is written after a crash's tear). A failure
  // leaves the roll-over to create the file. Counted in spares_made_.
  // REQUIRES: mutex_ not held.
  void PrepareSpareLog(bool by_thread);
  // Who makes the spare that spare_wanted_ asks for (session 20): the
  // snapshot thread (started here when background_snapshots and there is
  // none yet), or the writers after their sync (spare_by_writers_) when
  // there is no thread, it stays at SCHED_IDLE (thread_stays_idle_), or it
  // has not made the spare by the time the log is an eighth of the way to
  // snapshot_log_bytes (a core the requests saturate). Called after each
  // write operation.
  // REQUIRES: mutex_ held, log_ not null.
  void OfferSpareLocked();
  // The waiting roll-over, if the log is durable whole now and the names
  // are: called before each write's records are appended (the moment the
  // writers before it have synced) and by RollLogAfterSync. No I/O but the
  // new file's creation. Counts a roll-over taken in *counted (a member of
  // roll_counts_). REQUIRES: mutex_ held.
  void RollIfDurableLocked(uint64_t* counted);

  // --- Rotation (stream_rotation.cc) ---
  // Writes a new stream's snapshot-0: the header, no document yet (later
  // snapshots are written in pieces by a rotation). REQUIRES: mutex_ held
  // (or not yet shared).
  Status WriteFirstSnapshotLocked();
  // Step 1 of a rotation: the old log synced, a new log-<g+1> started, and
  // snapshot-<g+1>.tmp begun with the header of the state at that moment
  // (StreamState::BeginSnapshot fixes its documents). REQUIRES: mutex_
  // held, no snapshot in progress.
  Status StartRotationLocked();
  // When a new log's name is made durable (OpenNextLogLocked).
  enum class LogNameSync {
    kNow,            // here (a rotation); also every earlier name
    kByFirstSyncAll  // by the first SyncAll of a record in it (a roll-over)
  };
  // Opens log-<g+1> and makes it current; the current log, which recovery
  // still reads, goes into earlier_bytes_. Its name is made durable as
  // `name_sync` says (without options_.sync: not at all), counted in
  // names_created_ when later. Clears roll_wanted_.
  // REQUIRES: mutex_ held, the current log synced.
  Status OpenNextLogLocked(LogNameSync name_sync);
  // When no rotation is due but the log has reached snapshot_log_bytes: a
  // new log is started, with no snapshot (stream_rotation.cc). Without I/O
  // under the lock when the log is durable whole; else roll_wanted_ is set
  // and RollLogAfterSync does it, unless the log is already a quarter past
  // snapshot_log_bytes (then the log is synced here, as before session 16).
  // REQUIRES: mutex_ held, no snapshot in progress.
  Status RollLogLocked();
  // Step 2: the next piece of the snapshot in progress (all of it for
  // SIZE_MAX). Once the last is written, the snapshot is finishing: the
  // snapshot thread finishes it when `background` (and there is one), else
  // finish_due_ tells the caller to call FinishSnapshot after unlocking.
  // REQUIRES: mutex_ held, a snapshot being written (not finishing).
  Status StepSnapshotLocked(size_t min_bytes, bool background);
  // REQUIRES: mutex_ held, a snapshot being written (not finishing).
  void AbandonSnapshotLocked();
  // Step 3, outside the lock: fsync, rename, then the older files deleted.
  // REQUIRES: mutex_ not held; the caller took the finish (only it touches
  // snapshot_ until snapshot_finishing_ is cleared).
  Status FinishSnapshot();
  // After a write operation's critical section: FinishSnapshot when its step
  // wrote the snapshot's last piece (`due`: finish_due_, taken under the
  // lock).
  void FinishSnapshotIfDue(bool due);
  // After each write operation: a rotation once the log is due, and the
  // writer's share of a snapshot in progress (see stream_rotation.cc).
  // REQUIRES: mutex_ held.
  void MaybeRotateLocked();
  // MaybeRotateLocked after a write operation's records are written and
  // applied: out of memory there skips this operation's share (a rotation
  // left half done keeps the older files in use, StepSnapshotLocked), so
  // the operation still syncs and succeeds (session 18). Any other
  // exception propagates, as before.
  // REQUIRES: mutex_ held.
  void MaybeRotateAfterWriteLocked();
  // Whether the log is due for a rotation (stream_rotation.cc).
  // REQUIRES: mutex_ held, log_ not null.
  bool RotationDueLocked() const;

  internal::StreamState state_;
  std::unique_ptr<Fingerprinter> fingerprinter_;
  std::optional<internal::PassageMatcher> passage_matcher_;  // keep_texts streams
  mutable std::mutex mutex_;  // the writer lock; guards everything below and state_
  std::string dir_;           // "" in memory
  StreamOpenOptions options_;
  std::shared_ptr<WriteAheadLog> log_;
  uint64_t generation_ = 0;
  uint64_t snapshots_ = 0;
  // What recovery reads besides the current log: the newest complete
  // snapshot and the logs between it and the current one (the rotation
  // policy, MaybeRotateLocked).
  uint64_t earlier_bytes_ = 0;
  uint64_t snapshot_bytes_ = 0;  // of the newest complete snapshot (ditto)
  // The snapshot in progress (see StartRotationLocked), null when none; once
  // snapshot_finishing_, only the thread that took the finish touches it.
  std::unique_ptr<internal::SnapshotFile> snapshot_;
  bool snapshot_finishing_ = false;
  bool finish_due_ = false;                // taken by the writer whose step ended the snapshot
  std::condition_variable snapshot_done_;  // snapshot_finishing_ cleared
  uint64_t log_bytes_stepped_ = 0;         // log size at the last MaybeRotateLocked
  // The yardstick of the snapshot in progress's pacing (MaybeRotateLocked):
  // the background thread has until the new log grows by a quarter of it,
  // and then another quarter to finish. max(snapshot_log_bytes, the
  // state's records when the snapshot began), i.e. about the snapshot's
  // size, as the last snapshot's size was before session 14 (the log that
  // started it is now snapshot_log_bytes, rolled over without a snapshot
  // until one is due, which would say nothing of the snapshot's size).
  uint64_t rotation_due_bytes_ = 0;
  // A roll-over waits for the current log to be durable whole (set under
  // mutex_, read by SyncAll without it).
  std::atomic<bool> roll_wanted_{false};
  // How the roll-overs since open were taken (guarded by mutex_; for tests,
  // which check that each way runs): the log already durable at
  // RollLogLocked, waited for and taken before a write's append or after a
  // writer's sync (RollIfDurableLocked), or the fallback's sync under the
  // lock.
  struct RollCounts {
    uint64_t at_once = 0;
    uint64_t before_append = 0;
    uint64_t after_sync = 0;
    uint64_t forced = 0;
    uint64_t spare = 0;  // of all of them, those onto a log made ahead (PrepareSpareLog)
  };
  RollCounts roll_counts_;
  // Logs started without their directory synced (incremented under mutex_),
  // and how many of those names are durable (under directory_mutex_).
  std::atomic<uint64_t> names_created_{0};
  std::atomic<uint64_t> names_synced_{0};
  std::mutex directory_mutex_;                 // one directory fsync at a time (SyncNewLogNames)
  Status names_failed_;                        // guarded by directory_mutex_: set once
  std::atomic<bool> roll_helper_busy_{false};  // a writer is in RollLogAfterSync's sync
  // The next log made ahead (PrepareSpareLog): log-<spare_generation_>
  // exists, empty, and its name is durable when spare_name_durable_. Both
  // guarded by mutex_. spare_wanted_: the next one is to be made (taken,
  // exchanged to false, by whoever makes it: PrepareSpareLog).
  uint64_t spare_generation_ = 0;
  bool spare_name_durable_ = false;
  std::atomic<bool> spare_wanted_{false};
  // The writers make the spare after their sync (OfferSpareLocked); cleared
  // by each new log. Set under mutex_, read by SyncAll without it.
  std::atomic<bool> spare_by_writers_{false};
  // Spares made since open (PrepareSpareLog; guarded by mutex_), by the
  // snapshot thread and by writers: for tests and the note's figures.
  struct SpareCounts {
    uint64_t by_thread = 0;
    uint64_t by_writer = 0;
    uint64_t by_thread_at_idle = 0;  // of by_thread, made at SCHED_IDLE (none is)
  };
  SpareCounts spares_made_;
  // Tests only: false, no spare is made (tests of the roll-over's own file).
  std::atomic<bool> make_spare_logs_for_tests_{true};
  // Tests only: false, the snapshot thread leaves the spare to the writers
  // (as if it got no CPU).
  std::atomic<bool> spares_by_thread_for_tests_{true};
  // Tests only: true, the snapshot thread's return to normal priority fails
  // (as for a process that is neither root nor has RLIMIT_NICE >= 20).
  std::atomic<bool> priority_raise_fails_for_tests_{false};
  // The snapshot thread is at SCHED_IDLE for good (its raise back to normal
  // priority was refused after a snapshot's work): the writers make every
  // spare, and a new log does not wake it. Guarded by mutex_.
  bool thread_stays_idle_ = false;
  // Tests only: replaces the directory fsyncs of stream_rotation.cc
  // (SyncThisDirectory), to inject a failure or run a step in the middle of
  // one. Set before the stream is shared between threads.
  std::function<Status()> sync_directory_for_tests_;
  Status failed_;  // set once: writes refused after a log failure
  // Reused buffers (session 13), so that a group and a snapshot step
  // allocate none: AddGroupLocked's framed records (and, since session 14,
  // a single add's: AddLocked) and StepSnapshotLocked's records. Each keeps its capacity up
  // to its limit below: up to 6 MiB a stream that is not counted in memory_bytes (docs/SERVER.md,
  // "Memory per document").
  std::string group_records_;
  // The LSH keys of the document being added (PrepareLocked's Decide hashes
  // them, AddLocked/AddGroupLocked index with them): hashed once per document. One
  // band count of uint64s, reused. Guarded by mutex_.
  std::vector<uint64_t> band_keys_;
  std::string snapshot_piece_;
  static constexpr size_t kKeptGroupRecordBytes = size_t{4} << 20;
  static constexpr size_t kKeptSnapshotPieceBytes = size_t{2} << 20;
  StreamRecovery recovery_;

 private:
  // The snapshot thread (StreamOpenOptions::background_snapshots): started
  // at the first write (OfferSpareLocked) or rotation, it makes the next log
  // ahead of its roll-over at normal priority, and writes the pieces of a
  // snapshot in progress and finishes it at the lowest CPU priority
  // (SCHED_IDLE). It takes mutex_ at SCHED_IDLE only for a snapshot's work
  // (thread_stays_idle_).
  void StartSnapshotThreadLocked();
  void SnapshotThreadLoop();
  // Whether the snapshot thread should make the spare now. REQUIRES: mutex_ held.
  bool SpareForThreadLocked() const {
    return spare_wanted_.load() && !spare_by_writers_.load() && make_spare_logs_for_tests_.load() &&
           spares_by_thread_for_tests_.load();
  }

  // A snapshot to step or to finish, a spare to make, or stopping_.
  std::condition_variable snapshot_work_;
  bool background_finish_ = false;  // the snapshot thread finishes the snapshot
  uint64_t finish_offered_at_ = 0;  // log size when background_finish_ was set
  bool stopping_ = false;
  std::thread snapshot_thread_;  // last: joined before the members it uses go
};

namespace internal {

// Tests' access to a stream's Impl (its steps and counters).
class StreamTestAccess {
 public:
  static NearDuplicateStream::Impl& ImplOf(NearDuplicateStream& stream) { return *stream.impl_; }
};

}  // namespace internal

}  // namespace neardup

#endif  // NEARDUP_STREAM_STREAM_IMPL_H_
