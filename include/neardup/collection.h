// Collection: the persistent, crash-safe store of a document archive for
// containment search. A collection is a directory:
//   catalog.db        SQLite: meta (format version, recipe, boilerplate cap,
//                     counters), documents (external id, original file name
//                     and format, chunk count, content hash, added/modified
//                     time, location), the
//                     manifest (segments, current index file), similarities
//   data/seg-N.nds    immutable segment files: per document its number,
//                     chunk set, SimHash and zstd-compressed text
//   data/index-G.ndi  the tiers of the inverted chunk index
//                     (neardup/tiered_chunk_index.h): commit G wrote the
//                     postings of its new documents, merged with the newest
//                     tiers when their sizes call for it; removed documents
//                     are masked until a merge drops their postings
//   recipe.json       the recipe, for people (the catalog's copy rules)
//   LOCK              held (flock) by the one writer
//
// Commit protocol: new files are written under fresh names, fsynced and
// renamed; then one SQLite transaction (WAL, synchronous=FULL) switches the
// manifest and the catalog. A crash at any point leaves the last committed
// state readable; files of an unfinished commit are deleted by the next
// writer. Deleted and modified documents leave dead rows in their segments
// (tombstones: rows the catalog no longer points to) until Compact.
//
// Document numbers: each stored version of a document gets a new number (a
// counter that never goes back), so the index merge is a pure append and
// similarities of retired versions are easy to drop. Numbers survive
// compaction.
//
// Snapshots: a read-only Collection is a pinned view of one commit -- its
// catalog reads run in one SQLite read transaction, and it maps the index
// and segment files that commit names -- and it keeps answering from that
// commit while writers (threads or processes) commit and compact, until
// Refresh() moves it to the latest commit. Files a writer replaces are
// unlinked at once, and stay readable by every view that maps them (POSIX
// keeps an unlinked file until its last mapping goes): the live-file set is
// kept by the kernel, across processes. Open and Refresh retry when a
// writer replaces a file between the catalog read and the file's opening.
// A read-only open needs no write permission and takes no lock
// (docs/CONTAINMENT.md).
//
// Cost: Open maps the index and the segments, checks the index's checksum
// (one read of the file, unless OpenOptions::verify_index is false) and
// loads the live documents' locations (12 bytes each); a commit of d
// documents costs their fingerprints' write plus the write of a tier of their
// postings; merges of tiers (amortized: each posting is rewritten about
// index_tier_ratio times per level of tiers) run on a background thread of
// the writer and are installed by its next call (OpenOptions::
// background_index_merges, max_index_tiers; docs/CONTAINMENT.md); a removal
// writes no index file. Compact merges all tiers. Memory: the index and segments are
// memory-mapped. Refresh reuses what did not change.
// Thread safety: const methods may run concurrently (one read-only
// Collection may serve many reader threads); Refresh, Commit, Compact,
// MaintainIndex and the similarity writes need exclusive access. A writer
// merges index tiers on a thread of its own (background_index_merges),
// which only reads immutable tiers and writes one file: the Collection's
// state changes only inside the calls above. One writing process per
// collection (LOCK); any number of read-only openers. A reader thread that
// refreshes on its own schedule opens its own read-only Collection.
#ifndef NEARDUP_COLLECTION_H_
#define NEARDUP_COLLECTION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/chunk_index.h"
#include "neardup/env.h"
#include "neardup/recipe.h"
#include "neardup/status.h"
#include "neardup/tiered_chunk_index.h"

namespace neardup {

// Bumped whenever the collection's layout changes; a collection with a newer
// version is refused.
// Version 2 added `similarity_added` and an index on similarities(b);
// version 3 the tiered chunk index (table index_tiers instead of meta
// index_file) and documents.format (the format a document's text was
// extracted from). An older collection is upgraded when opened for writing
// (its documents keep format "" and the name they had; its one index file
// becomes the one tier); read-only opens read it as it is.
inline constexpr int kCollectionFormatVersion = 3;

struct CollectionOptions {
  // Chunks found in more than this many documents are ignored for scoring
  // (boilerplate). Default 1000: for an archive of theses, text shared by
  // more than a thousand documents is a template, not reuse. 0: no cap.
  uint32_t max_document_frequency = 1000;
  // Default true: keep every text (zstd) for matching passages. false saves
  // roughly the compressed size of the archive; passages are then unavailable.
  bool store_texts = true;
};

// A document to add or modify, already fingerprinted with the collection's
// recipe (SketchSelection{.simhash = true, .chunks = true}).
struct IncomingDocument {
  std::string id;    // external id; the key
  std::string name;  // the original file it came from (a path); informational
  std::string_view text;
  std::vector<uint32_t> chunks;  // strictly ascending
  uint64_t simhash = 0;
  // The format its text was extracted from ("pdf", "docx", "odt", "html",
  // "warc": Document::format); empty for plain text and JSONL. Informational.
  std::string format = {};
};

struct DocumentInfo {
  uint32_t doc = 0;  // the current version's number
  std::string id;
  std::string name;    // IncomingDocument::name (the id, for documents added before version 3)
  std::string format;  // IncomingDocument::format
  uint32_t num_chunks = 0;
  std::string content_hash;  // 16 hex digits: XXH3-64 of the text
  int64_t added_at = 0;      // seconds since the epoch (the clock's)
  int64_t modified_at = 0;
};

struct CommitResult {
  uint64_t added = 0;
  uint64_t modified = 0;
  uint64_t unchanged = 0;  // same id and content: nothing written
  uint64_t removed = 0;
  uint64_t generation = 0;  // of the manifest after the commit
};

struct CollectionStats {
  uint64_t documents = 0;
  uint64_t empty_documents = 0;  // no chunks
  uint64_t segments = 0;
  uint64_t segment_rows = 0;
  uint64_t dead_rows = 0;  // tombstones awaiting compaction
  uint64_t segment_bytes = 0;
  uint64_t index_keys = 0;
  uint64_t index_postings = 0;
  uint64_t index_bytes = 0;          // all tier files
  uint64_t index_tiers = 0;          // chunk index files searched together
  uint64_t index_dead_postings = 0;  // of removed documents, dropped by the next merge
  uint64_t boilerplate_keys = 0;     // keys above the cap
  uint64_t catalog_bytes = 0;
  uint64_t memory_bytes = 0;  // mapped index + in-memory tables
  uint64_t generation = 0;
  uint32_t max_document_frequency = 0;
  uint64_t similarity_rows = 0;
  uint64_t similarity_dirty = 0;  // lists to recompute
  uint64_t similarity_added = 0;  // documents whose scores are still to be merged
};

// One stored similarity: b is among a's top-N.
struct SimilarityRow {
  uint32_t a = 0;
  uint32_t b = 0;
  double a_in_b = 0.0;
  double b_in_a = 0.0;
  friend bool operator==(const SimilarityRow&, const SimilarityRow&) = default;
};

struct SimilarityParams {
  uint64_t top_n = 100;
  double min_similarity = 0.0;
  friend bool operator==(const SimilarityParams&, const SimilarityParams&) = default;
};

class Collection {
 public:
  enum class Mode { kReadOnly, kReadWrite };
  struct OpenOptions {
    Mode mode = Mode::kReadOnly;
    // Seconds since the epoch for added_at / modified_at. Default: the
    // system clock. Tests pass a fake.
    std::function<int64_t()> clock;
    // Default true: Open reads the whole index file once to check its
    // checksum (several GB/s), so a damaged index is an error, never a
    // silently different answer. false: only the O(keys) structural checks
    // (reads stay in bounds, but a damaged body may change results until
    // Verify). A writer always verifies. Segments are checked the first time
    // they are used (their arrays' checksum; each text frame has its own).
    bool verify_index = true;
    // The file system for the segment and index files (writes, renames,
    // removals, syncs, the writer lock). Default null: Env::Default().
    // Tests pass a fault-injecting one. The catalog goes through SQLite.
    Env* env = nullptr;
    // The writer's merge policy for the tiers of the chunk index
    // (TierMergeStart in neardup/tiered_chunk_index.h): a commit writes its
    // new documents as a new tier and merges it with the newest tiers while
    // an older tier is less than this many times their live size. Default 4:
    // about log4(archive / commit) tiers to search, each posting rewritten
    // about 4 times per level. Larger: fewer rewrites, more tiers. At least 2.
    uint32_t index_tier_ratio = 4;
    // Default true: a commit writes its own tier and returns; the merge the
    // policy then asks for runs on a thread of the writer's (one at a time)
    // and is installed (a manifest switch of its own, with a new
    // generation) by the writer's next Commit, MaintainIndex, Compact or
    // close, which waits for it. Readers see every live tier meanwhile.
    // false: the commit merges before it returns (as before; the tier
    // count after each commit is then deterministic).
    bool background_index_merges = true;
    // Back-pressure: a commit that would leave more tiers than this merges
    // the newest tiers itself (down to at most this many), so a writer that
    // commits faster than merges finish keeps the search over a bounded
    // number of tiers. It leaves a running merge's tiers to it and merges
    // only those written since (session 20); it waits for the running merge
    // only when that cannot reach the bound (the merge's tiers end at the
    // bound), and always without background_index_merges (its policy merge
    // could rewrite the run). A commit that only removes adds no tier and
    // does not wait. Default 12 (the policy alone keeps about
    // log4(archive / commit) tiers). At least 2.
    uint32_t max_index_tiers = 12;
  };

  // Creates the directory `dir` (which must not exist, or be empty).
  // AlreadyExists when it holds anything; InvalidArgument for a bad recipe.
  static Status Create(const std::string& dir, const Recipe& recipe,
                       const CollectionOptions& options);

  // NotFound when `dir` is not a collection; FailedPrecondition for a newer
  // format version or (kReadWrite) when another process holds the writer
  // lock; DataLoss for damaged files.
  static Result<std::unique_ptr<Collection>> Open(const std::string& dir,
                                                  const OpenOptions& options);
  ~Collection();
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  const std::string& dir() const { return dir_; }
  const Recipe& recipe() const { return recipe_; }
  const std::string& recipe_id() const { return recipe_id_; }
  uint32_t max_document_frequency() const { return max_document_frequency_; }
  bool stores_texts() const { return store_texts_; }
  // FailedPrecondition naming both recipe ids when `recipe` is not the
  // collection's.
  Status CheckRecipe(const Recipe& recipe) const;

  // The index of all live documents of this view (numbers as in
  // DocumentInfo::doc): its tiers with the removed documents masked, which
  // answers exactly as one merged index. A copy that shares the arrays
  // (O(tiers)): it stays valid after a Commit, Compact or Refresh of this
  // collection, which replace the collection's own.
  TieredChunkIndex index() const { return index_; }

  // Moves a read-only collection to the latest commit (a new pinned view:
  // catalog and files together); a no-op for the writer, whose view is
  // always its own last commit. On error the collection is unusable.
  Status Refresh();
  // The commit this view holds (CommitResult::generation of the writer).
  uint64_t generation() const;

  // The live document with external id `id`, or nullopt.
  Result<std::optional<DocumentInfo>> FindDocument(std::string_view id) const;
  // All live documents, by ascending number.
  Result<std::vector<DocumentInfo>> ListDocuments() const;
  // External ids of the given document numbers ("" for an unknown number).
  Result<std::map<uint32_t, std::string>> ExternalIds(std::span<const uint32_t> docs) const;
  // The catalog rows of the given live document numbers (unknown numbers
  // are left out).
  Result<std::map<uint32_t, DocumentInfo>> FindDocuments(std::span<const uint32_t> docs) const;
  // Live document numbers, ascending.
  std::vector<uint32_t> LiveDocuments() const;
  // The chunk set of a live document (valid until the next Compact).
  // NotFound for a number that is not live.
  Result<std::span<const uint32_t>> Chunks(uint32_t doc) const;
  Result<uint64_t> SimHash(uint32_t doc) const;
  // NotFound when texts are not stored.
  Result<std::string> Text(uint32_t doc) const;

  // Adds, modifies and removes documents in one atomic commit. An upsert
  // whose id exists with the same content is a no-op; with other content it
  // is a modification (the old version is retired). When an id occurs twice
  // in `upserts`, the last one counts. NotFound (nothing committed) when a
  // removed id is not in the collection; InvalidArgument when an id is both
  // upserted and removed, or chunks are not ascending.
  // REQUIRES: opened kReadWrite.
  Result<CommitResult> Commit(std::span<const IncomingDocument> upserts,
                              std::span<const std::string> removals);

  // Waits for the running background merge of index tiers and installs it,
  // then runs (on the calling thread) every merge the policy asks for, so
  // that the tiers are as the policy leaves them. For a server's idle time,
  // or before a process exits; Commit and close install finished merges on
  // their own. The error of a background merge that failed since the last
  // call (its work is dropped and redone later; the collection stays at its
  // last commit). REQUIRES: opened kReadWrite (else FailedPrecondition).
  Status MaintainIndex();

  struct MaintainIndexOptions {
    // false: the merges the policy asks for (MaintainIndex()). true: all
    // live tiers into one, dropping dead postings (the index part of
    // Compact, without its segment rewrite), when there is more than one
    // tier or a dead posting: for a collection searched much more than it
    // is committed to, which then searches one index instead of up to
    // max_index_tiers. The same merge and installation as a background
    // merge (temporary file, fsync, rename, one manifest transaction, a new
    // generation): as crash-safe, readers pinned to older generations keep
    // theirs, and tiers committed while it runs stay.
    // Cost: rewrites the whole live index, and holds the merged copy in
    // memory while it builds (peak: one heap copy of the live postings
    // beside the mapped tiers); once installed the tier maps its file, so
    // the heap copy is freed (as after a commit or Compact).
    bool full = false;
    // With `full` (the server's idle merge): size-tiered. When the oldest
    // tier holds at least index_tier_ratio times the live postings of all
    // newer tiers together, it stays and only the newer tiers are merged into one
    // (nothing when there is only one newer tier); otherwise all tiers into
    // one. Dead postings alone are no reason to merge (Compact drops them).
    // Bound: one such merge rewrites either the newer tiers only, at most
    // 1/index_tier_ratio of the oldest tier's postings (a fifth of the index
    // at the default 4), or the whole index, and the whole index only once
    // the tiers written since the oldest hold more than 1/index_tier_ratio
    // of its postings: each full rewrite grows the oldest tier by that
    // factor, so a posting is rewritten by full merges about
    // index_tier_ratio + 1 times in all, not once per merge. Trade-off: a
    // trickle of adds leaves two tiers (every query chunk is looked up in
    // both; 3 tiers cost x1.7-2.1 the one index's search CPU) and rewrites
    // the newer one at each merge.
    bool size_tiered = false;
    // true: as MaintainIndex() (waits for the running merge, merges on the
    // calling thread; the tiers are as asked when it returns). false: never
    // waits: installs a finished background merge, and then, when none is
    // running (also right after that installation, in the same call),
    // starts the merge asked for on the background thread (one at a time)
    // and returns; a later call, Commit, Compact or close
    // installs it. Call it again until index_merge_pending() is false and
    // the tiers are as wanted (a server's idle timer does). Those calls
    // may wait for it: a Commit that would leave more than max_index_tiers
    // tiers merges the tiers committed since the merge started with its
    // own (no policy merge starts while it runs, so commits add tiers until
    // that bound), and waits for the rest of the running merge only when
    // the merge's tiers alone reach the bound; Compact and close always
    // wait for it. With background_index_merges =
    // false it still runs in the background, but a commit meanwhile merges
    // the newest tiers itself per the policy; when that rewrite starts
    // inside the running merge's tiers, the finished merge no longer
    // matches the tier list and is dropped (its work lost, nothing wrong).
    bool wait = true;
  };
  Status MaintainIndex(const MaintainIndexOptions& options);
  // True while a background merge of index tiers runs or waits to be
  // installed. The writer's thread contract (it reads the merge's state
  // without a lock): call it where Commit could be called, not from another
  // thread.
  bool index_merge_pending() const;

  // Rewrites all live rows into one segment and drops the others (and their
  // tombstones). Document numbers and similarities are unchanged.
  Status Compact();

  Result<CollectionStats> Stats() const;

  // Checks every invariant: catalog rows point at segment rows holding the
  // same number and chunk count, every segment's checksum, and the index
  // equals one rebuilt from the live rows. DataLoss naming the first breach.
  Status Verify() const;

  // Stored similarities (neardup/containment.h for the definitions).
  // The parameters of the stored table, or nullopt when none was computed.
  Result<std::optional<SimilarityParams>> StoredSimilarityParams() const;
  // Documents whose top-N list must be recomputed since the table was
  // computed (recorded by each commit while a table exists: documents
  // sharing a chunk that crossed the boilerplate cap, and documents that
  // listed a retired document), ascending.
  Result<std::vector<uint32_t>> DirtyDocuments() const;
  // Documents added (new versions included) since the table was computed,
  // ascending; some may have been retired since. Their own lists are
  // computed, and their scores merged into the lists of the others.
  Result<std::vector<uint32_t>> AddedSinceSimilarities() const;
  // Replaces the rows of documents `replaced` (all rows when `full`) with
  // `rows` (grouped by a, each group best first), records `params`, and
  // clears the dirty and added lists, in one transaction.
  Status StoreSimilarities(const SimilarityParams& params, bool full,
                           std::span<const uint32_t> replaced, std::span<const SimilarityRow> rows);
  // The stored rows of `docs` (ascending): by a ascending, each a's best first.
  Result<std::vector<SimilarityRow>> ReadSimilarities(std::span<const uint32_t> docs) const;
  // All stored rows: by a ascending, each a's best first.
  Result<std::vector<SimilarityRow>> ReadSimilarities() const;

 private:
  class Impl;
  Collection() = default;

  std::string dir_;
  Recipe recipe_;
  std::string recipe_id_;
  uint32_t max_document_frequency_ = 0;
  bool store_texts_ = true;
  TieredChunkIndex index_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_COLLECTION_H_
