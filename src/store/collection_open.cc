// Collection: opening, and moving a reader to the latest commit (Refresh).
//
// A reader's view of a collection is one commit: the catalog as of one
// SQLite read transaction, and the index and segment files that catalog
// names. A writer may commit (and delete the files of the commit before)
// between the moment a reader reads the catalog and the moment it opens a
// file; the reader then finds a file gone, ends its transaction and tries
// again on the newer commit. Once open, files are memory-mapped and stay
// readable after a writer unlinks them (POSIX keeps an unlinked file until
// its last mapping goes), so a pinned view never loses a file: the set of
// live files is, in effect, kept by the kernel's reference counts, across
// processes as well as threads.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "neardup/collection.h"
#include "store/collection_impl.h"

namespace neardup {
namespace fs = std::filesystem;
using internal::ReadMeta;
using internal::SqliteDb;

namespace {

// Attempts before a file named by the catalog that keeps disappearing is an
// error (each failed attempt means a writer committed in between).
constexpr int kMaxLoadAttempts = 100;

int64_t SystemClock() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<uint64_t> ReadCount(SqliteDb* db, const std::string& key, uint64_t max = UINT64_MAX) {
  NEARDUP_ASSIGN_OR_RETURN(std::string text, ReadMeta(db, key));
  return internal::ParseCatalogCount(text, key, max);
}

// What one catalog read transaction says, with the files it names opened.
struct View {
  uint64_t format_version = 0;
  Recipe recipe;
  uint32_t max_document_frequency = 0;
  bool store_texts = true;
  uint64_t next_doc = 0;
  uint64_t next_segment = 1;
  uint64_t generation = 0;
  std::vector<uint64_t> index_tiers;
  std::map<uint32_t, std::shared_ptr<const internal::SegmentReader>> segments;
  std::vector<internal::DocumentLocation> locations;
  TieredChunkIndex index;
};

// The view a collection holds now, whose readers of unchanged files the
// next view reuses.
struct PreviousView {
  const std::map<uint32_t, std::shared_ptr<const internal::SegmentReader>>* segments;
  uint64_t generation;
  const std::vector<uint64_t>* index_tiers;
  const TieredChunkIndex* index;
};

// The generations whose index-G.ndi files are the tiers of the index,
// oldest first. Version 3 lists them in index_tiers; versions 1 and 2 name
// one file, index_file.
Status ReadIndexTiers(SqliteDb* db, const std::string& dir, View* v) {
  if (v->format_version < 3) {
    NEARDUP_ASSIGN_OR_RETURN(std::string index_file, ReadMeta(db, "index_file"));
    // File names are derived, never taken from the catalog: a stored name is
    // only checked against the one its number gives (so '../x' or '/x' is
    // refused).
    if (index_file != internal::IndexFileName(v->generation)) {
      return DataLossError("collection " + dir + ": catalog meta index_file '" +
                           index_file.substr(0, 80) + "' is not " +
                           internal::IndexFileName(v->generation));
    }
    v->index_tiers = {v->generation};
    return Status::Ok();
  }
  NEARDUP_ASSIGN_OR_RETURN(auto select,
                           db->Prepare("SELECT generation FROM index_tiers ORDER BY generation"));
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    const int64_t tier = select.Int(0);
    if (tier < 0 || static_cast<uint64_t>(tier) > v->generation) {
      return DataLossError("collection " + dir + ": catalog index tier " + std::to_string(tier) +
                           " is outside [0, generation " + std::to_string(v->generation) + "]");
    }
    v->index_tiers.push_back(static_cast<uint64_t>(tier));
  }
  return Status::Ok();
}

// Reads the view inside the open transaction of `db`. `previous` may be null.
Status ReadView(SqliteDb* db, const std::string& dir, bool verify_index,
                const PreviousView* previous, View* v) {
  Result<std::string> version_text = ReadMeta(db, "format_version");
  if (!version_text.ok()) {
    return DataLossError(
        dir + " is not a complete neardup collection: " + version_text.status().message());
  }
  NEARDUP_ASSIGN_OR_RETURN(v->format_version,
                           internal::ParseCatalogCount(*version_text, "format_version"));
  if (v->format_version > static_cast<uint64_t>(kCollectionFormatVersion)) {
    return FailedPreconditionError(
        "collection " + dir + " has format version " + std::to_string(v->format_version) +
        ", newer than this neardup supports (" + std::to_string(kCollectionFormatVersion) + ")");
  }
  NEARDUP_ASSIGN_OR_RETURN(std::string recipe_json, ReadMeta(db, "recipe"));
  Result<Recipe> recipe = ParseRecipeJson(recipe_json);
  if (!recipe.ok()) return recipe.status().WithContext("recipe of collection " + dir);
  v->recipe = std::move(recipe).value();
  NEARDUP_ASSIGN_OR_RETURN(v->recipe.name, ReadMeta(db, "recipe_name"));
  // Every value of the catalog is range-checked before it is used: a
  // damaged or hostile catalog gives DataLoss, never an allocation sized by
  // it or a path outside the collection.
  NEARDUP_ASSIGN_OR_RETURN(uint64_t cap, ReadCount(db, "max_document_frequency", UINT32_MAX));
  v->max_document_frequency = static_cast<uint32_t>(cap);
  NEARDUP_ASSIGN_OR_RETURN(uint64_t store_texts, ReadCount(db, "store_texts", 1));
  v->store_texts = store_texts != 0;
  NEARDUP_ASSIGN_OR_RETURN(v->next_doc, ReadCount(db, "next_doc", internal::kMaxDocumentNumber));
  NEARDUP_ASSIGN_OR_RETURN(v->next_segment, ReadCount(db, "next_segment", UINT32_MAX));
  NEARDUP_ASSIGN_OR_RETURN(v->generation, ReadCount(db, "generation"));
  NEARDUP_RETURN_IF_ERROR(ReadIndexTiers(db, dir, v));

  {
    NEARDUP_ASSIGN_OR_RETURN(auto select,
                             db->Prepare("SELECT segment, file, num_docs FROM segments"));
    while (true) {
      NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      const int64_t id = select.Int(0);
      if (id < 1 || static_cast<uint64_t>(id) >= v->next_segment) {
        return DataLossError("collection " + dir + ": catalog segment number " +
                             std::to_string(id) + " is outside [1, next_segment " +
                             std::to_string(v->next_segment) + ")");
      }
      const std::string file = select.Text(1);
      const std::string expected = internal::SegmentFileName(static_cast<uint64_t>(id));
      if (file != expected) {
        return DataLossError("collection " + dir + ": catalog names the file of segment " +
                             std::to_string(id) + " '" + file.substr(0, 80) + "', not " + expected);
      }
      // Segment numbers are never reused for other contents, so an open
      // reader of the same number is the same file.
      std::shared_ptr<const internal::SegmentReader> reader;
      if (previous != nullptr) {
        auto it = previous->segments->find(static_cast<uint32_t>(id));
        if (it != previous->segments->end()) reader = it->second;
      }
      if (reader == nullptr) {
        NEARDUP_ASSIGN_OR_RETURN(reader, internal::SegmentReader::Open(fs::path(dir) / expected));
      }
      if (select.Int(2) != static_cast<int64_t>(reader->num_docs())) {
        return DataLossError("collection " + dir + ": segment " + expected + " holds " +
                             std::to_string(reader->num_docs()) + " rows, the catalog says " +
                             std::to_string(select.Int(2)));
      }
      v->segments[static_cast<uint32_t>(id)] = std::move(reader);
    }
  }
  {
    NEARDUP_ASSIGN_OR_RETURN(auto select,
                             db->Prepare("SELECT doc, segment, row FROM documents ORDER BY doc"));
    while (true) {
      NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      const int64_t doc = select.Int(0);
      const int64_t segment = select.Int(1);
      const int64_t seg_row = select.Int(2);
      auto it = segment > 0 && segment <= UINT32_MAX
                    ? v->segments.find(static_cast<uint32_t>(segment))
                    : v->segments.end();
      if (doc < 0 || static_cast<uint64_t>(doc) >= v->next_doc || it == v->segments.end() ||
          seg_row < 0 || static_cast<uint64_t>(seg_row) >= it->second->num_docs()) {
        return DataLossError("collection " + dir + ": catalog row for document " +
                             std::to_string(doc) + " (segment " + std::to_string(segment) +
                             ", row " + std::to_string(seg_row) +
                             ") is out of range or points at a missing segment row");
      }
      const uint32_t stored = it->second->doc(static_cast<size_t>(seg_row));
      if (stored != static_cast<uint64_t>(doc)) {
        return DataLossError("segment " + it->second->path() + " is corrupt: row " +
                             std::to_string(seg_row) + " holds document " + std::to_string(stored) +
                             ", the catalog says " + std::to_string(doc));
      }
      v->locations.push_back({static_cast<uint32_t>(doc), static_cast<uint32_t>(segment),
                              static_cast<uint32_t>(seg_row)});
    }
  }
  // (The previous view lists its tiers in document order, the catalog by
  // generation: compare them as sets.)
  if (previous != nullptr && previous->generation == v->generation &&
      std::is_permutation(previous->index_tiers->begin(), previous->index_tiers->end(),
                          v->index_tiers.begin(), v->index_tiers.end())) {
    v->index = *previous->index;              // the same files, the same live documents
    v->index_tiers = *previous->index_tiers;  // in the index's (document) order
    return Status::Ok();
  }
  // Tier files are immutable (index-G is written once, by commit G): an
  // open reader of the same generation is the same file.
  std::map<uint64_t, ChunkIndex> open_tiers;
  if (previous != nullptr) {
    for (size_t t = 0; t < previous->index_tiers->size(); ++t) {
      open_tiers.emplace((*previous->index_tiers)[t], previous->index->tiers()[t]);
    }
  }
  std::vector<ChunkIndex> tiers;
  for (uint64_t tier : v->index_tiers) {
    auto it = open_tiers.find(tier);
    if (it != open_tiers.end()) {
      tiers.push_back(it->second);
      continue;
    }
    // The structural checks (O(keys)) always; the checksum (one read of the
    // file) by default, and always for a writer, which merges tiers.
    NEARDUP_ASSIGN_OR_RETURN(ChunkIndex index,
                             ChunkIndex::Open(fs::path(dir) / internal::IndexFileName(tier),
                                              {.verify_checksum = verify_index}));
    tiers.push_back(std::move(index));
  }
  // Tiers in the order of their documents (TieredChunkIndex's invariant):
  // a merged tier is named by the generation that installed it, newer than
  // the tiers committed above it while it was being merged.
  {
    std::vector<size_t> order(tiers.size());
    for (size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return tiers[a].first_doc() < tiers[b].first_doc();
    });
    std::vector<ChunkIndex> sorted;
    std::vector<uint64_t> generations;
    for (size_t t : order) {
      sorted.push_back(std::move(tiers[t]));
      generations.push_back(v->index_tiers[t]);
    }
    tiers = std::move(sorted);
    v->index_tiers = std::move(generations);
  }
  std::vector<uint32_t> live;
  live.reserve(v->locations.size());
  for (const internal::DocumentLocation& at : v->locations) live.push_back(at.doc);
  Result<TieredChunkIndex> index = TieredChunkIndex::Create(std::move(tiers), live);
  if (!index.ok()) return index.status().WithContext("collection " + dir);
  v->index = std::move(index).value();
  return Status::Ok();
}

}  // namespace

void Collection::Impl::EndRead() {
  if (read_open) db->Exec("COMMIT").IgnoreError();
  read_open = false;
}

Status Collection::Impl::LoadLatest(Collection* c) {
  const bool first = !loaded;
  Status status;
  // The manifest (generation, next segment) of the last attempt that found
  // a file missing: the same manifest twice means the file is really gone.
  std::pair<uint64_t, uint64_t> missing_at{UINT64_MAX, UINT64_MAX};
  for (int attempt = 0; attempt < kMaxLoadAttempts; ++attempt) {
    EndRead();
    NEARDUP_RETURN_IF_ERROR(db->Exec("BEGIN"));
    read_open = true;
    View view;
    const PreviousView previous{&segments, generation, &index_tiers, &c->index_};
    status =
        ReadView(db.get(), c->dir_, verify_index || writable, first ? nullptr : &previous, &view);
    if (status.ok()) {
      format_version = view.format_version;
      c->recipe_ = std::move(view.recipe);
      c->recipe_id_ = RecipeId(c->recipe_);
      c->max_document_frequency_ = view.max_document_frequency;
      c->store_texts_ = view.store_texts;
      next_doc = view.next_doc;
      next_segment = view.next_segment;
      generation = view.generation;
      index_tiers = std::move(view.index_tiers);
      segments = std::move(view.segments);
      locations = std::move(view.locations);
      c->index_ = std::move(view.index);
      loaded = true;
      // A writer reads its own state from memory; only a reader pins.
      if (writable) EndRead();
      return Status::Ok();
    }
    if (status.code() != StatusCode::kNotFound) break;
    const std::pair<uint64_t, uint64_t> manifest{view.generation, view.next_segment};
    if (manifest == missing_at) break;
    missing_at = manifest;
  }
  EndRead();
  return status;
}

Result<std::unique_ptr<Collection>> Collection::Open(const std::string& dir,
                                                     const OpenOptions& options) {
  const fs::path catalog = fs::path(dir) / internal::kCatalogFile;
  std::error_code ec;
  if (!fs::exists(catalog, ec)) {
    return NotFoundError(dir + " is not a neardup collection (no " +
                         std::string(internal::kCatalogFile) + ")");
  }
  std::unique_ptr<Collection> c(new Collection());
  c->dir_ = dir;
  c->impl_ = std::make_unique<Impl>();
  Impl& impl = *c->impl_;
  impl.writable = options.mode == Mode::kReadWrite;
  impl.verify_index = options.verify_index;
  impl.clock = options.clock ? options.clock : SystemClock;
  impl.env = options.env != nullptr ? options.env : Env::Default();
  if (options.index_tier_ratio < 2) {
    return InvalidArgumentError("index_tier_ratio (" + std::to_string(options.index_tier_ratio) +
                                ") must be at least 2");
  }
  impl.index_tier_ratio = options.index_tier_ratio;
  if (options.max_index_tiers < 2) {
    return InvalidArgumentError("max_index_tiers (" + std::to_string(options.max_index_tiers) +
                                ") must be at least 2");
  }
  impl.max_index_tiers = options.max_index_tiers;
  impl.background_merges = options.background_index_merges;
  if (impl.writable) {
    Result<std::unique_ptr<FileLock>> lock = impl.env->LockFile((fs::path(dir) / "LOCK").string());
    if (!lock.ok()) {
      if (lock.status().code() != StatusCode::kFailedPrecondition) return lock.status();
      return FailedPreconditionError("collection " + dir +
                                     " is open for writing by another process");
    }
    impl.lock = std::move(lock).value();
  }
  NEARDUP_ASSIGN_OR_RETURN(impl.db, SqliteDb::Open(catalog, false, !impl.writable));
  SqliteDb* db = impl.db.get();

  if (impl.writable) {
    NEARDUP_ASSIGN_OR_RETURN(auto txn, internal::SqliteTransaction::Begin(db));
    Result<std::string> version_text = ReadMeta(db, "format_version");
    if (!version_text.ok()) {
      return DataLossError(
          dir + " is not a complete neardup collection: " + version_text.status().message());
    }
    NEARDUP_ASSIGN_OR_RETURN(uint64_t version,
                             internal::ParseCatalogCount(*version_text, "format_version"));
    if (version < 2) {
      // Upgrade: version 1's dirty list (every document sharing a counted
      // chunk with a changed one, the new ones included) is a superset of
      // what version 2 recomputes, so it stays valid as it is.
      NEARDUP_RETURN_IF_ERROR(db->Exec(internal::kSchemaV2));
    }
    if (version < 3) {
      // Upgrade: documents added before keep format "" (and their name), and
      // the one index file becomes the one tier (which sets version 3).
      NEARDUP_RETURN_IF_ERROR(internal::AddFormatColumn(db));
      NEARDUP_RETURN_IF_ERROR(internal::UpgradeToIndexTiers(db, dir));
    }
    NEARDUP_RETURN_IF_ERROR(txn->Commit());
  }
  NEARDUP_RETURN_IF_ERROR(impl.LoadLatest(c.get()));

  if (impl.writable) {
    // Files of commits that never reached the manifest.
    std::set<std::string> keep;
    for (uint64_t tier : impl.index_tiers) keep.insert(internal::IndexFileName(tier));
    for (const auto& [id, segment] : impl.segments) {
      keep.insert(fs::relative(segment->path(), dir).string());
    }
    bool removed = false;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / internal::kDataDir, ec)) {
      std::string name = (fs::path(internal::kDataDir) / entry.path().filename()).string();
      if (keep.count(name) == 0) {
        impl.env->RemoveFile(entry.path().string()).IgnoreError();
        removed = true;
      }
    }
    if (removed) {
      NEARDUP_RETURN_IF_ERROR(
          internal::FsyncDirectory(fs::path(dir) / internal::kDataDir, impl.env));
    }
    // A merge the last writer left to do (it installs the running one when
    // it closes, not the ones the policy asks for next).
    impl.StartMerge(c.get());
  }
  return c;
}

Status Collection::Refresh() {
  // A writer's state is always its own last commit.
  if (impl_->writable) return Status::Ok();
  return impl_->LoadLatest(this);
}

}  // namespace neardup
