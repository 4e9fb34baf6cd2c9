// The private state of a Collection, shared by collection.cc (create, open,
// reads, stats, verify) and collection_commit.cc (commit, compact,
// similarities).
#ifndef NEARDUP_STORE_COLLECTION_IMPL_H_
#define NEARDUP_STORE_COLLECTION_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "store/segment_file.h"
#include "store/sqlite_db.h"

namespace neardup {
namespace internal {

// Where a live document's row is.
struct DocumentLocation {
  uint32_t doc = 0;
  uint32_t segment = 0;
  uint32_t row = 0;
};

// What a background merge of index tiers produced: the tiers it replaces
// (their generations, a contiguous run of the tier list when it started) and
// the merged tier, written to data/index-merge.ndi (not written when it has
// no posting: every document of the run is gone).
struct TierMergeOutput {
  std::vector<uint64_t> replaced;
  ChunkIndex merged;
};

// Removes files written by a commit that did not reach the catalog.
struct FileCleanup {
  Env* env;
  std::vector<std::filesystem::path> paths;
  bool keep = false;
  ~FileCleanup() {
    if (keep) return;
    for (const std::filesystem::path& p : paths) env->RemoveFile(p.string()).IgnoreError();
  }
};

}  // namespace internal

class Collection::Impl {
 public:
  using Location = internal::DocumentLocation;

  ~Impl();

  // Moves `c` to the latest commit: one catalog read transaction, then the
  // files it names, retried when a writer replaced them in between (see
  // collection_open.cc). A read-only collection keeps the transaction open,
  // so that its catalog reads see the commit its files belong to.
  Status LoadLatest(Collection* c);
  // Ends the pinned read transaction, if one is open.
  void EndRead();

  // Background merges of index tiers (collection_merge.cc; the design is in
  // docs/CONTAINMENT.md). Each runs on the writer's side:
  // Starts a merge of the tiers the policy (TierMergeStart) picks, on its own
  // thread, unless one is running or background merges are off. The thread
  // reads a copy of c->index_ and writes data/index-merge.ndi; it never
  // touches the catalog or the collection.
  void StartMerge(Collection* c);
  // Installs the finished background merge (a manifest switch of its own:
  // rename to index-<G>.ndi, one transaction, a new generation). `wait`:
  // waits for a running one; otherwise returns at once when it is still
  // running. A failed merge is dropped (its file removed) and its error
  // returned.
  Status FinishMerge(Collection* c, bool wait);
  // Waits for a running merge and installs it, then merges (on this thread)
  // until the policy asks for nothing (or, `full`, all tiers into one).
  // !`wait`: Collection::MaintainIndexOptions::wait.
  Status MaintainIndex(Collection* c, bool full, bool size_tiered, bool wait);
  // Starts the merge of tiers [begin, end) on the merge thread.
  void StartMergeOf(Collection* c, size_t begin, size_t end);
  // Where the running merge's run of tiers ends in index_tiers (the first
  // tier after it), or 0 when no merge is running or its run is no longer
  // in the list. A commit past max_index_tiers merges only tiers from here
  // on (session 20), so that the run stays for the merge to replace.
  size_t RunningMergeEnd() const;
  // The generations of tiers [begin, end): what a merge of them replaces.
  std::vector<uint64_t> ReplacedGenerations(size_t begin, size_t end) const {
    return {index_tiers.begin() + static_cast<ptrdiff_t>(begin),
            index_tiers.begin() + static_cast<ptrdiff_t>(end)};
  }
  // Switches the manifest to a finished merge: its file becomes
  // index-<G> (G the new generation) and replaces its run of tiers, in one
  // transaction. Tiers committed since it started stay; documents removed
  // since are masked by the live list, as in any tier.
  Status Install(Collection* c, internal::TierMergeOutput out);

  std::unique_ptr<internal::SqliteDb> db;
  bool writable = false;
  bool verify_index = true;
  Env* env = nullptr;              // never null once open
  std::unique_ptr<FileLock> lock;  // the writer's
  bool read_open = false;          // a read transaction pins the catalog (read-only only)
  bool loaded = false;             // LoadLatest has succeeded once
  std::function<int64_t()> clock;
  // Invariant: holds exactly the segments of the manifest. Shared, so that
  // Refresh keeps the readers (and their checked arrays) of segments that
  // did not change.
  std::map<uint32_t, std::shared_ptr<const internal::SegmentReader>> segments;
  // The live documents, by ascending number: memory in proportion to the
  // live documents, never to the numbers ever issued (next_doc comes from
  // the catalog and is not trusted to be small).
  std::vector<Location> locations;
  uint64_t generation = 0;
  uint64_t format_version = 0;  // of the catalog as opened
  // The generations whose files (data/index-G.ndi) are the tiers of the
  // chunk index, oldest first; index_ (the Collection's) holds them in this
  // order.
  std::vector<uint64_t> index_tiers;
  uint64_t index_tier_ratio = 4;  // OpenOptions::index_tier_ratio
  bool background_merges = true;  // OpenOptions::background_index_merges
  uint64_t max_index_tiers = 12;  // OpenOptions::max_index_tiers
  // The running (or finished, not yet installed) background merge; valid()
  // while there is one.
  std::future<Result<internal::TierMergeOutput>> merge;
  std::vector<uint64_t> merge_run;  // the generations `merge` replaces
  // The error of a background merge that a Commit dropped: returned by the
  // next MaintainIndex.
  Status merge_error;
  uint64_t next_doc = 0;
  uint64_t next_segment = 1;

  const Location* Find(uint32_t doc) const {
    auto it = std::lower_bound(locations.begin(), locations.end(), doc,
                               [](const Location& l, uint32_t d) { return l.doc < d; });
    if (it == locations.end() || it->doc != doc) return nullptr;
    return &*it;
  }
};

namespace internal {

inline constexpr const char* kCatalogFile = "catalog.db";
inline constexpr const char* kDataDir = "data";

// Added in catalog format version 2 (also run to upgrade a version 1 catalog).
inline constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS similarity_added(doc INTEGER PRIMARY KEY);
CREATE INDEX IF NOT EXISTS similarities_by_b ON similarities(b);
)sql";

// Added in catalog format version 3: the tiers of the chunk index (the
// generations of their files), replacing meta index_file.
inline constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE IF NOT EXISTS index_tiers(generation INTEGER PRIMARY KEY);
)sql";

// Upgrades a catalog of version 1 or 2 (inside the caller's transaction):
// its one index file (meta index_file, which must be index-<generation>)
// becomes the one tier, and the format version becomes 3.
Status UpgradeToIndexTiers(SqliteDb* db, const std::string& dir);

// Also added in catalog format version 3: documents.format. Adds the column when
// the table lacks it (whatever the version says, so it can be run on any
// catalog), inside the caller's transaction.
Status AddFormatColumn(SqliteDb* db);

std::string SegmentFileName(uint64_t segment);   // "data/seg-<n>.nds"
std::string IndexFileName(uint64_t generation);  // "data/index-<g>.ndi"
// Opens a tier file this process has just written (and checked as it wrote
// it) as a mapping, so the writer keeps no heap copy of the index and shares
// the page cache with the views; no checksum pass over the bytes.
Result<ChunkIndex> OpenWrittenTier(const std::filesystem::path& file);
// Writes `merged` to `file` (collection-relative name already resolved) and
// returns that file's mapping (OpenWrittenTier).
Result<ChunkIndex> WriteMappedTier(const ChunkIndex& merged, const std::filesystem::path& file,
                                   Env* env);
std::string ContentHash(std::string_view text);  // 16 hex digits, XXH3-64

inline constexpr const char* kMergeFileName = "index-merge.ndi";  // in kDataDir

// The first of the tiers [start, n) of `index` that one file should replace
// (TierMergeStart), or n when nothing needs rewriting: `last_is_new` (the
// last tier is a commit's, still to be written) asks for start <= n - 1.
size_t TiersToRewrite(const TieredChunkIndex& index, bool last_is_new, uint64_t ratio);
// Replaces the catalog's list of index tiers (inside the caller's
// transaction).
Status WriteIndexTiers(SqliteDb* db, std::span<const uint64_t> tiers);
// Unlinks the files of tiers in `before` that are not in `after`.
void RemoveReplacedTiers(std::span<const uint64_t> before, std::span<const uint64_t> after,
                         const std::string& dir, Env* env);

// The largest document number a collection issues (kNoDocument is reserved).
inline constexpr uint64_t kMaxDocumentNumber = 0xfffffffeull;

// The unsigned decimal `text`, at most `max`; DataLoss naming the catalog's
// meta key `what` otherwise (a catalog's values are never trusted).
Result<uint64_t> ParseCatalogCount(const std::string& text, const std::string& what,
                                   uint64_t max = UINT64_MAX);

// Meta table access.
Result<std::string> ReadMeta(SqliteDb* db, const std::string& key);
Status WriteMeta(SqliteDb* db, const std::string& key, const std::string& value);

}  // namespace internal
}  // namespace neardup

#endif  // NEARDUP_STORE_COLLECTION_IMPL_H_
