// NearDuplicateStream: answers, for each document of a stream, whether it is a
// near-duplicate of a document seen earlier, within a time window, durably.
//
// Rule (the leader rule of `neardup clusters --rule leader`,
// neardup/clustering.h): a document is a near-duplicate of the EARLIEST kept
// document still in the window that it is verified similar to; otherwise it
// is kept. Only kept documents (leaders) are indexed, so no chains form.
// Verification is the one of FindNearDuplicatePairs (neardup/near_duplicates.h)
// with its defaults: MinHash candidates from LSH banding of k-value sketches
// (bands x rows from the threshold), accepted when the bottom-k estimate is at
// least 3 standard errors below the threshold and the exact Jaccard of the
// shingle sets reaches it; SimHash candidates from a Hamming index, accepted
// within max_distance bits. Documents with no features are kept and never
// matched.
// Invariant: with no window and no cap, adding documents 0..n-1 in order gives
// status near_duplicate with `of` = document c exactly where
// ClusterDocuments(n, FindNearDuplicatePairs(...), kLeader)[i] == c != i.
//
// Window: on each Add, documents whose time is older than (newest time seen -
// window_seconds) leave the stream (index and answers); then, past
// max_documents, the oldest (by time, then arrival) leave. An evicted id is
// forgotten: posting it again is a new document.
// Idempotence: adding an id that is present returns its stored answer and
// changes nothing.
//
// Durability (Open): every Add and Remove is a record of a write-ahead log
// (neardup/write_ahead_log.h) holding the id, time, decision and, for a kept
// document, the sketches that rebuild the index (and the text only when the
// config keeps texts); the record is on disk before Add returns. Concurrent Adds share fsyncs
// (group commit). A snapshot of the whole state is begun when the current log passes
// snapshot_log_bytes and half of what recovery would read is dead (see
// StreamOpenOptions; a new log starts then; when none is due, the log is
// rolled over into a new file instead) and written a piece at a time
// by a low-priority thread of the stream (StreamOpenOptions::
// background_snapshots), so no request waits for a whole snapshot nor pays
// for one; once it is complete, older logs and
// snapshots are deleted, which bounds recovery time. Open loads the newest snapshot and replays the
// logs after it; a torn or corrupt tail of the last log is truncated and reported in recovery(); a
// bad record anywhere else is DataLoss.
//
// Cost per Add: one fingerprint (O(text), outside any lock), one index query
// and verification of its candidates, one log append and a share of an
// fsync. Memory per kept document: its sketches (MinHash: k-value and bottom-k
// sketches, 8 bytes per hash each, plus 4 bytes per distinct shingle; SimHash:
// 8 bytes) and its index entries; per near-duplicate its answer and its entry
// in the list of near-duplicates (List, ~64 bytes); with
// keep_texts, every document's text as well. Stats() reports the measured
// total.
// Thread safety: every method may be called concurrently. Add and Remove take
// one writer lock for the decision and the log append (so decisions follow a
// single order, the log's); fingerprinting happens before it and the fsync
// wait after it. Check, Get, Entry, List and Stats take the same lock briefly
// (Entry and List compute passages after releasing it).
#ifndef NEARDUP_STREAM_H_
#define NEARDUP_STREAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/near_duplicates.h"
#include "neardup/passages.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup {

struct StreamConfig {
  // minhash: Jaccard of word shingles >= threshold; simhash: Hamming distance
  // of 64-bit SimHashes <= max_distance (only the method's own field is used).
  NearDuplicateMethod method = NearDuplicateMethod::kMinHash;
  double threshold = 0.8;
  int max_distance = 3;
  std::string preset = "default";  // a PresetRecipe name
  // Documents older than the newest time minus this leave; 0: no window.
  int64_t window_seconds = 0;
  // The most documents held; the oldest leave first; 0: no cap.
  uint64_t max_documents = 0;
  // Default false. true: each document's text is held (and logged) while the
  // document is in the window, so Text() can show it (e.g. the kept
  // document beside its near-duplicate). Memory and log grow by the texts'
  // size; they leave with their documents (window, cap, Remove).
  bool keep_texts = false;
  friend bool operator==(const StreamConfig&, const StreamConfig&) = default;
};

// OK, or InvalidArgument naming the field, its bound and its value.
Status ValidateStreamConfig(const StreamConfig& config);

enum class StreamStatus { kNew, kNearDuplicate };
std::string_view StreamStatusName(StreamStatus status);  // "new" | "near_duplicate"

struct StreamAnswer {
  std::string id;
  StreamStatus status = StreamStatus::kNew;
  std::string of;         // the kept document's id; empty when kNew
  double similarity = 0;  // what was verified (Jaccard, or 1 - distance / 64); 0 when kNew
  int64_t time = 0;       // the document's time (seconds since the epoch)
  friend bool operator==(const StreamAnswer&, const StreamAnswer&) = default;
};

struct StreamStats {
  uint64_t documents = 0;              // in the window now
  uint64_t kept = 0;                   // of which kept (indexed)
  uint64_t added = 0;                  // accepted since the stream was created
  uint64_t evicted = 0;                // left by the window or the cap
  uint64_t removed = 0;                // by Remove
  std::optional<int64_t> oldest_time;  // of the documents in the window
  std::optional<int64_t> newest_time;  // the newest time ever added
  uint64_t memory_bytes = 0;           // answers, sketches and index, measured
  uint64_t log_bytes = 0;              // current log file; 0 in memory
  // Writes to the current log file (as log_syncs): one per Add and Remove,
  // one per group of an AddBatch (at most kStreamBatchGroup documents).
  uint64_t log_appends = 0;
  uint64_t log_syncs = 0;
  uint64_t log_sync_nanoseconds = 0;
  uint64_t snapshots = 0;  // written since open
};

// What Open found on disk.
struct StreamRecovery {
  uint64_t snapshot_documents = 0;  // loaded from the snapshot
  uint64_t replayed_records = 0;    // from the logs after it
  uint64_t truncated_bytes = 0;     // cut from the last log's bad tail
  std::string truncation;           // why ("" when nothing was cut)
};

class StreamSchemeMemo;
namespace internal {
class StreamSchemes;
class StreamTestAccess;  // tests' access to a stream's Impl (src/stream/stream_impl.h)
// The memo's schemes, for the stream's opens (src/stream/stream_state.h).
StreamSchemes& SchemesOf(StreamSchemeMemo& memo);
}  // namespace internal

// Remembers the index scheme chosen for each stream config (for MinHash the
// LSH bands and rows: ~2 ms of CPU to choose), for a caller that opens many
// streams: the server shares one across its opens (at start, and at each
// create), so an open of a config already seen chooses nothing. Holds up to
// 64 configs (then starts again). Thread-safe.
class StreamSchemeMemo {
 public:
  StreamSchemeMemo();
  ~StreamSchemeMemo();
  StreamSchemeMemo(const StreamSchemeMemo&) = delete;
  StreamSchemeMemo& operator=(const StreamSchemeMemo&) = delete;

  // The configs remembered.
  size_t size() const;

 private:
  friend internal::StreamSchemes& internal::SchemesOf(StreamSchemeMemo& memo);
  std::unique_ptr<internal::StreamSchemes> schemes_;
};

struct StreamOpenOptions {
  // Default none: the open chooses the stream's index scheme. Set (shared
  // with other opens): taken from there when its config was seen.
  std::shared_ptr<StreamSchemeMemo> schemes;
  // fdatasync before Add returns (default true; false only for tests and
  // benchmarks: nothing is then durable).
  bool sync = true;
  // A snapshot is written once the logs since the last one are this long
  // (default 64 MiB; with snapshot_grows_with_state false, recovery replays
  // at most this much log) ...
  uint64_t snapshot_log_bytes = uint64_t{64} << 20;
  // ... and (true, the default) once at least half of what recovery would
  // read (the last snapshot and the logs since) is dead: records of
  // documents that left the window or were removed, and remove records
  // (session 14; it was: as long as the last snapshot). A snapshot costs
  // O(documents in the window): waiting for as many dead bytes as live ones
  // makes that O(1) per add however large the window, and a window that
  // only grows, whose snapshot and logs hold nothing dead, is not rewritten
  // at all. The logs since the last snapshot count toward this length.
  // When the log passes snapshot_log_bytes and no snapshot is due, a new
  // log file starts (no snapshot; once the old log is durable whole, off
  // the writer lock, or by a quarter past it at the latest, session 16):
  // only the last log's bad tail is cut at recovery, a bad record in an
  // older one is DataLoss. Recovery reads at
  // most max(2 R, S + snapshot_log_bytes) + one operation's group (R: the
  // window's records; S: the last complete snapshot), plus the logs kept
  // after a failed snapshot until the next one completes, and while a
  // snapshot is in progress the log growing meanwhile: up to about
  // 3/4 max(snapshot_log_bytes, R) more (docs/SERVER.md, "Durability").
  // false: every snapshot_log_bytes (tests that want many snapshots).
  bool snapshot_grows_with_state = true;
  // The writers' share of a snapshot in progress: after each write
  // operation, a piece of at least this many bytes and four times what the
  // operation added to the log (so the snapshot ends while the new log is
  // still a quarter of it), never all at once (a 1M-document window's is
  // gigabytes). Default 16 KiB: ~10-20 us per single add. Larger: fewer
  // operations pay, each pays more (session 9's 256 KiB made a snapshot a
  // burst of ~256 adds of ~0.2 ms, which queued the requests behind them for
  // 100-300 ms at half a core's saturating rate).
  uint64_t snapshot_step_bytes = uint64_t{16} << 10;
  // true (the default): a thread of the stream, at the lowest CPU priority
  // (Linux SCHED_IDLE), writes the snapshot's pieces, finishes it and
  // deletes the older files, in the CPU time nothing else wants; the writers
  // take their share (above) only once the new log has grown past a quarter
  // of the log that started the snapshot (a busy core leaves that thread no
  // time). Since session 20 the same thread makes the next log ahead of
  // each roll-over (its creation and a directory fsync), at normal priority:
  // no writer waits for it unless the thread has not made it by the time
  // the log is an eighth of snapshot_log_bytes (then a writer makes it
  // after its own sync). Where the process may not return a thread from
  // SCHED_IDLE to normal priority (neither root nor RLIMIT_NICE >= 20), the
  // writers make every next log once the thread has done a snapshot's work.
  // A durable stream starts the thread at its first write. false: the
  // writers write every piece and make the next log, and when a snapshot
  // completes depends only on the operations (tests that reopen at given
  // points).
  bool background_snapshots = true;
};

// The largest StreamOpenOptions::snapshot_log_bytes (1 PiB: sums of it and
// file sizes stay far from overflow).
inline constexpr uint64_t kMaxStreamSnapshotLogBytes = uint64_t{1} << 50;

// OK, or InvalidArgument naming the field, its bound and its value:
// snapshot_log_bytes must be in [1, kMaxStreamSnapshotLogBytes] (0 would
// start a new log file after every write). Open and OpenExisting check it
// (since session 16: before, 0 and any larger value were accepted).
Status ValidateStreamOpenOptions(const StreamOpenOptions& options);

// One document of AddBatch / CheckBatch (views: the caller keeps the bytes).
struct StreamDocument {
  std::string_view id;
  std::string_view text;
  int64_t time = 0;
};

// AddBatch fingerprints and decides at most this many documents at a time
// (bounds the fingerprints held and how long the writer lock is held).
inline constexpr size_t kStreamBatchGroup = 128;

// What an entry of List or Entry carries besides the answer.
struct StreamDetail {
  // The document's text and, for a near-duplicate, its kept document's text
  // while that one is in the window (keep_texts streams only). Default false.
  bool texts = false;
  // Also the passages between the two (implies texts): this document is the
  // query, the kept one the match, under NearDuplicatePassageRecipe of the
  // stream's recipe (neardup/passages.h), as `neardup report` shows a pair.
  // Computed outside the stream's lock: a few times the fingerprinting cost
  // of both texts. Default false.
  bool passages = false;
};

// A stored document's answer with what StreamDetail asked for.
struct StreamEntry {
  StreamAnswer answer;
  // A near-duplicate's kept document's time, while that one is in the window.
  std::optional<int64_t> of_time;
  std::optional<std::string> text;  // with texts
  std::optional<std::string>
      of_text;                    // with texts, a near-duplicate whose kept one is in the window
  std::vector<Passage> passages;  // with passages, when of_text is present
};

// Which near-duplicate answers List returns (see List).
struct StreamListOptions {
  // By (time, arrival): newest first (default) or oldest first.
  bool oldest_first = false;
  // Only answers whose time is in [from_time, to_time] (either side open when
  // unset).
  std::optional<int64_t> from_time;
  std::optional<int64_t> to_time;
  // Only answers whose id or kept document's id contains this (ASCII letters
  // compared case-insensitively, other bytes exactly). Empty: all.
  std::string search;
  // Where the previous page ended (its next_cursor); empty: the first page.
  std::string cursor;
  // Entries per page, 1..kMaxStreamListLimit. Default 100.
  size_t limit = 100;
  // The most near-duplicates one call looks at, at least 1 (a search may skip
  // many; the page then ends early with a cursor, so no call holds the
  // stream's lock for long). Default 100000 (about a millisecond).
  size_t max_scanned = 100000;
  StreamDetail detail;
};

struct StreamPage {
  std::vector<StreamEntry> entries;
  // Pass as StreamListOptions::cursor for the next page; empty when nothing
  // is left (a full page may be followed by an empty one).
  std::string next_cursor;
  uint64_t scanned = 0;  // near-duplicates looked at
};

inline constexpr size_t kMaxStreamListLimit = 10000;

// The largest id Add accepts, in bytes.
inline constexpr size_t kMaxStreamIdBytes = 1024;

class NearDuplicateStream {
 public:
  // A stream held in memory only. InvalidArgument for a bad config.
  static Result<std::unique_ptr<NearDuplicateStream>> Create(const StreamConfig& config);

  // Opens the durable stream in directory `dir`, creating it (and the
  // directory) when it holds none. AlreadyExists when it exists with another
  // config; DataLoss for a corrupt snapshot or a bad record before the tail.
  static Result<std::unique_ptr<NearDuplicateStream>> Open(const std::string& dir,
                                                           const StreamConfig& config,
                                                           const StreamOpenOptions& options = {});
  // Opens an existing durable stream with the config stored in it. NotFound
  // when `dir` holds no stream.
  static Result<std::unique_ptr<NearDuplicateStream>> OpenExisting(
      const std::string& dir, const StreamOpenOptions& options = {});

  ~NearDuplicateStream();
  NearDuplicateStream(const NearDuplicateStream&) = delete;
  NearDuplicateStream& operator=(const NearDuplicateStream&) = delete;

  // Decides and stores document `id` (see the rule above). InvalidArgument for
  // an empty id or one over kMaxStreamIdBytes (or, when texts are kept, a
  // text too large for one log record: kMaxLogRecordBytes); ResourceExhausted (disk full)
  // or IoError when the log cannot be written (nothing is stored then, and a
  // later Add may succeed; the state is reloaded from the files, a recovery
  // under the writer lock, so each add pays one while the disk stays full:
  // docs/SERVER.md); IoError when it cannot be synced (the stream then
  // refuses every later write). ResourceExhausted "out of memory" when memory
  // runs out before the document is stored (session 18): nothing is stored
  // and the stream goes on; the same for AddBatch (from the document that ran
  // out; the ones before it are stored and synced) and Remove. Once the
  // record is written, running out of memory in the roll-over or a
  // snapshot's step or finish only gives that step up (the older files stay
  // in use) and the call succeeds; if the write itself fails and the state
  // cannot then be reloaded (for lack of memory, or the files do not match
  // the log), the stream refuses every later write, and reads answer from
  // the state of that failed write (its documents included) until reopened.
  Result<StreamAnswer> Add(std::string_view id, std::string_view text, int64_t time);
  // Adds documents[0], documents[1], ... in this order and returns exactly
  // the answers that calling Add on each in turn would return: a document may
  // be a near-duplicate of an earlier one of the same batch, and an id given
  // twice gets the first one's answer. Faster than that loop: the texts are
  // fingerprinted in parallel (Fingerprinter::ComputeBatch, oneTBB) in
  // groups of kStreamBatchGroup, each group is then decided under one hold
  // of the writer lock (other requests may interleave between groups, as
  // between Adds) and its records written to the log with one write
  // (WriteAheadLog::AppendFramed), and one fsync covers the whole batch. Ids
  // present before the call are not fingerprinted. On an error at document i
  // (Add's errors, its message prefixed with `document "<id>"`), documents
  // before i are stored and durable, none from i on. A write that fails part
  // way (disk full: ResourceExhausted) keeps the documents whose records it
  // wrote whole; the ones after are taken out of memory again (their
  // evictions undone too: the state is reloaded from snapshot and log, a
  // recovery's cost, paid only when the disk fails), so nothing that is not
  // in the log is ever visible. After a crash during the write, Open keeps
  // the records before the torn one (a prefix of the batch, as after an
  // error) and cuts the rest (recovery()).
  Result<std::vector<StreamAnswer>> AddBatch(std::span<const StreamDocument> documents);
  // The answers Check would give each document now, storing nothing
  // (fingerprinted in parallel; decided under one hold of the lock, so a
  // concurrent Add lands before or after the whole batch).
  Result<std::vector<StreamAnswer>> CheckBatch(std::span<const StreamDocument> documents) const;
  // The answer Add would give now (id set to `id`), storing nothing.
  Result<StreamAnswer> Check(std::string_view id, std::string_view text, int64_t time) const;
  // The stored answer of `id`; NotFound when absent (never added, evicted or
  // removed).
  Result<StreamAnswer> Get(std::string_view id) const;
  // The text of stored document `id` as it was added (keep_texts).
  // FailedPrecondition when the stream does not keep texts; NotFound when
  // `id` is absent.
  Result<std::string> Text(std::string_view id) const;
  // The stored answer of `id` with `detail` (texts read under one lock, so
  // text and of_text are of one moment). NotFound when absent;
  // FailedPrecondition when detail asks for texts and the stream keeps none.
  Result<StreamEntry> Entry(std::string_view id, const StreamDetail& detail) const;
  // The near-duplicate answers in the window now, a page at a time (see
  // StreamListOptions). Documents answered as near-duplicates are listed
  // until they leave the window (time, cap or Remove), also after their kept
  // document left; the list is part of the state, so it is the same after a
  // restart (snapshot + log) as before. A cursor stays valid while
  // documents come and go: the next page starts after its (time, arrival).
  // Cost: O(log n + scanned) under the lock, then the texts and passages
  // asked for; memory one set entry (~64 bytes) per near-duplicate, counted
  // in Stats().memory_bytes. InvalidArgument for a bad limit, max_scanned or
  // cursor; FailedPrecondition as Entry.
  Result<StreamPage> List(const StreamListOptions& options) const;
  // Removes `id` (and from the index, if kept; documents that were answered
  // as its near-duplicates keep their answers). NotFound when absent.
  Status Remove(std::string_view id);

  StreamStats Stats() const;
  const StreamConfig& config() const;
  const Recipe& recipe() const;  // the preset adjusted for verification
  const StreamRecovery& recovery() const;
  // Writes a snapshot now (also done automatically, see above). OK and
  // nothing done for an in-memory stream.
  Status Snapshot();

  class Impl;

 private:
  friend class internal::StreamTestAccess;
  explicit NearDuplicateStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_STREAM_H_
