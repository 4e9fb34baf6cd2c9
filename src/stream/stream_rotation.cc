// The rotation of a durable stream's files: a snapshot of the whole state
// begun when the log is due, written in pieces while requests go on, then
// made durable and renamed, and the older files deleted.
//
// Who writes the pieces (session 10): a snapshot of a window of N documents
// costs O(N) of CPU (encode + write(); ~100 ms for 20k news articles) on
// top of the adds. Written by the request threads (a piece after each
// operation, session 9) it no longer stalled the writer lock whole, but it
// came in a burst of ~256 requests at the moment the log was due, all on
// the one core the server runs on: at half the core's saturating rate the
// adds queued behind it for 100-300 ms (p99 60-170 ms end to end, and none
// with snapshots off). Now a snapshot thread per stream, at SCHED_IDLE
// priority, writes the pieces (and finishes the snapshot, and deletes the
// older files) in the CPU time the requests leave; requests pay nothing for
// it. On a core the requests saturate that thread gets no time, so once the
// new log has grown past a quarter of the log that started the snapshot the
// writers take their share again (a piece of four times what each
// operation added to the log), and finish it themselves if the thread does
// not come while the log grows by another quarter of that log: recovery
// stays bounded under any load.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "stream/stream_impl.h"
#include "stream/stream_record.h"
#include "util/status_fallback.h"

namespace neardup {

namespace {

// What the snapshot thread writes per hold of the writer lock: ~30-60 us of
// encoding and write(), the longest a request waits for it.
constexpr size_t kBackgroundPieceBytes = size_t{64} << 10;

// The calling thread runs only when nothing else of normal priority wants
// its core (Linux SCHED_IDLE); elsewhere it keeps its priority.
void LowerThisThreadsPriority() {
#ifdef SCHED_IDLE
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
#endif
}

// Back to normal priority (SCHED_OTHER), where the process may (root, or an
// RLIMIT_NICE that allows its nice value); returns whether it did.
bool RaiseThisThreadsPriority() {
#ifdef SCHED_IDLE
  sched_param param{};
  return pthread_setschedparam(pthread_self(), SCHED_OTHER, &param) == 0;
#else
  return true;  // never lowered
#endif
}

bool ThisThreadIsAtIdlePriority() {
#ifdef SCHED_IDLE
  int policy = 0;
  sched_param param{};
  return pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_IDLE;
#else
  return false;
#endif
}

}  // namespace

NearDuplicateStream::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  snapshot_work_.notify_all();
  if (snapshot_thread_.joinable()) snapshot_thread_.join();
}

Status NearDuplicateStream::Impl::WriteFirstSnapshotLocked() {
  NEARDUP_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::SnapshotFile> file,
      internal::SnapshotFile::Create(dir_, 0, internal::EncodeHeader(state_.Header())));
  NEARDUP_RETURN_IF_ERROR(file->Finish(options_.sync));
  earlier_bytes_ = file->bytes();
  snapshot_bytes_ = file->bytes();
  return Status::Ok();
}

// Until the rename, recovery reads snapshot-<g> and replays log-<g> and
// log-<g+1> (each record follows the previous one): a crash or a failure at
// any step loses nothing, it only leaves the older files in use until the
// next rotation (a failed fsync of the directory also stops every later
// write: DirectorySyncFailedLocked).
Status NearDuplicateStream::Impl::StartRotationLocked() {
  if (!failed_.ok()) return failed_;
  // A record of the new log must never be on disk while one before it is
  // not (recovery would find a gap).
  NEARDUP_RETURN_IF_ERROR(log_->SyncTo(log_->size()));
  const uint64_t next = generation_ + 1;
  NEARDUP_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::SnapshotFile> snapshot,
      internal::SnapshotFile::Create(dir_, next, internal::EncodeHeader(state_.Header())));
  NEARDUP_RETURN_IF_ERROR(OpenNextLogLocked(LogNameSync::kNow));
  snapshot_ = std::move(snapshot);
  state_.BeginSnapshot();
  return Status::Ok();
}

Status NearDuplicateStream::Impl::OpenNextLogLocked(LogNameSync name_sync) {
  const uint64_t next = generation_ + 1;
  const std::string log_path = internal::StreamFilePath(dir_, "log", next);
  // Made ahead (PrepareSpareLog): opening the existing empty file creates
  // nothing, so no journal transaction under the lock. Only if it is still
  // there (a dentry lookup, no journal transaction): a rotation that failed
  // may have taken it and removed it before PrepareSpareLog recorded it, and
  // O_CREAT would then make a file whose name nobody syncs.
  const bool spare = spare_generation_ == next && ::access(log_path.c_str(), F_OK) == 0;
  const bool name_durable = spare && spare_name_durable_;
  Result<std::unique_ptr<WriteAheadLog>> log = WriteAheadLog::Open(log_path, 0, {options_.sync});
  // The new log's name must be durable before a record in it is: synced
  // now, or by the first SyncAll of a record in it (an unacknowledged
  // record lost with its file's name loses nothing acknowledged); a
  // spare's is already when spare_name_durable_.
  const bool sync_now = name_sync == LogNameSync::kNow && options_.sync && !name_durable;
  // Every name counted so far was created before this fsync (they are
  // counted under mutex_, which this caller holds).
  const uint64_t created = names_created_.load();
  Status synced = !log.ok() ? log.status() : sync_now ? SyncThisDirectory() : Status::Ok();
  if (!synced.ok()) {
    if (log.ok()) {
      std::remove(log_path.c_str());
      // The fsync failed (not the open): as PrepareSpareLog's and
      // SyncNewLogNames' failures, it stops every later write.
      DirectorySyncFailedLocked(synced);
    }
    return synced;
  }
  if (sync_now) {
    // The earlier names are durable too: the next writers need no
    // directory fsync of their own (unless one failed: that stays).
    std::lock_guard<std::mutex> lock(directory_mutex_);
    if (names_failed_.ok() && names_synced_.load() < created) names_synced_ = created;
  } else if (options_.sync && !name_durable) {
    ++names_created_;
  }
  earlier_bytes_ += log_->size();  // recovery reads it until a newer snapshot is complete
  log_ = std::shared_ptr<WriteAheadLog>(std::move(log).value());
  log_bytes_stepped_ = 0;
  generation_ = next;
  roll_wanted_ = false;
  if (spare) ++roll_counts_.spare;
  // The next one: by the snapshot thread when there is one, else by the
  // writer whose sync took this roll-over (SyncAll) or the next one.
  spare_wanted_ = true;
  spare_by_writers_ = !snapshot_thread_.joinable() || thread_stays_idle_;
  if (!spare_by_writers_.load()) snapshot_work_.notify_one();
  return Status::Ok();
}

// Session 20: the spare's creation and directory fsync (~1 ms and more on
// the loaded VM, while the journal commits other writers' syncs) delayed
// the answer of the one writer that made it; the snapshot thread makes it
// now. If that thread has not (a saturated core, or a thread that stays at
// SCHED_IDLE), the writers take it back once the log is an eighth of the way to its
// roll-over (before, they made it at its start), so a roll-over still finds
// its spare; at worst it creates the file itself under the lock (as before
// session 18). The thread makes it at normal priority, where the process
// may come back to it from SCHED_IDLE (root, or RLIMIT_NICE >= 20);
// elsewhere the writers make every spare once the thread has done a
// snapshot's work (SnapshotThreadLoop).
void NearDuplicateStream::Impl::OfferSpareLocked() {
  if (!spare_wanted_.load() || spare_by_writers_.load()) return;
  if (options_.background_snapshots && !snapshot_thread_.joinable()) {
    StartSnapshotThreadLocked();  // it looks for work before it first waits
  }
  if (!snapshot_thread_.joinable() || thread_stays_idle_ ||
      log_->size() >= options_.snapshot_log_bytes / 8) {
    spare_by_writers_ = true;
  }
}

void NearDuplicateStream::Impl::PrepareSpareLog(bool by_thread) {
  // spare_wanted_: one writer at a time.
  if (!make_spare_logs_for_tests_.load() || !spare_wanted_.exchange(false)) return;
  uint64_t next = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (log_ == nullptr || !failed_.ok() || spare_generation_ == generation_ + 1) return;
    next = generation_ + 1;
  }
  // O_EXCL: never a file that exists (the roll-over may have created and
  // written it meanwhile). Empty, so nothing of it needs a data sync.
  const std::string path = internal::StreamFilePath(dir_, "log", next);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ::close(fd);
  const Status synced = options_.sync ? SyncThisDirectory() : Status::Ok();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!synced.ok()) {
    DirectorySyncFailedLocked(synced);
    return;
  }
  if (!failed_.ok()) return;            // e.g. a rotation's fsync failed meanwhile
  if (generation_ + 1 != next) return;  // the roll-over came first: its file is this one
  spare_generation_ = next;
  spare_name_durable_ = options_.sync;
  ++(by_thread ? spares_made_.by_thread : spares_made_.by_writer);
  if (by_thread && ThisThreadIsAtIdlePriority()) ++spares_made_.by_thread_at_idle;
}

Status NearDuplicateStream::Impl::SyncThisDirectory() {
  return sync_directory_for_tests_ ? sync_directory_for_tests_() : SyncDirectory(dir_);
}

void NearDuplicateStream::Impl::DirectorySyncFailedLocked(const Status& failure) {
  // A later fsync of the directory, on a new descriptor, may return OK
  // without the names having reached the disk: no later write may be
  // acknowledged, nor a record already appended to a log whose name is not
  // durable yet (its writer's SyncAll -> SyncNewLogNames).
  if (failed_.ok()) failed_ = failure;
  std::lock_guard<std::mutex> lock(directory_mutex_);
  if (names_failed_.ok()) names_failed_ = failure;
}

Status NearDuplicateStream::Impl::SyncNewLogNames() {
  if (names_synced_.load() >= names_created_.load()) return Status::Ok();
  std::lock_guard<std::mutex> lock(directory_mutex_);
  // names_synced_ stays behind after a failure, so every later call comes here.
  if (!names_failed_.ok()) return names_failed_;
  const uint64_t created = names_created_.load();
  if (names_synced_.load() >= created) return Status::Ok();  // another writer synced them
  Status synced = SyncThisDirectory();
  if (!synced.ok()) {
    names_failed_ = synced;
    return synced;
  }
  names_synced_ = created;
  return Status::Ok();
}

// A new log without a snapshot: recovery replays every log from the newest
// snapshot's generation on, and only the newest that holds records (the
// last, or the one before the empty logs made ahead: PrepareSpareLog) may
// end in a bad record that is cut. A bad record in any other log is
// DataLoss (the stream does not open and nothing is cut), so a window that
// only grows, never rewritten,
// keeps at most about 5/4 snapshot_log_bytes of its acknowledged records where
// a torn tail could cut them, and recovery reads one log file at a time.
//
// Session 16: the roll-over does no I/O under the writer lock but the new
// file's creation. It was a fdatasync of the old log and an fsync of the
// directory there (~2 + ~2 ms on the loaded VM, up to tens of ms), which
// every request waited for (BM_StreamRollOver: ~3-5 ms of lock per
// roll-over before, ~1 after). The order recovery needs is kept: the next
// log starts only once the old one is durable whole (no record of the new
// log can then be on disk while one before it is not), and a record in the
// new log is acknowledged only once its name is durable (SyncAll ->
// SyncNewLogNames). The old log becomes durable by the writers' own syncs:
// the roll-over is taken before the next write's records are appended
// (RollIfDurableLocked) or by a writer just after its sync
// (RollLogAfterSync), with the sync under the lock as the fallback once the
// log is a quarter past its length (how much a torn tail may cut stays
// bounded).
Status NearDuplicateStream::Impl::RollLogLocked() {
  if (!failed_.ok()) return failed_;
  const uint64_t size = log_->size();
  const bool names_durable = names_synced_.load() >= names_created_.load();
  uint64_t* counted = &roll_counts_.at_once;
  if (options_.sync && !(names_durable && log_->synced_size() >= size)) {
    if (size < options_.snapshot_log_bytes + options_.snapshot_log_bytes / 4) {
      roll_wanted_ = true;
      return Status::Ok();
    }
    // As at a rotation: no record of the new log on disk before the old
    // log's last one. A failed sync stops every later write.
    Status synced = log_->SyncTo(size);
    if (synced.ok() && !names_durable) synced = SyncNewLogNames();
    if (!synced.ok()) {
      failed_ = synced;
      return synced;
    }
    counted = &roll_counts_.forced;
  }
  NEARDUP_RETURN_IF_ERROR(OpenNextLogLocked(LogNameSync::kByFirstSyncAll));
  ++*counted;
  return Status::Ok();
}

void NearDuplicateStream::Impl::RollIfDurableLocked(uint64_t* counted) {
  if (!roll_wanted_ || snapshot_ != nullptr || !failed_.ok()) return;
  if (log_->synced_size() < log_->size() || names_synced_.load() < names_created_.load()) return;
  // A failure keeps this log; a later writer retries.
  if (OpenNextLogLocked(LogNameSync::kByFirstSyncAll).ok()) ++*counted;
}

void NearDuplicateStream::Impl::RollLogAfterSync(const std::shared_ptr<WriteAheadLog>& log) {
  // One writer at a time pays the extra sync; the others go on.
  if (roll_helper_busy_.exchange(true)) return;
  Status synced = SyncNewLogNames();
  if (synced.ok()) synced = log->SyncTo(log->size());
  roll_helper_busy_ = false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!synced.ok()) {
    // As SyncAll: what is on disk is unknown, so no later write may be
    // acknowledged.
    if (failed_.ok()) failed_ = synced;
    return;
  }
  if (log_ == log) RollIfDurableLocked(&roll_counts_.after_sync);
}

Status NearDuplicateStream::Impl::StepSnapshotLocked(size_t min_bytes, bool background) {
  // Encoded and written in pieces of at most 1 MiB: a caller asking for
  // everything (Snapshot(), a large step after a big batch) must not build
  // the whole window's state as one string under the writer lock.
  constexpr size_t kMaxPieceBytes = size_t{1} << 20;
  // Reserved for the piece and a record past it: grown a record at a time,
  // the piece's string reallocated and copied itself ~5% of a batch's CPU
  // (session 13). Reused between steps, up to kKeptSnapshotPieceBytes.
  std::string& records = snapshot_piece_;
  size_t stepped = 0;
  bool last = false;
  try {
    records.reserve(std::min(min_bytes, kMaxPieceBytes) + (size_t{64} << 10));
    do {  // once at least: a step of 0 bytes still notices a finished snapshot
      records.clear();
      last = state_.AppendSnapshotRecords(std::min(min_bytes - stepped, kMaxPieceBytes), &records);
      Status written = snapshot_->Append(records);
      if (!written.ok()) {
        AbandonSnapshotLocked();
        return written;
      }
      stepped += records.size();
    } while (!last && stepped < min_bytes);
  } catch (const std::bad_alloc&) {
    // Session 18: the cursor may have passed records that were not written
    // (AppendSnapshotRecords, then a throw before Append): finishing this
    // snapshot would lose them, and then the logs that hold them. As on a
    // failed write: the older files stay in use, the next rotation retries.
    AbandonSnapshotLocked();
    return internal::OutOfMemoryStatus();
  }
  if (records.capacity() > kKeptSnapshotPieceBytes) std::string().swap(records);
  if (last) {
    state_.EndSnapshot();
    snapshot_finishing_ = true;
    if (background && snapshot_thread_.joinable()) {
      background_finish_ = true;
      finish_offered_at_ = log_->size();
      snapshot_work_.notify_one();
    } else {
      finish_due_ = true;
    }
  }
  return Status::Ok();
}

void NearDuplicateStream::Impl::AbandonSnapshotLocked() {
  state_.EndSnapshot();
  snapshot_.reset();  // removes the temporary file
}

Status NearDuplicateStream::Impl::FinishSnapshot() {
  Status finished;
  try {
    finished = snapshot_->Finish(options_.sync);
  } catch (const std::bad_alloc&) {
    // Session 18: failed, as any failed Finish (the locked block below must
    // run, else no rotation would ever start again). The older files stay.
    finished = internal::OutOfMemoryStatus();
  }
  const uint64_t next = snapshot_->generation();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished.ok()) {
      earlier_bytes_ = snapshot_->bytes();
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
    try {
      for (const char* prefix : {"log", "snapshot"}) {
        for (uint64_t old : internal::StreamFileGenerations(dir_, prefix)) {
          if (old < next) std::remove(internal::StreamFilePath(dir_, prefix, old).c_str());
        }
      }
    } catch (const std::bad_alloc&) {
      // Out of memory: the files left are older than the newest snapshot
      // (recovery ignores them), and the next snapshot's finish deletes them.
    }
  }
  return finished;
}

// A failed snapshot leaves the older files in use: nothing is lost, and the
// next rotation tries again.
void NearDuplicateStream::Impl::FinishSnapshotIfDue(bool due) {
  if (due) FinishSnapshot().IgnoreError();
}

// When a rotation is due (session 14). With snapshot_grows_with_state: once
// the logs since the newest snapshot are past snapshot_log_bytes and at
// least half of what recovery would read (the snapshot and the logs since
// it) is dead, i.e. records of documents no longer stored (evicted,
// removed) and remove records. A new snapshot holds the stored documents'
// records (RecordBytes) and a header, so before that point it would
// shorten recovery by less than half. What recovery reads stays under
// max(twice the state's records, the snapshot plus snapshot_log_bytes)
// plus an operation's group, and more while a snapshot is in progress (the
// new log grows meanwhile; include/neardup/stream.h). A window that turns
// over rotates about as often as before (its dead bytes equal its state
// once the log is as long as its snapshot). A window that only grows has
// nothing dead (its snapshot and logs hold exactly its records): the rule
// before rewrote it at every doubling of the log, about one record per
// add, whose write() into the page cache was up to ~30% of a batch POST's
// server CPU; now it is not rewritten at all, and recovery reads the same
// records from its logs (rolled over every snapshot_log_bytes:
// RollLogLocked).
bool NearDuplicateStream::Impl::RotationDueLocked() const {
  const uint64_t log_bytes = log_->size();
  if (!options_.snapshot_grows_with_state) return log_bytes >= options_.snapshot_log_bytes;
  // At least snapshot_log_bytes of log since the newest complete snapshot,
  // in the current log and those rolled over since (RollLogLocked).
  const uint64_t read = earlier_bytes_ + log_bytes;
  if (read < snapshot_bytes_ + options_.snapshot_log_bytes) return false;
  return read >= 2 * state_.RecordBytes();
}

// A rotation once RotationDueLocked; then the writers' share of the
// snapshot in progress: all of it without a snapshot thread (a piece
// of at least snapshot_step_bytes and four times what the operation added
// to the log, so that it ends while the new log is still a fraction of it),
// none while the snapshot thread keeps up. A failure leaves the older files
// in use: the record just appended stays valid either way (a failed
// directory fsync stops the later writes).
void NearDuplicateStream::Impl::MaybeRotateLocked() {
  if (log_ == nullptr) return;
  OfferSpareLocked();
  if (snapshot_finishing_) {
    // The snapshot thread has not come to finish it while the log grew by a
    // quarter of the due log again: this writer finishes it after
    // unlocking (until then no rotation starts and the log keeps growing).
    if (background_finish_ && log_->size() - finish_offered_at_ >= rotation_due_bytes_ / 4) {
      background_finish_ = false;
      finish_due_ = true;
    }
    return;
  }
  const uint64_t grown = log_->size() - log_bytes_stepped_;
  log_bytes_stepped_ = log_->size();
  const bool background = options_.background_snapshots;
  if (snapshot_ == nullptr) {
    if (!RotationDueLocked()) {
      // A log of snapshot_log_bytes and no snapshot due: the next records go
      // to a new log (a failure keeps this one; the next operation retries).
      if (log_->size() >= options_.snapshot_log_bytes) RollLogLocked().IgnoreError();
      return;
    }
    if (!StartRotationLocked().ok()) return;
    rotation_due_bytes_ = std::max<uint64_t>(options_.snapshot_log_bytes, state_.RecordBytes());
    if (background) StartSnapshotThreadLocked();
    if (snapshot_thread_.joinable()) {
      snapshot_work_.notify_one();
      return;
    }
  }
  if (snapshot_thread_.joinable() && log_->size() < rotation_due_bytes_ / 4) return;
  const uint64_t step = std::max<uint64_t>(options_.snapshot_step_bytes, 4 * grown);
  StepSnapshotLocked(static_cast<size_t>(std::min<uint64_t>(step, SIZE_MAX)), true).IgnoreError();
}

void NearDuplicateStream::Impl::StartSnapshotThreadLocked() {
  if (snapshot_thread_.joinable()) return;
  try {
    snapshot_thread_ = std::thread([this] { SnapshotThreadLoop(); });
  } catch (const std::system_error&) {
    // No thread (a resource limit): the writers write the pieces, as
    // without background_snapshots.
  }
}

void NearDuplicateStream::Impl::SnapshotThreadLoop() {
  // Started at its creator's priority (a writer's: normal). It takes mutex_
  // at SCHED_IDLE only for a snapshot's work (as since session 9): a thread
  // preempted at SCHED_IDLE while it holds mutex_ stalls every writer of the
  // stream for as long as the requests keep the core busy, so it waits for
  // work, and makes the spares, at normal priority (a file's creation and a
  // directory fsync: mostly waiting, little CPU). Where it may not come back
  // from SCHED_IDLE (neither root nor RLIMIT_NICE >= 20) it stays there, and
  // from then on the writers make every spare and no new log wakes it
  // (thread_stays_idle_).
  bool idle = false;
  const auto lower = [&idle] {
    if (!idle) LowerThisThreadsPriority();
    idle = true;
  };
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const bool snapshot_work = background_finish_ || (snapshot_ != nullptr && !snapshot_finishing_);
    if (idle && !thread_stays_idle_ && (!snapshot_work || SpareForThreadLocked())) {
      idle = priority_raise_fails_for_tests_.load() || !RaiseThisThreadsPriority();
      if (idle) {
        thread_stays_idle_ = true;
        spare_by_writers_ = true;  // a spare wanted now is theirs too
      }
    }
    snapshot_work_.wait(lock, [this] {
      return stopping_ || background_finish_ || SpareForThreadLocked() ||
             (snapshot_ != nullptr && !snapshot_finishing_);
    });
    if (background_finish_) {
      background_finish_ = false;
      lock.unlock();
      lower();
      FinishSnapshot().IgnoreError();
      lock.lock();
      continue;
    }
    if (stopping_) return;
    if (SpareForThreadLocked()) {
      if (idle) {  // the raise at the top of the loop was refused
        spare_by_writers_ = true;
        continue;
      }
      lock.unlock();
      bool out_of_memory = false;
      try {
        PrepareSpareLog(/*by_thread=*/true);
      } catch (const std::bad_alloc&) {
        out_of_memory = true;  // as a writer's (SyncAll): a file it made is not a spare
      }
      lock.lock();
      if (out_of_memory) {
        // The writers retry it (this thread would only fail again now).
        spare_wanted_ = true;
        spare_by_writers_ = true;
      }
      continue;
    }
    if (snapshot_ == nullptr || snapshot_finishing_) continue;  // woken for a spare taken meanwhile
    lower();  // with mutex_ held: it was taken at normal priority
    StepSnapshotLocked(kBackgroundPieceBytes, true).IgnoreError();
    // Requests that queued on the lock meanwhile go first.
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
}

}  // namespace neardup
