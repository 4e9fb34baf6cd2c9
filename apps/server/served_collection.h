// ServedCollection: a containment collection (neardup/collection.h) served
// to concurrent HTTP requests -- the archive case of `neardup serve`
// (docs/SERVER.md): check a document against everything held, with the
// matching passages; add documents; a document's most similar ones.
//
// One writer, readers never blocked: the service holds the collection's
// writer (kReadWrite, its LOCK) and, for readers, a pinned read-only view
// (a Collection opened kReadOnly: one commit's catalog and files). A reader
// takes a shared reference to the current view and answers from it however
// long it runs; an add commits on the writer (under the writer mutex), then
// publishes a new view. Views nobody references any more are kept and
// brought to the latest commit with Collection::Refresh (which reuses what
// did not change) instead of being opened again. A reader that started
// before a commit answers from the commit before it; a request that starts
// after an add was acknowledged sees it.
//
// Remove is one commit (catalog rows only; the rows stay in their segments
// as tombstones) and Compact rewrites the live rows into one segment: both
// publish a new view like Add.
//
// Idle index merge: a commit writes its documents as a new tier of the chunk
// index, and the tier policy leaves up to max_index_tiers of them, each
// searched for every query chunk. When the writer has been idle (no add,
// remove or compact) for ServedCollectionOptions::idle_index_merge and the
// index has more than one tier, a thread of the ServedCollection starts the
// merge on the collection's merge thread (Collection::MaintainIndex({.full =
// true, .size_tiered = true, .wait = false})), polls for it, installs it and
// publishes a view of it: readers then search one index, or, when the oldest
// tier holds at least index_tier_ratio times the postings of all newer ones,
// that tier and one merged newer tier (its file is not rewritten: an idle
// merge rewrites at most 1/index_tier_ratio of the oldest tier's postings,
// or the whole index once the newer tiers outgrow that; the bound is in
// MaintainIndexOptions::size_tiered). Dead postings alone do not count. It
// takes the writer mutex only for the start and the installation (a rename,
// an fsync, one transaction, a view's Refresh), and never when an add holds
// it (try_lock). Readers never wait for the merge. A write waits for the
// rest of a running merge in exactly three cases: an add whose commit
// (with any removals) would leave more than max_index_tiers tiers even after merging
// the tiers committed since the merge started with its own (only when the
// merge's own tiers reach the bound; since session 20 a burst of adds
// right after an idle period otherwise merges its own tiers and goes on,
// where it waited for the whole merge, seconds for 20k documents); Compact
// (it installs or drops the merge first); and shutdown (closing the writer
// waits for it, after "neardup serve: stopped"). Otherwise an add during
// the merge commits as usual (its tier stays; the next idle period merges
// it too).
//
// Cost: Query is QueryDocument (one fingerprint, one postings walk, the
// passages of the best matches); Similar is one search of the stored
// document's chunk set; Add is one fingerprint per document plus one commit
// (an index merge over all postings: batch documents per request) and one
// Refresh. Memory: the mapped files of each view alive (the writer's tiers
// too: an installed merge maps its file); while a merge runs, one heap copy
// of the postings it merges (the whole live index for a full merge).
// Thread safety: every method may be called concurrently.
#ifndef NEARDUP_APPS_SERVER_SERVED_COLLECTION_H_
#define NEARDUP_APPS_SERVER_SERVED_COLLECTION_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/fingerprinter.h"
#include "neardup/status.h"

namespace neardup::server {

// A document to add: external id and text.
struct CollectionInput {
  std::string id;
  std::string text;
};

// One row of a document's top-N, with the other document's external id.
struct SimilarDocument {
  std::string id;
  double a_in_b = 0;  // how much of the asked document is found in this one
  double b_in_a = 0;  // how much of this one is found in the asked document
};

struct ServedCollectionOptions {
  // Merge all index tiers into one once the writer has been idle this long
  // (`neardup serve --index-merge-idle`); zero: never (the tier policy's
  // background merges still run).
  std::chrono::milliseconds idle_index_merge{30000};
};

// `neardup serve --index-merge-idle SECONDS` as an idle time: whole
// milliseconds (the fraction dropped), except that any positive value below
// 1 ms is 1 ms (0 alone means never). InvalidArgument for NaN, infinity or a
// negative value (CLI11's Range lets "nan" through).
Result<std::chrono::milliseconds> IdleMergeDelay(double seconds);

class ServedCollection {
 public:
  // Opens the collection in `dir` for writing (this process becomes its one
  // writer) and a first reader view. The errors of Collection::Open
  // (FailedPrecondition when another process writes it).
  static Result<std::unique_ptr<ServedCollection>> Open(
      const std::string& dir, const ServedCollectionOptions& options = {});
  ~ServedCollection();
  ServedCollection(const ServedCollection&) = delete;
  ServedCollection& operator=(const ServedCollection&) = delete;

  // What `neardup query` answers for `text` (options as its flags).
  Result<QueryResult> Query(std::string_view text, const QueryOptions& options) const;

  // The top_n documents most similar to the stored document `id`, best first
  // (neardup/containment.h; the collection's boilerplate cap): the list
  // `neardup similar --top top_n --min min_similarity` gives for it, computed
  // now from the current view. NotFound for an unknown id.
  Result<std::vector<SimilarDocument>> Similar(std::string_view id, size_t top_n,
                                               double min_similarity) const;

  // Adds (or modifies, by id) `documents` in one durable commit; when an id
  // occurs twice, the last one counts (Collection::Commit).
  Result<CommitResult> Add(std::span<const CollectionInput> documents);

  // Removes the documents `ids` in one durable commit (Collection::Commit);
  // NotFound, and nothing removed, when one of them is not in the
  // collection.
  Result<CommitResult> Remove(std::span<const std::string> ids);

  // Rewrites the live rows into one segment and drops the tombstones of
  // removed and modified documents (Collection::Compact), under the writer
  // mutex (adds and removals wait; readers go on with their views). Answers
  // are unchanged by it.
  Status Compact();

  // The stored document `id` in the current view; nullopt when absent.
  Result<std::optional<DocumentInfo>> Find(std::string_view id) const;
  // The current reader view (one commit), pinned while the caller holds it:
  // for readers of the whole collection (the /ui/ report pages).
  std::shared_ptr<const Collection> ReaderView() const { return View(); }

  Result<CollectionStats> Stats() const;
  // Merges of index tiers the idle merge has installed so far (its own,
  // full or size-tiered, and a policy merge it found finished).
  uint64_t idle_index_merges() const;
  const std::string& recipe_id() const;
  const std::string& dir() const;
  bool stores_texts() const;

 private:
  struct ViewPool;
  ServedCollection() = default;
  // The current reader view, pinned for as long as the caller holds it.
  std::shared_ptr<const Collection> View() const;
  // Makes a view of the writer's latest commit current.
  Status Publish();
  // Notes a write (the idle merge waits for idle_index_merge after it);
  // WriteNote calls it at a write's start and end.
  struct WriteNote;
  void NoteWrite();
  // The idle merge's thread, and one step of it: starts or installs the full
  // merge; true while there is more to do (a merge running, several tiers).
  void IdleMergeLoop();
  bool IdleMergeStep();

  std::unique_ptr<Collection> writer_;
  std::unique_ptr<Fingerprinter> fingerprinter_;  // the collection's recipe
  std::mutex writer_mutex_;                       // one commit at a time
  std::shared_ptr<ViewPool> pool_;                // idle views, for Refresh
  mutable std::mutex view_mutex_;                 // guards view_ (the pointer only)
  std::shared_ptr<const Collection> view_;

  // The idle merge (guarded by idle_mutex_).
  ServedCollectionOptions options_;
  std::mutex idle_mutex_;
  std::condition_variable idle_wake_;
  bool stopping_ = false;
  uint64_t writes_ = 0;
  std::chrono::steady_clock::time_point last_write_ = std::chrono::steady_clock::now();
  std::atomic<uint64_t> idle_merges_{0};
  std::thread idle_thread_;
};

}  // namespace neardup::server

#endif  // NEARDUP_APPS_SERVER_SERVED_COLLECTION_H_
