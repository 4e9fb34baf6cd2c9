// Collection: create, open, reads, stats and verification. Commits,
// compaction and similarity storage are in collection_commit.cc.
#include "neardup/collection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "index/chunk_index_io.h"
#include "store/collection_impl.h"
#include "util/json_writer.h"

namespace neardup {
namespace fs = std::filesystem;
using internal::ReadMeta;
using internal::SqliteDb;
using internal::SqliteTransaction;

namespace internal {

std::string SegmentFileName(uint64_t segment) {
  return std::string(kDataDir) + "/seg-" + std::to_string(segment) + ".nds";
}

std::string IndexFileName(uint64_t generation) {
  return std::string(kDataDir) + "/index-" + std::to_string(generation) + ".ndi";
}

Result<ChunkIndex> OpenWrittenTier(const fs::path& file) {
  return ChunkIndex::Open(file.string(), {.verify_checksum = false});
}

Result<ChunkIndex> WriteMappedTier(const ChunkIndex& merged, const fs::path& file, Env* env) {
  NEARDUP_RETURN_IF_ERROR(merged.WriteFile(file, env));
  return OpenWrittenTier(file);
}

std::string ContentHash(std::string_view text) {
  return Hex64(XXH3_64bits(text.data(), text.size()));
}

Result<uint64_t> ParseCatalogCount(const std::string& text, const std::string& what, uint64_t max) {
  uint64_t value = 0;
  if (text.empty() || text.size() > 19) {
    return DataLossError("catalog meta " + what + " is invalid: '" + text.substr(0, 40) + "'");
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return DataLossError("catalog meta " + what + " is invalid: '" + text.substr(0, 40) + "'");
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > max) {
    return DataLossError("catalog meta " + what + " (" + text + ") exceeds its limit (" +
                         std::to_string(max) + ")");
  }
  return value;
}

Status UpgradeToIndexTiers(SqliteDb* db, const std::string& dir) {
  NEARDUP_RETURN_IF_ERROR(db->Exec(kSchemaV3));
  NEARDUP_ASSIGN_OR_RETURN(std::string generation_text, ReadMeta(db, "generation"));
  NEARDUP_ASSIGN_OR_RETURN(uint64_t generation, ParseCatalogCount(generation_text, "generation"));
  NEARDUP_ASSIGN_OR_RETURN(std::string index_file, ReadMeta(db, "index_file"));
  if (index_file != IndexFileName(generation)) {
    return DataLossError("collection " + dir + ": catalog meta index_file '" +
                         index_file.substr(0, 80) + "' is not " + IndexFileName(generation));
  }
  NEARDUP_ASSIGN_OR_RETURN(auto insert,
                           db->Prepare("INSERT OR IGNORE INTO index_tiers(generation) VALUES(?)"));
  insert.Bind(1, static_cast<int64_t>(generation));
  NEARDUP_RETURN_IF_ERROR(insert.Run());
  NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM meta WHERE key = 'index_file'"));
  return WriteMeta(db, "format_version", "3");
}

Status AddFormatColumn(SqliteDb* db) {
  NEARDUP_ASSIGN_OR_RETURN(SqliteStatement columns, db->Prepare("PRAGMA table_info(documents)"));
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, columns.Step());
    if (!row) break;
    if (columns.Text(1) == "format") return Status::Ok();
  }
  columns.Reset();
  return db->Exec("ALTER TABLE documents ADD COLUMN format TEXT NOT NULL DEFAULT ''");
}

Result<std::string> ReadMeta(SqliteDb* db, const std::string& key) {
  NEARDUP_ASSIGN_OR_RETURN(SqliteStatement select,
                           db->Prepare("SELECT value FROM meta WHERE key = ?"));
  select.Bind(1, key);
  NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return NotFoundError("catalog " + db->path() + " has no meta key " + key);
  std::string value = select.Text(0);
  select.Reset();
  return value;
}

Status WriteMeta(SqliteDb* db, const std::string& key, const std::string& value) {
  NEARDUP_ASSIGN_OR_RETURN(SqliteStatement upsert,
                           db->Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)"));
  upsert.Bind(1, key).Bind(2, value);
  return upsert.Run();
}

}  // namespace internal

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents(
  doc INTEGER PRIMARY KEY,
  external_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  num_chunks INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  added_at INTEGER NOT NULL,
  modified_at INTEGER NOT NULL,
  segment INTEGER NOT NULL,
  row INTEGER NOT NULL);
CREATE TABLE segments(
  segment INTEGER PRIMARY KEY,
  file TEXT NOT NULL,
  num_docs INTEGER NOT NULL,
  bytes INTEGER NOT NULL);
CREATE TABLE similarities(
  a INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  b INTEGER NOT NULL,
  a_in_b REAL NOT NULL,
  b_in_a REAL NOT NULL,
  PRIMARY KEY(a, rank)) WITHOUT ROWID;
CREATE TABLE similarity_dirty(doc INTEGER PRIMARY KEY);
)sql";

DocumentInfo ReadDocumentInfo(const internal::SqliteStatement& s) {
  DocumentInfo info;
  info.doc = static_cast<uint32_t>(s.Int(0));
  info.id = s.Text(1);
  info.name = s.Text(2);
  info.num_chunks = static_cast<uint32_t>(s.Int(3));
  info.content_hash = s.Text(4);
  info.added_at = s.Int(5);
  info.modified_at = s.Int(6);
  info.format = s.Text(7);
  return info;
}

// The columns ReadDocumentInfo reads, for a catalog of `format_version`
// (a version 2 catalog opened read-only has no format column: "").
std::string DocumentColumns(uint64_t format_version) {
  return std::string("doc, external_id, name, num_chunks, content_hash, added_at, modified_at, ") +
         (format_version >= 3 ? "format" : "''");
}

}  // namespace

Collection::Impl::~Impl() {
  if (db != nullptr) EndRead();
  db.reset();
  lock.reset();  // after the catalog is closed
}

Collection::~Collection() {
  // A running background merge is waited for and installed (as LevelDB's
  // close waits for its compaction): its work is not lost when a process
  // commits once and exits. Errors leave the last commit, which is durable.
  if (impl_ != nullptr && impl_->writable) impl_->FinishMerge(this, true).IgnoreError();
}

Status Collection::Create(const std::string& dir, const Recipe& recipe,
                          const CollectionOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateRecipe(recipe));
  if (IsDigestRecipe(recipe)) {
    // Refused here rather than at the first add: a collection is built on
    // chunk sets, which the digest route does not compute.
    return InvalidArgumentError("a collection needs chunk sets, and hash \"" +
                                std::string(FeatureHashName(recipe.hash)) +
                                "\" (a digest) computes SimHash only");
  }
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return AlreadyExistsError("cannot create a collection in " + dir + ": it is not empty");
  }
  fs::create_directories(fs::path(dir) / internal::kDataDir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());

  const std::string recipe_json = CanonicalJson(recipe);
  {
    NEARDUP_ASSIGN_OR_RETURN(auto out,
                             internal::AtomicFileWriter::Create((fs::path(dir) / "recipe.json")));
    NEARDUP_RETURN_IF_ERROR(out->Append(recipe_json + "\n"));
    NEARDUP_RETURN_IF_ERROR(out->Commit());
  }

  NEARDUP_ASSIGN_OR_RETURN(
      std::unique_ptr<SqliteDb> db,
      SqliteDb::Open(fs::path(dir) / internal::kCatalogFile, /*create=*/true, /*read_only=*/false));
  NEARDUP_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db.get()));
  NEARDUP_RETURN_IF_ERROR(db->Exec(kSchema));
  NEARDUP_RETURN_IF_ERROR(db->Exec(internal::kSchemaV2));
  NEARDUP_RETURN_IF_ERROR(db->Exec(internal::kSchemaV3));  // no tier: the empty index
  NEARDUP_RETURN_IF_ERROR(internal::AddFormatColumn(db.get()));
  const std::pair<const char*, std::string> meta[] = {
      {"format_version", std::to_string(kCollectionFormatVersion)},
      {"recipe", recipe_json},
      {"recipe_id", RecipeId(recipe)},
      {"recipe_name", recipe.name},
      {"max_document_frequency", std::to_string(options.max_document_frequency)},
      {"store_texts", options.store_texts ? "1" : "0"},
      {"next_doc", "0"},
      {"next_segment", "1"},
      {"generation", "0"},
  };
  for (const auto& [key, value] : meta) {
    NEARDUP_RETURN_IF_ERROR(internal::WriteMeta(db.get(), key, value));
  }
  return txn->Commit();
}

Status Collection::CheckRecipe(const Recipe& recipe) const {
  const std::string id = RecipeId(recipe);
  if (id == recipe_id_) return Status::Ok();
  return FailedPreconditionError("recipe " + id + " (" + recipe.name +
                                 ") is not the recipe of collection " + dir_ + " (" + recipe_id_ +
                                 ", " + recipe_.name + ")");
}

Result<std::optional<DocumentInfo>> Collection::FindDocument(std::string_view id) const {
  NEARDUP_ASSIGN_OR_RETURN(auto select,
                           impl_->db->Prepare("SELECT " + DocumentColumns(impl_->format_version) +
                                              " FROM documents WHERE external_id = ?"));
  select.Bind(1, id);
  NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return std::optional<DocumentInfo>();
  DocumentInfo info = ReadDocumentInfo(select);
  select.Reset();
  return std::optional<DocumentInfo>(std::move(info));
}

Result<std::vector<DocumentInfo>> Collection::ListDocuments() const {
  NEARDUP_ASSIGN_OR_RETURN(auto select,
                           impl_->db->Prepare("SELECT " + DocumentColumns(impl_->format_version) +
                                              " FROM documents ORDER BY doc"));
  std::vector<DocumentInfo> docs;
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    docs.push_back(ReadDocumentInfo(select));
  }
  return docs;
}

Result<std::map<uint32_t, std::string>> Collection::ExternalIds(
    std::span<const uint32_t> docs) const {
  NEARDUP_ASSIGN_OR_RETURN(auto select,
                           impl_->db->Prepare("SELECT external_id FROM documents WHERE doc = ?"));
  std::map<uint32_t, std::string> ids;
  for (uint32_t doc : docs) {
    if (ids.count(doc)) continue;
    select.Bind(1, int64_t{doc});
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    ids[doc] = row ? select.Text(0) : std::string();
    select.Reset();
  }
  return ids;
}

Result<std::map<uint32_t, DocumentInfo>> Collection::FindDocuments(
    std::span<const uint32_t> docs) const {
  NEARDUP_ASSIGN_OR_RETURN(auto select,
                           impl_->db->Prepare("SELECT " + DocumentColumns(impl_->format_version) +
                                              " FROM documents WHERE doc = ?"));
  std::map<uint32_t, DocumentInfo> infos;
  for (uint32_t doc : docs) {
    if (infos.count(doc)) continue;
    select.Bind(1, int64_t{doc});
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    if (row) infos[doc] = ReadDocumentInfo(select);
    select.Reset();
  }
  return infos;
}

std::vector<uint32_t> Collection::LiveDocuments() const {
  std::vector<uint32_t> docs;
  docs.reserve(impl_->locations.size());
  for (const Impl::Location& at : impl_->locations) docs.push_back(at.doc);
  return docs;
}

Result<std::span<const uint32_t>> Collection::Chunks(uint32_t doc) const {
  const Impl::Location* at = impl_->Find(doc);
  if (at == nullptr)
    return NotFoundError("document number " + std::to_string(doc) + " is not live");
  const internal::SegmentReader& segment = *impl_->segments.at(at->segment);
  NEARDUP_RETURN_IF_ERROR(segment.VerifyArrays());
  return segment.chunks(at->row);
}

Result<uint64_t> Collection::SimHash(uint32_t doc) const {
  const Impl::Location* at = impl_->Find(doc);
  if (at == nullptr)
    return NotFoundError("document number " + std::to_string(doc) + " is not live");
  const internal::SegmentReader& segment = *impl_->segments.at(at->segment);
  NEARDUP_RETURN_IF_ERROR(segment.VerifyArrays());
  return segment.simhash(at->row);
}

Result<std::string> Collection::Text(uint32_t doc) const {
  const Impl::Location* at = impl_->Find(doc);
  if (at == nullptr)
    return NotFoundError("document number " + std::to_string(doc) + " is not live");
  if (!store_texts_) return NotFoundError("collection " + dir_ + " does not store texts");
  const internal::SegmentReader& segment = *impl_->segments.at(at->segment);
  NEARDUP_RETURN_IF_ERROR(segment.VerifyArrays());
  return segment.Text(at->row);
}

uint64_t Collection::generation() const { return impl_->generation; }

Result<CollectionStats> Collection::Stats() const {
  CollectionStats s;
  s.generation = impl_->generation;
  s.max_document_frequency = max_document_frequency_;
  s.segments = impl_->segments.size();
  for (const auto& [id, segment] : impl_->segments) {
    s.segment_rows += segment->num_docs();
    s.segment_bytes += segment->file_bytes();
  }
  s.documents = LiveDocuments().size();
  s.empty_documents = s.documents - index_.num_documents();
  s.dead_rows = s.segment_rows - s.documents;
  s.index_keys = index_.CountKeys();
  s.index_postings = index_.num_postings();
  s.index_tiers = index_.num_tiers();
  s.index_dead_postings = index_.num_dead_postings();
  std::error_code ec;
  for (uint64_t tier : impl_->index_tiers) {
    const uint64_t size = fs::file_size(fs::path(dir_) / internal::IndexFileName(tier), ec);
    if (!ec) s.index_bytes += size;
  }
  s.boilerplate_keys =
      max_document_frequency_ == 0 ? 0 : index_.CountKeysAbove(max_document_frequency_);
  for (const char* file : {"catalog.db", "catalog.db-wal"}) {
    uint64_t size = fs::file_size(fs::path(dir_) / file, ec);
    if (!ec) s.catalog_bytes += size;
  }
  s.memory_bytes = index_.MemoryBytes() + impl_->locations.size() * sizeof(Impl::Location);
  NEARDUP_ASSIGN_OR_RETURN(auto count_rows,
                           impl_->db->Prepare("SELECT COUNT(*) FROM similarities"));
  NEARDUP_ASSIGN_OR_RETURN(bool row, count_rows.Step());
  if (row) s.similarity_rows = static_cast<uint64_t>(count_rows.Int(0));
  count_rows.Reset();
  NEARDUP_ASSIGN_OR_RETURN(auto count_dirty,
                           impl_->db->Prepare("SELECT COUNT(*) FROM similarity_dirty"));
  NEARDUP_ASSIGN_OR_RETURN(row, count_dirty.Step());
  if (row) s.similarity_dirty = static_cast<uint64_t>(count_dirty.Int(0));
  count_dirty.Reset();
  if (impl_->format_version >= 2) {  // a version 1 catalog opened read-only has no such table
    NEARDUP_ASSIGN_OR_RETURN(auto count_added,
                             impl_->db->Prepare("SELECT COUNT(*) FROM similarity_added"));
    NEARDUP_ASSIGN_OR_RETURN(row, count_added.Step());
    if (row) s.similarity_added = static_cast<uint64_t>(count_added.Int(0));
    count_added.Reset();
  }
  return s;
}

Status Collection::Verify() const {
  for (const auto& [id, segment] : impl_->segments) {
    NEARDUP_RETURN_IF_ERROR(segment->VerifyChecksum());
  }
  // The mapped tiers of this view (their files may be unlinked by now).
  NEARDUP_RETURN_IF_ERROR(index_.VerifyChecksum());
  NEARDUP_ASSIGN_OR_RETURN(std::vector<DocumentInfo> docs, ListDocuments());
  std::vector<ChunkDocument> live;
  for (const DocumentInfo& info : docs) {
    NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, Chunks(info.doc));
    if (chunks.size() != info.num_chunks) {
      return DataLossError("collection " + dir_ + ": document " + info.id + " has " +
                           std::to_string(chunks.size()) + " chunks in its segment, " +
                           std::to_string(info.num_chunks) + " in the catalog");
    }
    live.push_back({info.doc, chunks});
  }
  if (docs.size() != LiveDocuments().size()) {
    return DataLossError("collection " + dir_ + ": catalog and locations disagree");
  }
  Result<ChunkIndex> rebuilt = ChunkIndex::Build(live);
  if (!rebuilt.ok()) return DataLossError("collection " + dir_ + ": " + rebuilt.status().message());
  // The tiers with their dead documents masked must be exactly the index
  // of the live documents.
  Result<ChunkIndex> merged = index_.Merged();
  if (!merged.ok()) return DataLossError("collection " + dir_ + ": " + merged.status().message());
  if (!rebuilt->SameContents(*merged)) {
    return DataLossError("collection " + dir_ +
                         ": the chunk index differs from one rebuilt from the segments");
  }
  return Status::Ok();
}

}  // namespace neardup
