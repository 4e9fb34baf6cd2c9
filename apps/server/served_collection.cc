#include "served_collection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "neardup/containment.h"

namespace neardup::server {

// Views whose last reader let go. A view is handed out as a shared_ptr whose
// deleter parks it here instead of closing it: nobody reads it any more, so
// the next Publish may Refresh it (Refresh needs exclusive access). The pool
// is shared with the deleters, so a view released after the
// ServedCollection is gone is simply closed.
struct ServedCollection::ViewPool {
  std::mutex mutex;
  std::vector<std::unique_ptr<Collection>> idle;
  bool closed = false;
};

Result<std::chrono::milliseconds> IdleMergeDelay(double seconds) {
  // The upper bound keeps the product far inside int64 (and the CLI's flag
  // caps it at a year).
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e12) {
    return InvalidArgumentError("--index-merge-idle (" + std::to_string(seconds) +
                                ") must be a finite number of seconds >= 0");
  }
  const auto ms = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
  if (seconds > 0 && ms.count() == 0) return std::chrono::milliseconds(1);
  return ms;
}

ServedCollection::~ServedCollection() {
  if (idle_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(idle_mutex_);
      stopping_ = true;
    }
    idle_wake_.notify_all();
    idle_thread_.join();
  }
  if (!pool_) return;  // Open failed before making it
  std::lock_guard<std::mutex> lock(pool_->mutex);
  pool_->closed = true;
}

Result<std::unique_ptr<ServedCollection>> ServedCollection::Open(
    const std::string& dir, const ServedCollectionOptions& served_options) {
  auto served = std::unique_ptr<ServedCollection>(new ServedCollection());
  served->options_ = served_options;
  Collection::OpenOptions options;
  options.mode = Collection::Mode::kReadWrite;
  NEARDUP_ASSIGN_OR_RETURN(served->writer_, Collection::Open(dir, options));
  NEARDUP_ASSIGN_OR_RETURN(served->fingerprinter_, CreateCollectionFingerprinter(*served->writer_));
  served->pool_ = std::make_shared<ViewPool>();
  NEARDUP_RETURN_IF_ERROR(served->Publish());
  if (served_options.idle_index_merge.count() > 0) {
    served->idle_thread_ = std::thread([raw = served.get()] { raw->IdleMergeLoop(); });
  }
  return served;
}

// Notes a write when it begins and when it ends: the idle time counts from
// the end of the last one.
struct ServedCollection::WriteNote {
  explicit WriteNote(ServedCollection* collection) : served(collection) { served->NoteWrite(); }
  ~WriteNote() { served->NoteWrite(); }
  WriteNote(const WriteNote&) = delete;
  WriteNote& operator=(const WriteNote&) = delete;
  ServedCollection* served;
};

void ServedCollection::NoteWrite() {
  {
    std::lock_guard<std::mutex> lock(idle_mutex_);
    ++writes_;
    last_write_ = std::chrono::steady_clock::now();
  }
  idle_wake_.notify_all();
}

void ServedCollection::IdleMergeLoop() {
  const std::chrono::milliseconds idle = options_.idle_index_merge;
  // While a merge runs, its installation is polled this often.
  const std::chrono::milliseconds poll =
      std::clamp(idle / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(250));
  std::unique_lock<std::mutex> lock(idle_mutex_);
  while (!stopping_) {
    const auto due = last_write_ + idle;
    if (std::chrono::steady_clock::now() < due) {
      idle_wake_.wait_until(lock, due);
      continue;
    }
    const uint64_t writes = writes_;
    lock.unlock();
    const bool more = IdleMergeStep();
    lock.lock();
    if (more) {
      idle_wake_.wait_for(lock, poll, [&] { return stopping_; });
    } else {
      // Nothing to merge until the next write.
      idle_wake_.wait(lock, [&] { return stopping_ || writes_ != writes; });
    }
  }
}

bool ServedCollection::IdleMergeStep() {
  // An add, removal or compaction holds the writer: it is no longer idle
  // (the loop waits for idle time again after it).
  std::unique_lock<std::mutex> writer(writer_mutex_, std::try_to_lock);
  if (!writer.owns_lock()) return true;
  if (!writer_->index_merge_pending() && writer_->index().num_tiers() <= 1) return false;
  const uint64_t generation = writer_->generation();
  Status maintained = writer_->MaintainIndex({.full = true, .size_tiered = true, .wait = false});
  if (writer_->generation() != generation) {
    ++idle_merges_;
    if (Status published = Publish(); !published.ok()) {
      std::fprintf(stderr, "neardup serve: collection %s: idle index merge: %s\n",
                   writer_->dir().c_str(), published.ToString().c_str());
    }
  }
  if (!maintained.ok()) {
    // Dropped (its file removed; the collection is at its last commit):
    // tried again after the next write.
    std::fprintf(stderr, "neardup serve: collection %s: idle index merge failed: %s\n",
                 writer_->dir().c_str(), maintained.ToString().c_str());
    return false;
  }
  // Nothing pending: the size-tiered rule asks for nothing more (it may
  // leave a large oldest tier and one newer tier) until the next write.
  return writer_->index_merge_pending();
}

uint64_t ServedCollection::idle_index_merges() const { return idle_merges_.load(); }

std::shared_ptr<const Collection> ServedCollection::View() const {
  std::lock_guard<std::mutex> lock(view_mutex_);
  return view_;
}

Status ServedCollection::Publish() {
  std::unique_ptr<Collection> view;
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    if (!pool_->idle.empty()) {
      view = std::move(pool_->idle.back());
      pool_->idle.pop_back();
    }
  }
  if (view) {
    // On error the refreshed view is unusable: drop it and open a new one.
    if (!view->Refresh().ok()) view.reset();
  }
  if (!view) {
    Collection::OpenOptions options;  // read-only
    // The writer verified the index when it opened and wrote every later
    // one itself; views check the structure only.
    options.verify_index = false;
    NEARDUP_ASSIGN_OR_RETURN(view, Collection::Open(writer_->dir(), options));
  }
  std::shared_ptr<ViewPool> pool = pool_;
  std::shared_ptr<const Collection> shared(view.release(), [pool](const Collection* released) {
    std::unique_ptr<Collection> owned(const_cast<Collection*>(released));
    std::lock_guard<std::mutex> lock(pool->mutex);
    // One idle view is enough: Refresh needs only one per commit.
    if (!pool->closed && pool->idle.empty()) pool->idle.push_back(std::move(owned));
  });
  std::shared_ptr<const Collection> old;
  {
    std::lock_guard<std::mutex> lock(view_mutex_);
    old = std::exchange(view_, std::move(shared));
  }
  return Status::Ok();  // `old` is released here, outside the view lock
}

Result<QueryResult> ServedCollection::Query(std::string_view text,
                                            const QueryOptions& options) const {
  const std::shared_ptr<const Collection> view = View();
  return QueryDocument(*view, *fingerprinter_, text, options);
}

Result<std::vector<SimilarDocument>> ServedCollection::Similar(std::string_view id, size_t top_n,
                                                               double min_similarity) const {
  const std::shared_ptr<const Collection> view = View();
  NEARDUP_ASSIGN_OR_RETURN(std::optional<DocumentInfo> info, view->FindDocument(id));
  if (!info) return NotFoundError("no document \"" + std::string(id) + "\" in the collection");
  NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, view->Chunks(info->doc));
  // The search `neardup similar` runs for each document (its own number
  // excluded), so the list equals that command's for this document.
  ContainmentOptions options;
  options.max_document_frequency = view->max_document_frequency();
  options.top_n = top_n;
  options.min_similarity = min_similarity;
  const TieredChunkIndex index = view->index();
  ContainmentSearcher searcher(index);
  const std::vector<ContainmentMatch> matches = searcher.Search(chunks, options, info->doc);
  std::vector<uint32_t> docs;
  for (const ContainmentMatch& match : matches) docs.push_back(match.doc);
  NEARDUP_ASSIGN_OR_RETURN(auto ids, view->ExternalIds(docs));
  std::vector<SimilarDocument> similar;
  for (const ContainmentMatch& match : matches) {
    similar.push_back({ids[match.doc], match.a_in_b, match.b_in_a});
  }
  return similar;
}

Result<CommitResult> ServedCollection::Add(std::span<const CollectionInput> documents) {
  // Fingerprints first, outside the writer lock (readers and other adds go
  // on meanwhile).
  std::vector<IncomingDocument> incoming;
  incoming.reserve(documents.size());
  for (const CollectionInput& document : documents) {
    Fingerprint fingerprint;
    NEARDUP_RETURN_IF_ERROR(fingerprinter_->Compute(document.text, &fingerprint)
                                .WithContext("document \"" + document.id + "\""));
    incoming.push_back({document.id, document.id, document.text, std::move(fingerprint.chunks),
                        fingerprint.simhash});
  }
  std::lock_guard<std::mutex> lock(writer_mutex_);
  const WriteNote noted(this);
  NEARDUP_ASSIGN_OR_RETURN(CommitResult result, writer_->Commit(incoming, {}));
  // The commit is durable; readers see it from the next view on. A failed
  // Publish leaves the previous view current (the add is still committed).
  NEARDUP_RETURN_IF_ERROR(Publish().WithContext("committed, but the new view failed to open"));
  return result;
}

Result<CommitResult> ServedCollection::Remove(std::span<const std::string> ids) {
  std::lock_guard<std::mutex> lock(writer_mutex_);
  const WriteNote noted(this);
  NEARDUP_ASSIGN_OR_RETURN(CommitResult result, writer_->Commit({}, ids));
  NEARDUP_RETURN_IF_ERROR(Publish().WithContext("committed, but the new view failed to open"));
  return result;
}

Status ServedCollection::Compact() {
  std::lock_guard<std::mutex> lock(writer_mutex_);
  const WriteNote noted(this);
  NEARDUP_RETURN_IF_ERROR(writer_->Compact());
  // Views of the old segments keep them mapped (unlinked files stay
  // readable) until their readers let go.
  return Publish().WithContext("compacted, but the new view failed to open");
}

Result<std::optional<DocumentInfo>> ServedCollection::Find(std::string_view id) const {
  return View()->FindDocument(id);
}

Result<CollectionStats> ServedCollection::Stats() const { return View()->Stats(); }

const std::string& ServedCollection::recipe_id() const { return writer_->recipe_id(); }

const std::string& ServedCollection::dir() const { return writer_->dir(); }

bool ServedCollection::stores_texts() const { return writer_->stores_texts(); }

}  // namespace neardup::server
