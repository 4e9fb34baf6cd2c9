// Collection writes: the commit protocol (segment and index files first,
// then one catalog transaction), compaction and the similarity table.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "neardup/collection.h"
#include "neardup/containment.h"
#include "store/collection_impl.h"

namespace neardup {
namespace fs = std::filesystem;
using internal::FileCleanup;
using internal::RemoveReplacedTiers;
using internal::SqliteTransaction;
using internal::TiersToRewrite;
using internal::WriteIndexTiers;
using internal::WriteMeta;

namespace {

// How far the catalog's next_doc may run ahead of the numbers in use before
// a commit stops trusting it (see Commit). Removing more than this many of
// the newest documents lets later numbers go back below the old counter.
constexpr uint64_t kMaxDocumentNumberGap = uint64_t{1} << 20;

Status RequireWritable(bool writable, const std::string& dir) {
  if (writable) return Status::Ok();
  return FailedPreconditionError("collection " + dir + " was opened read-only");
}

}  // namespace

Result<CommitResult> Collection::Commit(std::span<const IncomingDocument> upserts,
                                        std::span<const std::string> removals) {
  Impl& impl = *impl_;
  NEARDUP_RETURN_IF_ERROR(RequireWritable(impl.writable, dir_));
  CommitResult result;
  result.generation = impl.generation;

  // The last occurrence of an id counts; new numbers follow input order.
  std::unordered_map<std::string_view, size_t> last;
  for (size_t i = 0; i < upserts.size(); ++i) last[upserts[i].id] = i;
  std::set<std::string_view> removed_ids(removals.begin(), removals.end());
  for (size_t i = 0; i < upserts.size(); ++i) {
    const IncomingDocument& d = upserts[i];
    if (last[d.id] != i) continue;
    if (removed_ids.count(d.id)) {
      return InvalidArgumentError("document " + d.id + " is both added and removed in one commit");
    }
    for (size_t j = 1; j < d.chunks.size(); ++j) {
      if (d.chunks[j - 1] >= d.chunks[j]) {
        return InvalidArgumentError("chunks of document " + d.id + " are not strictly ascending");
      }
    }
  }

  struct Pending {
    const IncomingDocument* doc;
    uint32_t number = 0;
    std::optional<DocumentInfo> old;  // set for a modification
    std::string content_hash;
  };
  std::vector<Pending> pending;
  std::vector<uint32_t> retired;  // old numbers of modified and removed documents
  for (size_t i = 0; i < upserts.size(); ++i) {
    const IncomingDocument& d = upserts[i];
    if (last[d.id] != i) continue;
    Pending p{&d, 0, std::nullopt, internal::ContentHash(d.text)};
    NEARDUP_ASSIGN_OR_RETURN(p.old, FindDocument(d.id));
    if (p.old.has_value() && p.old->content_hash == p.content_hash &&
        p.old->num_chunks == d.chunks.size()) {
      ++result.unchanged;
      continue;
    }
    if (p.old.has_value()) {
      retired.push_back(p.old->doc);
      ++result.modified;
    } else {
      ++result.added;
    }
    pending.push_back(std::move(p));
  }
  for (std::string_view id : removed_ids) {
    NEARDUP_ASSIGN_OR_RETURN(std::optional<DocumentInfo> info, FindDocument(id));
    if (!info.has_value()) {
      return NotFoundError("document " + std::string(id) + " is not in collection " + dir_);
    }
    retired.push_back(info->doc);
    ++result.removed;
  }
  if (pending.empty() && retired.empty()) return result;
  // A finished background merge is installed first (its own manifest
  // switch). Back-pressure: when this commit's tier would exceed
  // max_index_tiers, the commit merges the tiers written since the running
  // merge's run with its own (below), and waits for the running merge only
  // when those would still leave too many (the run reaches the bound). A
  // merge that failed is dropped here (redone later) and reported by
  // MaintainIndex.
  {
    // (A commit that only removes adds no tier.)
    const bool over = index_.num_tiers() + (pending.empty() ? 0 : 1) > impl.max_index_tiers;
    // (Without background merges the commit merges by the policy alone, which
    // may rewrite the run: it waits, as before.)
    const bool wait =
        over && (!impl.background_merges || impl.RunningMergeEnd() > impl.max_index_tiers - 1);
    Status merged = impl.FinishMerge(this, wait);
    if (!merged.ok()) impl.merge_error = std::move(merged);
  }
  // New numbers continue the counter, except where the catalog's counter
  // lies far beyond every number in use (the live documents and the index's
  // slots): the index holds a slot per number up to the largest, so a
  // damaged or hostile next_doc (4000000000) would make it allocate
  // gigabytes. Numbers above every live one and every index slot are free:
  // retired versions keep no similarity rows, and dead segment rows are
  // never looked up by number.
  uint64_t next_doc = impl.next_doc;
  {
    const uint64_t in_use =
        std::max<uint64_t>(impl.locations.empty() ? 0 : uint64_t{impl.locations.back().doc} + 1,
                           index_.num_doc_slots());
    if (next_doc > in_use + kMaxDocumentNumberGap) next_doc = in_use;
  }
  if (next_doc + pending.size() > internal::kMaxDocumentNumber) {
    return ResourceExhaustedError("collection " + dir_ + " has used all document numbers (" +
                                  std::to_string(internal::kMaxDocumentNumber) + ")");
  }

  const uint64_t generation = impl.generation + 1;
  const uint64_t segment_id = impl.next_segment;
  for (Pending& p : pending) p.number = static_cast<uint32_t>(next_doc++);

  FileCleanup cleanup{impl.env, {}};
  std::vector<ChunkDocument> added_docs;
  uint64_t segment_bytes = 0;
  if (!pending.empty()) {
    std::vector<internal::SegmentRow> rows;
    for (const Pending& p : pending) {
      rows.push_back({p.number, p.doc->chunks, p.doc->simhash, p.doc->text, {}});
      added_docs.push_back({p.number, p.doc->chunks});
    }
    const fs::path path = fs::path(dir_) / internal::SegmentFileName(segment_id);
    cleanup.paths.push_back(path);
    NEARDUP_ASSIGN_OR_RETURN(segment_bytes,
                             internal::WriteSegmentFile(path, rows, store_texts_, impl.env));
  }
  // The index: the new documents' postings become a new tier, merged with
  // the newest tiers (dropping dead postings) when the policy says so; the
  // retired documents are masked by the catalog's live list, so a removal
  // writes no index file. At most one file, index-<generation>, is written.
  std::vector<uint32_t> live_after;
  {
    std::set<uint32_t> gone(retired.begin(), retired.end());
    live_after.reserve(impl.locations.size() + pending.size());
    for (const Impl::Location& at : impl.locations) {
      if (gone.count(at.doc) == 0) live_after.push_back(at.doc);
    }
    // New numbers exceed every live one.
    for (const Pending& p : pending) live_after.push_back(p.number);
  }
  NEARDUP_ASSIGN_OR_RETURN(ChunkIndex added, ChunkIndex::Build(added_docs));
  std::vector<ChunkIndex> tiers(index_.tiers().begin(), index_.tiers().end());
  std::vector<uint64_t> tier_generations = impl.index_tiers;
  const bool new_tier = added.num_postings() > 0;
  if (new_tier) {
    tiers.push_back(std::move(added));
    tier_generations.push_back(generation);
  }
  NEARDUP_ASSIGN_OR_RETURN(TieredChunkIndex staged,
                           TieredChunkIndex::Create(std::move(tiers), live_after));
  const size_t num_staged = staged.num_tiers();
  // With background merges the commit writes its own tier only, unless the
  // tier count would pass max_index_tiers: then it merges the newest tiers
  // itself, as far as the policy says and at least down to the bound, but
  // never into a running merge's run (session 20: it waited for the whole
  // running merge, e.g. a server's idle full merge, seconds for 20k
  // documents): only the tiers written since, which the check above keeps
  // within the bound. Its file, index-<generation>, is written and synced
  // before the transaction as any commit's; the running merge is installed
  // later as usual (its run is still in the list).
  size_t rewrite_from = TiersToRewrite(staged, new_tier, impl.index_tier_ratio);
  if (impl.background_merges) {
    rewrite_from = std::max(rewrite_from, new_tier ? num_staged - 1 : num_staged);
    if (num_staged > impl.max_index_tiers) {
      rewrite_from = std::min(TiersToRewrite(staged, new_tier, impl.index_tier_ratio),
                              static_cast<size_t>(impl.max_index_tiers - 1));
      rewrite_from = std::max(rewrite_from, impl.RunningMergeEnd());
    }
  }
  std::vector<ChunkIndex> kept_tiers(staged.tiers().begin(),
                                     staged.tiers().begin() + static_cast<ptrdiff_t>(rewrite_from));
  std::vector<uint64_t> kept_generations(
      tier_generations.begin(), tier_generations.begin() + static_cast<ptrdiff_t>(rewrite_from));
  if (rewrite_from < num_staged) {
    NEARDUP_ASSIGN_OR_RETURN(ChunkIndex merged, staged.MergeTiers(rewrite_from, num_staged));
    if (merged.num_postings() > 0) {  // else every document of those tiers is gone
      const std::string index_file = internal::IndexFileName(generation);
      cleanup.paths.push_back(fs::path(dir_) / index_file);
      NEARDUP_ASSIGN_OR_RETURN(
          ChunkIndex mapped,
          internal::WriteMappedTier(merged, fs::path(dir_) / index_file, impl.env));
      kept_tiers.push_back(std::move(mapped));
      kept_generations.push_back(generation);
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(TieredChunkIndex after,
                           TieredChunkIndex::Create(std::move(kept_tiers), live_after));

  // Lists to recompute (only while a table exists): documents sharing a
  // chunk that crossed the cap; those listing a retired document are found
  // in the transaction below. The added documents' scores are merged into
  // the other lists by the next ComputeSimilarities.
  NEARDUP_ASSIGN_OR_RETURN(std::optional<SimilarityParams> params, StoredSimilarityParams());
  std::vector<uint32_t> dirty;
  if (params.has_value()) {
    std::vector<std::span<const uint32_t>> changed;
    for (uint32_t doc : retired) {
      NEARDUP_ASSIGN_OR_RETURN(std::span<const uint32_t> chunks, Chunks(doc));
      changed.push_back(chunks);
    }
    for (const ChunkDocument& d : added_docs) changed.push_back(d.chunks);
    dirty = CapCrossingDocuments(index_, after, changed, max_document_frequency_);
  }

  // The switch: one transaction.
  internal::SqliteDb* db = impl.db.get();
  NEARDUP_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db));
  const int64_t now = impl.clock();
  if (!pending.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(
        auto insert_segment,
        db->Prepare("INSERT INTO segments(segment, file, num_docs, bytes) VALUES(?, ?, ?, ?)"));
    insert_segment.Bind(1, static_cast<int64_t>(segment_id))
        .Bind(2, internal::SegmentFileName(segment_id))
        .Bind(3, static_cast<int64_t>(pending.size()))
        .Bind(4, static_cast<int64_t>(segment_bytes));
    NEARDUP_RETURN_IF_ERROR(insert_segment.Run());
  }
  {
    NEARDUP_ASSIGN_OR_RETURN(auto remove_doc, db->Prepare("DELETE FROM documents WHERE doc = ?"));
    NEARDUP_ASSIGN_OR_RETURN(auto listers, db->Prepare("SELECT a FROM similarities WHERE b = ?"));
    NEARDUP_ASSIGN_OR_RETURN(auto remove_rows,
                             db->Prepare("DELETE FROM similarities WHERE a = ?1 OR b = ?1"));
    for (uint32_t doc : retired) {
      remove_doc.Bind(1, int64_t{doc});
      NEARDUP_RETURN_IF_ERROR(remove_doc.Run());
      // A list that loses a document must be recomputed: its next entry
      // was never stored.
      listers.Bind(1, int64_t{doc});
      while (true) {
        NEARDUP_ASSIGN_OR_RETURN(bool row, listers.Step());
        if (!row) break;
        dirty.push_back(static_cast<uint32_t>(listers.Int(0)));
      }
      listers.Reset();
      remove_rows.Bind(1, int64_t{doc});
      NEARDUP_RETURN_IF_ERROR(remove_rows.Run());
    }
  }
  {
    NEARDUP_ASSIGN_OR_RETURN(
        auto insert_doc,
        db->Prepare("INSERT INTO documents(doc, external_id, name, num_chunks, content_hash, "
                    "added_at, modified_at, segment, row, format) "
                    "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (size_t row = 0; row < pending.size(); ++row) {
      const Pending& p = pending[row];
      insert_doc.Bind(1, int64_t{p.number})
          .Bind(2, p.doc->id)
          .Bind(3, p.doc->name)
          .Bind(4, static_cast<int64_t>(p.doc->chunks.size()))
          .Bind(5, p.content_hash)
          .Bind(6, p.old.has_value() ? p.old->added_at : now)
          .Bind(7, now)
          .Bind(8, static_cast<int64_t>(segment_id))
          .Bind(9, static_cast<int64_t>(row))
          .Bind(10, p.doc->format);
      NEARDUP_RETURN_IF_ERROR(insert_doc.Run());
    }
  }
  {
    NEARDUP_ASSIGN_OR_RETURN(auto insert_dirty,
                             db->Prepare("INSERT OR IGNORE INTO similarity_dirty(doc) VALUES(?)"));
    for (uint32_t doc : dirty) {
      insert_dirty.Bind(1, int64_t{doc});
      NEARDUP_RETURN_IF_ERROR(insert_dirty.Run());
    }
    if (params.has_value()) {
      NEARDUP_ASSIGN_OR_RETURN(
          auto insert_added, db->Prepare("INSERT OR IGNORE INTO similarity_added(doc) VALUES(?)"));
      for (const ChunkDocument& d : added_docs) {
        insert_added.Bind(1, int64_t{d.doc});
        NEARDUP_RETURN_IF_ERROR(insert_added.Run());
      }
    }
  }
  NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "next_doc", std::to_string(next_doc)));
  NEARDUP_RETURN_IF_ERROR(
      WriteMeta(db, "next_segment", std::to_string(segment_id + (pending.empty() ? 0 : 1))));
  NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "generation", std::to_string(generation)));
  NEARDUP_RETURN_IF_ERROR(WriteIndexTiers(db, kept_generations));
  NEARDUP_RETURN_IF_ERROR(txn->Commit());
  cleanup.keep = true;

  // Committed: bring the in-memory state along.
  if (!pending.empty()) {
    Result<std::unique_ptr<internal::SegmentReader>> reader =
        internal::SegmentReader::Open(fs::path(dir_) / internal::SegmentFileName(segment_id));
    if (!reader.ok()) return reader.status().WithContext("reopening the committed segment");
    impl.segments[static_cast<uint32_t>(segment_id)] = std::move(reader).value();
    impl.next_segment = segment_id + 1;
  }
  {
    // New numbers exceed every live one, so appending keeps the order.
    std::set<uint32_t> gone(retired.begin(), retired.end());
    std::erase_if(impl.locations,
                  [&](const Impl::Location& at) { return gone.count(at.doc) != 0; });
    for (size_t row = 0; row < pending.size(); ++row) {
      impl.locations.push_back(
          {pending[row].number, static_cast<uint32_t>(segment_id), static_cast<uint32_t>(row)});
    }
  }
  // Segments whose rows are all dead stay until Compact (readers may map
  // them). Merged tiers' files go now; readers that map them keep them.
  RemoveReplacedTiers(impl.index_tiers, kept_generations, dir_, impl.env);
  impl.index_tiers = std::move(kept_generations);
  impl.generation = generation;
  impl.next_doc = next_doc;
  index_ = std::move(after);
  result.generation = generation;
  impl.StartMerge(this);
  return result;
}

Status Collection::Compact() {
  Impl& impl = *impl_;
  NEARDUP_RETURN_IF_ERROR(RequireWritable(impl.writable, dir_));
  // The running merge first: its tiers are about to be merged anyway, but
  // it must not be installed over the compacted list later. Its failure is
  // MaintainIndex's to report; the compaction goes on.
  if (Status merged = impl.FinishMerge(this, true); !merged.ok()) {
    impl.merge_error = std::move(merged);
  }
  const std::vector<uint32_t> live = LiveDocuments();
  uint64_t rows_total = 0;
  for (const auto& [id, segment] : impl.segments) rows_total += segment->num_docs();
  const bool rewrite_segments = impl.segments.size() > 1 || rows_total != live.size();
  const bool rewrite_index = index_.num_tiers() > 1 || index_.num_dead_postings() > 0;
  if (!rewrite_segments && !rewrite_index) return Status::Ok();
  // Compaction rewrites rows under fresh checksums: check the old ones first,
  // so that damage is reported, never made permanent and invisible. (A
  // writer verified the index tiers' checksums when it opened them.)
  for (const auto& [id, segment] : impl.segments) {
    NEARDUP_RETURN_IF_ERROR(segment->VerifyChecksum());
  }

  // A compaction is a commit of the manifest: a new generation, whose
  // index file (when the tiers are merged) is index-<generation>.
  const uint64_t generation = impl.generation + 1;
  const uint64_t segment_id = impl.next_segment;
  FileCleanup cleanup{impl.env, {}};
  uint64_t segment_bytes = 0;
  if (rewrite_segments && !live.empty()) {
    std::vector<internal::SegmentRow> rows;
    std::vector<std::string> texts;  // frames of format 1, recompressed with a checksum
    texts.reserve(live.size());
    for (const Impl::Location& at : impl.locations) {
      const internal::SegmentReader& from = *impl.segments.at(at.segment);
      std::string_view frame = from.compressed_text(at.row);
      if (!frame.empty() && !internal::FrameHasChecksum(frame)) {
        NEARDUP_ASSIGN_OR_RETURN(std::string plain, from.Text(at.row));
        NEARDUP_ASSIGN_OR_RETURN(std::string recompressed, internal::CompressText(plain));
        texts.push_back(std::move(recompressed));
        frame = texts.back();
      }
      rows.push_back({at.doc, from.chunks(at.row), from.simhash(at.row), {}, frame});
    }
    const fs::path path = fs::path(dir_) / internal::SegmentFileName(segment_id);
    cleanup.paths.push_back(path);
    // Texts are copied as compressed frames, never recompressed (except
    // format 1 frames, which lack the checksum).
    NEARDUP_ASSIGN_OR_RETURN(segment_bytes,
                             internal::WriteSegmentFile(path, rows, false, impl.env));
  }
  // All tiers into one, without the dead postings.
  TieredChunkIndex index = index_;
  std::vector<uint64_t> tier_generations = impl.index_tiers;
  if (rewrite_index) {
    NEARDUP_ASSIGN_OR_RETURN(ChunkIndex merged, index_.Merged());
    std::vector<ChunkIndex> tiers;
    tier_generations.clear();
    if (merged.num_postings() > 0) {
      const std::string index_file = internal::IndexFileName(generation);
      cleanup.paths.push_back(fs::path(dir_) / index_file);
      NEARDUP_ASSIGN_OR_RETURN(
          ChunkIndex mapped,
          internal::WriteMappedTier(merged, fs::path(dir_) / index_file, impl.env));
      tiers.push_back(std::move(mapped));
      tier_generations.push_back(generation);
    }
    NEARDUP_ASSIGN_OR_RETURN(index, TieredChunkIndex::Create(std::move(tiers), live));
  }

  internal::SqliteDb* db = impl.db.get();
  NEARDUP_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db));
  if (rewrite_segments) {
    NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM segments"));
    if (!live.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(
          auto insert_segment,
          db->Prepare("INSERT INTO segments(segment, file, num_docs, bytes) VALUES(?, ?, ?, ?)"));
      insert_segment.Bind(1, static_cast<int64_t>(segment_id))
          .Bind(2, internal::SegmentFileName(segment_id))
          .Bind(3, static_cast<int64_t>(live.size()))
          .Bind(4, static_cast<int64_t>(segment_bytes));
      NEARDUP_RETURN_IF_ERROR(insert_segment.Run());
      NEARDUP_ASSIGN_OR_RETURN(
          auto move_doc, db->Prepare("UPDATE documents SET segment = ?, row = ? WHERE doc = ?"));
      for (size_t row = 0; row < live.size(); ++row) {
        move_doc.Bind(1, static_cast<int64_t>(segment_id))
            .Bind(2, static_cast<int64_t>(row))
            .Bind(3, int64_t{live[row]});
        NEARDUP_RETURN_IF_ERROR(move_doc.Run());
      }
    }
    NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "next_segment", std::to_string(segment_id + 1)));
  }
  if (rewrite_index) NEARDUP_RETURN_IF_ERROR(WriteIndexTiers(db, tier_generations));
  NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "generation", std::to_string(generation)));
  NEARDUP_RETURN_IF_ERROR(txn->Commit());
  cleanup.keep = true;

  impl.generation = generation;
  RemoveReplacedTiers(impl.index_tiers, tier_generations, dir_, impl.env);
  impl.index_tiers = std::move(tier_generations);
  index_ = std::move(index);
  if (!rewrite_segments) return Status::Ok();
  std::vector<fs::path> old_files;
  for (const auto& [id, segment] : impl.segments) old_files.push_back(segment->path());
  impl.segments.clear();
  impl.next_segment = segment_id + 1;
  if (!live.empty()) {
    Result<std::unique_ptr<internal::SegmentReader>> reader =
        internal::SegmentReader::Open(fs::path(dir_) / internal::SegmentFileName(segment_id));
    if (!reader.ok()) return reader.status().WithContext("reopening the compacted segment");
    impl.segments[static_cast<uint32_t>(segment_id)] = std::move(reader).value();
    for (size_t row = 0; row < live.size(); ++row) {
      impl.locations[row] = {live[row], static_cast<uint32_t>(segment_id),
                             static_cast<uint32_t>(row)};
    }
  }
  for (const fs::path& p : old_files) impl.env->RemoveFile(p.string()).IgnoreError();
  return internal::FsyncDirectory(fs::path(dir_) / internal::kDataDir, impl.env);
}

Result<std::optional<SimilarityParams>> Collection::StoredSimilarityParams() const {
  Result<std::string> top = internal::ReadMeta(impl_->db.get(), "similar_top_n");
  if (!top.ok()) {
    if (top.status().code() == StatusCode::kNotFound) return std::optional<SimilarityParams>();
    return top.status();
  }
  NEARDUP_ASSIGN_OR_RETURN(std::string min, internal::ReadMeta(impl_->db.get(), "similar_min"));
  SimilarityParams params;
  NEARDUP_ASSIGN_OR_RETURN(params.top_n, internal::ParseCatalogCount(*top, "similar_top_n"));
  char* end = nullptr;
  params.min_similarity = std::strtod(min.c_str(), &end);
  if (min.empty() || end != min.c_str() + min.size() || !(params.min_similarity >= 0.0) ||
      params.min_similarity > 1.0) {
    return DataLossError("catalog meta similar_min is invalid: '" + min.substr(0, 40) + "'");
  }
  return std::optional<SimilarityParams>(params);
}

namespace {

Result<std::vector<uint32_t>> ReadDocumentList(internal::SqliteDb* db, const char* sql) {
  NEARDUP_ASSIGN_OR_RETURN(auto select, db->Prepare(sql));
  std::vector<uint32_t> docs;
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    docs.push_back(static_cast<uint32_t>(select.Int(0)));
  }
  return docs;
}

}  // namespace

Result<std::vector<uint32_t>> Collection::DirtyDocuments() const {
  return ReadDocumentList(impl_->db.get(), "SELECT doc FROM similarity_dirty ORDER BY doc");
}

Result<std::vector<uint32_t>> Collection::AddedSinceSimilarities() const {
  if (impl_->format_version < 2) return std::vector<uint32_t>();  // read-only version 1
  return ReadDocumentList(impl_->db.get(), "SELECT doc FROM similarity_added ORDER BY doc");
}

Status Collection::StoreSimilarities(const SimilarityParams& params, bool full,
                                     std::span<const uint32_t> replaced,
                                     std::span<const SimilarityRow> rows) {
  NEARDUP_RETURN_IF_ERROR(RequireWritable(impl_->writable, dir_));
  internal::SqliteDb* db = impl_->db.get();
  NEARDUP_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db));
  if (full) {
    NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM similarities"));
  } else {
    NEARDUP_ASSIGN_OR_RETURN(auto remove, db->Prepare("DELETE FROM similarities WHERE a = ?"));
    for (uint32_t doc : replaced) {
      remove.Bind(1, int64_t{doc});
      NEARDUP_RETURN_IF_ERROR(remove.Run());
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(
      auto insert,
      db->Prepare("INSERT INTO similarities(a, rank, b, a_in_b, b_in_a) VALUES(?, ?, ?, ?, ?)"));
  int64_t rank = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    rank = (i > 0 && rows[i - 1].a == rows[i].a) ? rank + 1 : 0;
    insert.Bind(1, int64_t{rows[i].a})
        .Bind(2, rank)
        .Bind(3, int64_t{rows[i].b})
        .Bind(4, rows[i].a_in_b)
        .Bind(5, rows[i].b_in_a);
    NEARDUP_RETURN_IF_ERROR(insert.Run());
  }
  NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM similarity_dirty"));
  NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM similarity_added"));
  NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "similar_top_n", std::to_string(params.top_n)));
  // 17 significant digits: the double round-trips exactly.
  char min[64];
  std::snprintf(min, sizeof(min), "%.17g", params.min_similarity);
  NEARDUP_RETURN_IF_ERROR(WriteMeta(db, "similar_min", min));
  return txn->Commit();
}

namespace {

SimilarityRow ReadSimilarityRow(const internal::SqliteStatement& select) {
  return {static_cast<uint32_t>(select.Int(0)), static_cast<uint32_t>(select.Int(1)),
          select.Double(2), select.Double(3)};
}

}  // namespace

Result<std::vector<SimilarityRow>> Collection::ReadSimilarities() const {
  NEARDUP_ASSIGN_OR_RETURN(
      auto select,
      impl_->db->Prepare("SELECT a, b, a_in_b, b_in_a FROM similarities ORDER BY a, rank"));
  std::vector<SimilarityRow> rows;
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    rows.push_back(ReadSimilarityRow(select));
  }
  return rows;
}

Result<std::vector<SimilarityRow>> Collection::ReadSimilarities(
    std::span<const uint32_t> docs) const {
  NEARDUP_ASSIGN_OR_RETURN(
      auto select, impl_->db->Prepare(
                       "SELECT a, b, a_in_b, b_in_a FROM similarities WHERE a = ? ORDER BY rank"));
  std::vector<SimilarityRow> rows;
  for (uint32_t doc : docs) {
    select.Bind(1, int64_t{doc});
    while (true) {
      NEARDUP_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      rows.push_back(ReadSimilarityRow(select));
    }
    select.Reset();
  }
  return rows;
}

}  // namespace neardup
