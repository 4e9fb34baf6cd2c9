// Merges of the chunk index's tiers off the commit path: a commit writes
// its own tier and returns; the merge the policy asks for runs on a thread
// of its own and is installed by the writer's next call (docs/CONTAINMENT.md,
// "Background merges").
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "neardup/collection.h"
#include "store/collection_impl.h"

namespace neardup {
namespace fs = std::filesystem;

namespace internal {

size_t TiersToRewrite(const TieredChunkIndex& index, bool last_is_new, uint64_t ratio) {
  const size_t n = index.num_tiers();
  if (n == 0) return 0;
  std::vector<TierSize> sizes;
  for (size_t t = 0; t < n; ++t) {
    sizes.push_back({index.tiers()[t].num_postings(), index.dead_postings(t)});
  }
  const size_t start = TierMergeStart(sizes, ratio);
  if (start < n - 1 || last_is_new || sizes[n - 1].dead_postings * 2 > sizes[n - 1].postings) {
    return start;
  }
  return n;
}

void RemoveReplacedTiers(std::span<const uint64_t> before, std::span<const uint64_t> after,
                         const std::string& dir, Env* env) {
  for (uint64_t tier : before) {
    if (std::find(after.begin(), after.end(), tier) != after.end()) continue;
    env->RemoveFile((fs::path(dir) / IndexFileName(tier)).string()).IgnoreError();
  }
}

Status WriteIndexTiers(SqliteDb* db, std::span<const uint64_t> tiers) {
  NEARDUP_RETURN_IF_ERROR(db->Exec("DELETE FROM index_tiers"));
  NEARDUP_ASSIGN_OR_RETURN(auto insert,
                           db->Prepare("INSERT INTO index_tiers(generation) VALUES(?)"));
  for (uint64_t tier : tiers) {
    insert.Bind(1, static_cast<int64_t>(tier));
    NEARDUP_RETURN_IF_ERROR(insert.Run());
  }
  return Status::Ok();
}

}  // namespace internal

namespace {

// The merge itself: the live postings of tiers [begin, end) of `index` (a
// copy sharing the arrays, so the writer may move on), written to `path`.
Result<internal::TierMergeOutput> MergeTierRun(TieredChunkIndex index, size_t begin, size_t end,
                                               std::vector<uint64_t> replaced, std::string path,
                                               Env* env) {
  internal::TierMergeOutput out;
  out.replaced = std::move(replaced);
  NEARDUP_ASSIGN_OR_RETURN(out.merged, index.MergeTiers(begin, end));
  if (out.merged.num_postings() > 0) NEARDUP_RETURN_IF_ERROR(out.merged.WriteFile(path, env));
  return out;
}

std::string MergePath(const std::string& dir) {
  return (fs::path(dir) / internal::kDataDir / internal::kMergeFileName).string();
}

// The merge the policy asks for on `index` (`full`: all tiers into one, when
// there is more than one or a dead posting; `size_tiered` too:
// MaintainIndexOptions::size_tiered), as [begin, end), or nullopt.
std::optional<std::pair<size_t, size_t>> PlannedMerge(const TieredChunkIndex& index, uint64_t ratio,
                                                      bool full = false, bool size_tiered = false) {
  const size_t n = index.num_tiers();
  if (full && size_tiered) {
    if (n <= 1) return std::nullopt;  // dead postings alone do not count
    // Live postings, as TierMergeStart counts them.
    auto live = [&](size_t t) { return index.tiers()[t].num_postings() - index.dead_postings(t); };
    uint64_t newer = 0;
    for (size_t t = 1; t < n; ++t) newer += live(t);
    // oldest >= ratio * newer, without the product's overflow.
    if (newer == 0 || live(0) / newer >= ratio) {
      // The oldest tier stays: only the newer ones, when there are several.
      if (n >= 3) return std::make_pair(size_t{1}, n);
      return std::nullopt;
    }
    return std::make_pair(size_t{0}, n);
  }
  if (full) {
    if (n > 1 || index.num_dead_postings() > 0) return std::make_pair(size_t{0}, n);
    return std::nullopt;
  }
  const size_t start = internal::TiersToRewrite(index, false, ratio);
  if (start >= n) return std::nullopt;
  return std::make_pair(start, n);
}

}  // namespace

Status Collection::Impl::Install(Collection* c, internal::TierMergeOutput out) {
  Impl& impl = *this;
  const std::string& dir = c->dir_;
  TieredChunkIndex* index = &c->index_;
  const std::vector<uint32_t> live = c->LiveDocuments();
  const std::string merge_path = MergePath(dir);
  auto at = std::search(impl.index_tiers.begin(), impl.index_tiers.end(), out.replaced.begin(),
                        out.replaced.end());
  if (at == impl.index_tiers.end() || out.replaced.empty()) {
    // The run is no longer in the list (a compaction replaced it).
    impl.env->RemoveFile(merge_path).IgnoreError();
    return Status::Ok();
  }
  const size_t begin = static_cast<size_t>(at - impl.index_tiers.begin());
  const size_t end = begin + out.replaced.size();
  const uint64_t generation = impl.generation + 1;
  std::vector<uint64_t> generations(impl.index_tiers.begin(), at);
  std::vector<ChunkIndex> tiers(index->tiers().begin(),
                                index->tiers().begin() + static_cast<ptrdiff_t>(begin));
  internal::FileCleanup cleanup{impl.env, {}};
  if (out.merged.num_postings() > 0) {
    const fs::path file = fs::path(dir) / internal::IndexFileName(generation);
    cleanup.paths.push_back(merge_path);
    NEARDUP_RETURN_IF_ERROR(impl.env->RenameFile(merge_path, file.string()));
    cleanup.paths.back() = file;
    // The rename must be durable before the catalog names the file.
    NEARDUP_RETURN_IF_ERROR(internal::FsyncDirectory(fs::path(dir) / internal::kDataDir, impl.env));
    generations.push_back(generation);
    // The installed tier maps its file (the bytes just written); the merged
    // arrays are freed with `out`.
    NEARDUP_ASSIGN_OR_RETURN(ChunkIndex mapped, internal::OpenWrittenTier(file));
    tiers.push_back(std::move(mapped));
  }
  generations.insert(generations.end(), impl.index_tiers.begin() + static_cast<ptrdiff_t>(end),
                     impl.index_tiers.end());
  tiers.insert(tiers.end(), index->tiers().begin() + static_cast<ptrdiff_t>(end),
               index->tiers().end());
  NEARDUP_ASSIGN_OR_RETURN(TieredChunkIndex after,
                           TieredChunkIndex::Create(std::move(tiers), live));

  internal::SqliteDb* db = impl.db.get();
  NEARDUP_ASSIGN_OR_RETURN(auto txn, internal::SqliteTransaction::Begin(db));
  NEARDUP_RETURN_IF_ERROR(internal::WriteIndexTiers(db, generations));
  NEARDUP_RETURN_IF_ERROR(internal::WriteMeta(db, "generation", std::to_string(generation)));
  NEARDUP_RETURN_IF_ERROR(txn->Commit());
  cleanup.keep = true;

  internal::RemoveReplacedTiers(impl.index_tiers, generations, dir, impl.env);
  impl.index_tiers = std::move(generations);
  impl.generation = generation;
  *index = std::move(after);
  return Status::Ok();
}

void Collection::Impl::StartMerge(Collection* c) {
  if (!background_merges || merge.valid()) return;
  const auto run = PlannedMerge(c->index_, index_tier_ratio);
  if (!run.has_value()) return;
  StartMergeOf(c, run->first, run->second);
}

void Collection::Impl::StartMergeOf(Collection* c, size_t begin, size_t end) {
  merge_run = ReplacedGenerations(begin, end);
  merge = std::async(std::launch::async, MergeTierRun, c->index_, begin, end, merge_run,
                     MergePath(c->dir_), env);
}

size_t Collection::Impl::RunningMergeEnd() const {
  if (!merge.valid() || merge_run.empty()) return 0;
  auto at = std::search(index_tiers.begin(), index_tiers.end(), merge_run.begin(), merge_run.end());
  if (at == index_tiers.end()) return 0;
  return static_cast<size_t>(at - index_tiers.begin()) + merge_run.size();
}

Status Collection::Impl::FinishMerge(Collection* c, bool wait) {
  if (!merge.valid()) return Status::Ok();
  if (!wait && merge.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return Status::Ok();
  }
  Result<internal::TierMergeOutput> out = merge.get();
  if (!out.ok()) {
    env->RemoveFile(MergePath(c->dir_)).IgnoreError();
    return out.status().WithContext("merging index tiers of collection " + c->dir_);
  }
  return Install(c, std::move(out).value());
}

Status Collection::Impl::MaintainIndex(Collection* c, bool full, bool size_tiered, bool wait) {
  Status dropped = std::move(merge_error);
  merge_error = Status::Ok();
  if (!wait) {
    // Installs a finished merge (a running one is left alone); starts the
    // asked-for merge when none is running.
    NEARDUP_RETURN_IF_ERROR(FinishMerge(c, false));
    NEARDUP_RETURN_IF_ERROR(dropped);
    if (merge.valid()) return Status::Ok();
    const auto run = PlannedMerge(c->index_, index_tier_ratio, full, size_tiered);
    if (run.has_value()) StartMergeOf(c, run->first, run->second);
    return Status::Ok();
  }
  NEARDUP_RETURN_IF_ERROR(FinishMerge(c, true));
  NEARDUP_RETURN_IF_ERROR(dropped);
  // Each merge leaves fewer tiers (a full one leaves at most one and no dead
  // posting; a size-tiered one keeps the oldest tier and merges the others,
  // after which it asks for nothing more), so this ends (after at most
  // num_tiers).
  while (true) {
    const auto run = PlannedMerge(c->index_, index_tier_ratio, full, size_tiered);
    if (!run.has_value()) return Status::Ok();
    Result<internal::TierMergeOutput> out =
        MergeTierRun(c->index_, run->first, run->second,
                     ReplacedGenerations(run->first, run->second), MergePath(c->dir_), env);
    if (!out.ok()) {
      env->RemoveFile(MergePath(c->dir_)).IgnoreError();
      return out.status().WithContext("merging index tiers of collection " + c->dir_);
    }
    NEARDUP_RETURN_IF_ERROR(Install(c, std::move(out).value()));
  }
}

Status Collection::MaintainIndex() { return MaintainIndex(MaintainIndexOptions{}); }

Status Collection::MaintainIndex(const MaintainIndexOptions& options) {
  if (!impl_->writable) {
    return FailedPreconditionError("collection " + dir_ + " was opened read-only");
  }
  return impl_->MaintainIndex(this, options.full, options.full && options.size_tiered,
                              options.wait);
}

bool Collection::index_merge_pending() const { return impl_->merge.valid(); }

}  // namespace neardup
