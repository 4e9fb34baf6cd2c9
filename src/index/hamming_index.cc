#include "neardup/hamming_index.h"

#include <algorithm>
#include <array>
#include <new>
#include <string>
#include <utility>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "index/hamming_state.h"
#include "util/status_fallback.h"

namespace neardup {
namespace {

using internal::HammingIndexState;
using internal::HammingRun;
using internal::ScanHit;

// Single inserts wait in an unsorted buffer of at most this many entries
// (scanned linearly by queries) before they become a sorted run.
constexpr size_t kPendingCapacity = 64;
// A run is merged into the one before it once it holds more than 1/kMergeRatio
// of that one's entries: run sizes fall geometrically, so there are
// O(log N) runs and each entry is moved O(log N) times.
constexpr size_t kMergeRatio = 4;

bool MatchLess(const HammingMatch& a, const HammingMatch& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.id != b.id) return a.id < b.id;
  return a.fingerprint < b.fingerprint;
}

// Appends the matches of `query` among the pending entries to `out`: in a
// partial index only those whose canonical table it holds, as its runs'
// scans report.
void ScanPending(const HammingIndexState& s, uint64_t query, std::vector<HammingMatch>* out) {
  const size_t first = out->size();
  internal::ScanEntries(s.pending, query, s.layout.max_distance(), out);
  if (s.layout.holds_all()) return;
  out->erase(std::remove_if(
                 out->begin() + first, out->end(),
                 [&](const HammingMatch& m) { return !s.layout.HoldsPair(m.fingerprint ^ query); }),
             out->end());
}

// Appends the matches of `query` to `out`, sorted; `hits` is scratch.
void FindAllInto(const HammingIndexState& s, uint64_t query, std::vector<ScanHit>* hits,
                 std::vector<HammingMatch>* out) {
  const size_t first = out->size();
  for (const auto& run : s.runs) {
    hits->clear();
    run->Scan(s.layout, query, hits);
    for (const ScanHit& hit : *hits) {
      std::optional<size_t> slot = run->FindFingerprint(hit.fingerprint);
      if (!slot) continue;  // only in a corrupt mapped file
      auto [begin, end] = run->IdRange(*slot);
      for (size_t p = begin; p < end; ++p) {
        if (!run->IsDead(p)) out->push_back({hit.fingerprint, run->arrays().ids[p], hit.distance});
      }
    }
  }
  ScanPending(s, query, out);
  if (out->size() - first > 1) std::sort(out->begin() + first, out->end(), MatchLess);
}

// Per-batch scratch for FindBatch.
struct BatchScratch {
  std::vector<internal::BatchHit> hits;
  std::array<std::vector<HammingMatch>, internal::kScanBatch> matches;
};

// FindAllInto for up to kScanBatch queries at once (prefetched probes);
// afterwards scratch->matches[i] holds query i's sorted matches.
void FindBatch(const HammingIndexState& s, std::span<const uint64_t> queries,
               BatchScratch* scratch) {
  for (size_t i = 0; i < queries.size(); ++i) scratch->matches[i].clear();
  for (const auto& run : s.runs) {
    scratch->hits.clear();
    run->ScanBatch(s.layout, queries, &scratch->hits);
    for (const internal::BatchHit& hit : scratch->hits) {
      std::optional<size_t> slot = run->FindFingerprint(hit.fingerprint);
      if (!slot) continue;  // only in a corrupt mapped file
      auto [begin, end] = run->IdRange(*slot);
      for (size_t p = begin; p < end; ++p) {
        if (!run->IsDead(p)) {
          scratch->matches[hit.query].push_back(
              {hit.fingerprint, run->arrays().ids[p], hit.distance});
        }
      }
    }
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    std::vector<HammingMatch>& m = scratch->matches[i];
    if (!s.pending.empty()) ScanPending(s, queries[i], &m);
    if (m.size() > 1) std::sort(m.begin(), m.end(), MatchLess);
  }
}

std::optional<HammingMatch> FindFirstOf(const HammingIndexState& s, uint64_t query,
                                        std::vector<ScanHit>* hits,
                                        std::vector<HammingMatch>* scratch) {
  scratch->clear();
  FindAllInto(s, query, hits, scratch);
  if (scratch->empty()) return std::nullopt;
  return scratch->front();
}

// Runs `fn(begin, end)` over fixed chunks of [0, n) in parallel; the chunking
// does not depend on the thread count, so outputs assembled per chunk are
// deterministic.
template <typename Fn>
void ForChunks(size_t n, size_t chunk, Fn fn) {
  const size_t num_chunks = (n + chunk - 1) / chunk;
  tbb::parallel_for(size_t{0}, num_chunks,
                    [&](size_t c) { fn(c, c * chunk, std::min(n, (c + 1) * chunk)); });
}

// Merges the last runs while the last is too large against the one before.
// Running out of memory stops the merging: the runs stay valid, only less
// merged, and a later insert merges them.
void MergeTail(HammingIndexState& s) {
  try {
    while (s.runs.size() >= 2 &&
           s.runs.back()->num_live() * kMergeRatio > s.runs[s.runs.size() - 2]->num_live()) {
      auto merged = HammingRun::Merge(s.layout, *s.runs[s.runs.size() - 2], s.runs.back().get());
      merged->ReserveTombstones();  // Remove never allocates (see MaybeCompact)
      s.runs.pop_back();
      s.runs.back() = std::move(merged);
    }
  } catch (const std::bad_alloc&) {
    // Nothing to undo: a merge that throws changed nothing, and the runs
    // are valid however far the merging got (a later insert goes on).
  }
  if (!s.runs.empty() && s.runs.back()->num_ids() == 0) s.runs.pop_back();
}

// Adds sorted, unique entries that are in no run and not pending. Throws
// bad_alloc with the index unchanged (pending's order included):
// everything that allocates comes before the first change.
void AddNew(HammingIndexState& s, std::vector<HammingEntry> fresh) {
  const size_t added = fresh.size();
  if (s.pending.size() + added < kPendingCapacity) {
    s.pending.insert(s.pending.end(), fresh.begin(), fresh.end());
    s.num_live += added;
    return;
  }
  if (!s.pending.empty()) {
    // Sorted in the copy, so that pending is untouched until the run is in.
    const size_t mid = fresh.size();
    fresh.insert(fresh.end(), s.pending.begin(), s.pending.end());
    std::sort(fresh.begin() + mid, fresh.end());
    std::inplace_merge(fresh.begin(), fresh.begin() + mid, fresh.end());
  }
  std::unique_ptr<HammingRun> run = HammingRun::FromSortedEntries(s.layout, fresh);
  run->ReserveTombstones();  // Remove never allocates (see MaybeCompact)
  s.runs.push_back(std::move(run));
  s.pending.clear();
  s.num_live += added;
  MergeTail(s);
}

// Compacts run `r` once at least half of its entries are tombstones.
// Cannot fail: running out of memory leaves the run as it is (tombstones
// kept, answers the same), to be compacted by a later remove.
// Why Remove never allocates (session 18): a store journals a remove before
// it applies it, and a stream evicts after it stored the new document, so a
// remove that threw would leave the journal, or the stream's maps, ahead of
// the index. Every run that Insert and Remove build (AddNew, MergeTail,
// here) gets its tombstone bits when it is built, where a bad_alloc still
// changes nothing (1 bit an entry). A run of Build, Compact or a loaded or
// mapped file allocates them on its first remove: Remove then throws
// bad_alloc with the index unchanged (HammingStore catches it).
void MaybeCompact(HammingIndexState& s, size_t r) {
  HammingRun& run = *s.runs[r];
  if (run.num_dead() * 2 < run.num_ids()) return;
  if (run.num_live() == 0) {
    s.runs.erase(s.runs.begin() + r);
    return;
  }
  try {
    std::unique_ptr<HammingRun> compacted = HammingRun::Merge(s.layout, run, nullptr);
    compacted->ReserveTombstones();
    s.runs[r] = std::move(compacted);
  } catch (const std::bad_alloc&) {
    // Nothing changed: the run keeps its tombstones.
  }
}

// Called in a bad_alloc handler (StatusOrShort: "out of memory" when even
// the message cannot be allocated).
Status OutOfMemoryError(size_t entries) {
  return internal::StatusOrShort(StatusCode::kResourceExhausted, "out of memory", [&] {
    return ResourceExhaustedError("out of memory adding " + std::to_string(entries) +
                                  " entries to the HammingIndex (left unchanged)");
  });
}

// OK if [begin, end) is a range within [lo, hi) (the tables an index holds,
// of num_tables), else InvalidArgument (naming all num_tables when [lo, hi)
// is every table, as before partial indexes).
Status CheckTableRange(uint64_t begin, uint64_t end, uint64_t lo, uint64_t hi,
                       uint64_t num_tables) {
  if (begin <= end && begin >= lo && end <= hi) return {};
  const std::string range = "tables [" + std::to_string(begin) + ", " + std::to_string(end) +
                            ") must be a range within the ";
  if (lo == 0 && hi == num_tables) {
    return InvalidArgumentError(range + std::to_string(num_tables) + " tables");
  }
  return InvalidArgumentError(range + "index's tables [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + ")");
}

// The state of an index holding tables [table_begin, table_end), or
// InvalidArgument.
Result<std::unique_ptr<HammingIndexState>> NewState(const HammingIndexOptions& options,
                                                    uint64_t table_begin, uint64_t table_end) {
  NEARDUP_RETURN_IF_ERROR(ValidateHammingIndexOptions(options));
  const uint64_t num_tables = HammingNumTables(options.num_blocks, options.max_distance);
  NEARDUP_RETURN_IF_ERROR(CheckTableRange(table_begin, table_end, 0, num_tables, num_tables));
  return std::make_unique<HammingIndexState>(options, static_cast<int>(table_begin),
                                             static_cast<int>(table_end));
}

Status CheckCapacity(size_t have, size_t add) {
  if (add > kMaxHammingEntries - have) {
    return ResourceExhaustedError("HammingIndex size (" + std::to_string(have) + " + " +
                                  std::to_string(add) + ") would exceed the limit " +
                                  std::to_string(kMaxHammingEntries));
  }
  return Status::Ok();
}

}  // namespace

namespace internal {

const HammingRun* CleanRun(const HammingIndexState& s, std::unique_ptr<HammingRun>* owned) {
  if (s.runs.size() == 1 && s.pending.empty() && s.runs[0]->num_dead() == 0) {
    return s.runs[0].get();
  }
  if (s.num_live == 0) return nullptr;
  std::vector<HammingEntry> pending = s.pending;
  std::sort(pending.begin(), pending.end());
  std::unique_ptr<HammingRun> acc = HammingRun::FromSortedEntries(s.layout, pending);
  for (size_t r = s.runs.size(); r-- > 0;) acc = HammingRun::Merge(s.layout, *s.runs[r], acc.get());
  *owned = std::move(acc);
  return owned->get();
}

}  // namespace internal

HammingIndex::HammingIndex(std::unique_ptr<internal::HammingIndexState> state)
    : state_(std::move(state)) {}
HammingIndex::HammingIndex(HammingIndex&& other) noexcept = default;
HammingIndex& HammingIndex::operator=(HammingIndex&& other) noexcept = default;
HammingIndex::~HammingIndex() = default;

Result<HammingIndex> HammingIndex::Create(const HammingIndexOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateHammingIndexOptions(options));
  return HammingIndex(std::make_unique<HammingIndexState>(options));
}

Result<HammingIndex> HammingIndex::Create(const HammingIndexOptions& options, uint64_t table_begin,
                                          uint64_t table_end) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<HammingIndexState> state,
                           NewState(options, table_begin, table_end));
  return HammingIndex(std::move(state));
}

Result<HammingIndex> HammingIndex::Build(const HammingIndexOptions& options,
                                         std::span<const HammingEntry> entries) {
  NEARDUP_RETURN_IF_ERROR(ValidateHammingIndexOptions(options));
  return Build(options, entries, 0, HammingNumTables(options.num_blocks, options.max_distance));
}

Result<HammingIndex> HammingIndex::Build(const HammingIndexOptions& options,
                                         std::span<const HammingEntry> entries,
                                         uint64_t table_begin, uint64_t table_end) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<HammingIndexState> state,
                           NewState(options, table_begin, table_end));
  std::vector<HammingEntry> sorted;
  internal::SortEntries(entries, &sorted);
  NEARDUP_RETURN_IF_ERROR(CheckCapacity(0, sorted.size()));
  state->num_live = sorted.size();
  if (!sorted.empty()) state->runs.push_back(HammingRun::FromSortedEntries(state->layout, sorted));
  return HammingIndex(std::move(state));
}

const HammingIndexOptions& HammingIndex::options() const { return state_->options; }
uint64_t HammingIndex::num_tables() const { return state_->layout.num_tables(); }
uint64_t HammingIndex::table_begin() const { return state_->layout.held_begin(); }
uint64_t HammingIndex::table_end() const { return state_->layout.held_end(); }
size_t HammingIndex::size() const { return state_->num_live; }

size_t HammingIndex::MemoryBytes() const {
  size_t bytes = state_->pending.capacity() * sizeof(HammingEntry);
  for (const auto& run : state_->runs) bytes += run->MemoryBytes();
  return bytes;
}

bool HammingIndex::Contains(HammingEntry entry) const {
  for (const HammingEntry& e : state_->pending) {
    if (e == entry) return true;
  }
  for (const auto& run : state_->runs) {
    std::optional<size_t> pos = run->FindEntry(entry);
    if (pos) return !run->IsDead(*pos);
  }
  return false;
}

Result<bool> HammingIndex::Insert(HammingEntry entry) {
  HammingIndexState& s = *state_;
  for (const HammingEntry& e : s.pending) {
    if (e == entry) return false;
  }
  for (const auto& run : s.runs) {
    std::optional<size_t> pos = run->FindEntry(entry);
    if (!pos) continue;
    if (!run->IsDead(*pos)) return false;
    run->Revive(*pos);
    ++s.num_live;
    return true;
  }
  NEARDUP_RETURN_IF_ERROR(CheckCapacity(s.num_live, 1));
  try {
    AddNew(s, {entry});
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(1);
  }
  return true;
}

namespace {

// InsertBulk's work. Throws bad_alloc with the index unchanged.
Result<size_t> InsertEntries(HammingIndexState& s, std::span<const HammingEntry> entries) {
  std::vector<HammingEntry> batch;
  internal::SortEntries(entries, &batch);
  std::vector<HammingEntry> pending = s.pending;
  std::sort(pending.begin(), pending.end());
  // 0: new, 1: live already, 2: a tombstone to revive.
  std::vector<uint8_t> kind(batch.size(), 0);
  ForChunks(batch.size(), 4096, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (std::binary_search(pending.begin(), pending.end(), batch[i])) {
        kind[i] = 1;
        continue;
      }
      for (const auto& run : s.runs) {
        std::optional<size_t> pos = run->FindEntry(batch[i]);
        if (pos) {
          kind[i] = run->IsDead(*pos) ? 2 : 1;
          break;
        }
      }
    }
  });
  std::vector<HammingEntry> fresh;
  size_t revived = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (kind[i] == 0) {
      fresh.push_back(batch[i]);
    } else if (kind[i] == 2) {
      ++revived;
    }
  }
  NEARDUP_RETURN_IF_ERROR(CheckCapacity(s.num_live, revived + fresh.size()));
  // Revived before AddNew, whose merges drop tombstones; killed again if
  // AddNew runs out of memory (which leaves the runs as they were).
  std::vector<std::pair<HammingRun*, size_t>> revive;
  revive.reserve(revived);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (kind[i] != 2) continue;
    for (const auto& run : s.runs) {
      std::optional<size_t> pos = run->FindEntry(batch[i]);
      if (pos) {
        revive.emplace_back(run.get(), *pos);
        break;
      }
    }
  }
  for (const auto& [run, pos] : revive) run->Revive(pos);
  const size_t added = fresh.size() + revived;
  if (!fresh.empty()) {
    try {
      AddNew(s, std::move(fresh));
    } catch (const std::bad_alloc&) {
      for (const auto& [run, pos] : revive) run->MarkDead(pos);
      throw;
    }
  }
  s.num_live += revived;
  return added;
}

}  // namespace

Result<size_t> HammingIndex::InsertBulk(std::span<const HammingEntry> entries) {
  try {
    return InsertEntries(*state_, entries);
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(entries.size());
  }
}

bool HammingIndex::Remove(HammingEntry entry) {
  HammingIndexState& s = *state_;
  for (size_t i = 0; i < s.pending.size(); ++i) {
    if (s.pending[i] == entry) {
      s.pending[i] = s.pending.back();
      s.pending.pop_back();
      --s.num_live;
      return true;
    }
  }
  for (size_t r = 0; r < s.runs.size(); ++r) {
    std::optional<size_t> pos = s.runs[r]->FindEntry(entry);
    if (!pos) continue;
    if (s.runs[r]->IsDead(*pos)) return false;
    s.runs[r]->MarkDead(*pos);
    --s.num_live;
    MaybeCompact(s, r);
    return true;
  }
  return false;
}

size_t HammingIndex::RemoveBulk(std::span<const HammingEntry> entries) {
  HammingIndexState& s = *state_;
  std::vector<HammingEntry> batch(entries.begin(), entries.end());
  tbb::parallel_sort(batch.begin(), batch.end());
  batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
  size_t removed = 0;
  // Pending first (small), then tombstones found in parallel, marked serially.
  std::erase_if(s.pending, [&](const HammingEntry& e) {
    bool hit = std::binary_search(batch.begin(), batch.end(), e);
    removed += hit;
    return hit;
  });
  constexpr uint64_t kNone = ~uint64_t{0};
  std::vector<uint64_t> where(batch.size(), kNone);  // run << 40 | position
  ForChunks(batch.size(), 4096, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      for (size_t r = 0; r < s.runs.size(); ++r) {
        std::optional<size_t> pos = s.runs[r]->FindEntry(batch[i]);
        if (pos) {
          if (!s.runs[r]->IsDead(*pos)) where[i] = (uint64_t{r} << 40) | *pos;
          break;
        }
      }
    }
  });
  for (uint64_t w : where) {
    if (w == kNone) continue;
    s.runs[w >> 40]->MarkDead(w & ((uint64_t{1} << 40) - 1));
    ++removed;
  }
  s.num_live -= removed;
  for (size_t r = s.runs.size(); r-- > 0;) MaybeCompact(s, r);
  return removed;
}

void HammingIndex::Compact() {
  std::unique_ptr<HammingRun> owned;
  const HammingRun* clean = internal::CleanRun(*state_, &owned);
  if (clean == nullptr) {
    state_->runs.clear();
    state_->pending.clear();
    return;
  }
  if (owned == nullptr) return;  // already one clean run
  state_->runs.clear();
  state_->runs.push_back(std::move(owned));
  state_->pending.clear();
}

std::vector<HammingMatch> HammingIndex::FindAll(uint64_t query) const {
  std::vector<ScanHit> hits;
  std::vector<HammingMatch> out;
  FindAllInto(*state_, query, &hits, &out);
  return out;
}

HammingMatchesBulk HammingIndex::FindAllBulk(std::span<const uint64_t> queries) const {
  constexpr size_t kChunk = 2048;
  const size_t num_chunks = (queries.size() + kChunk - 1) / kChunk;
  std::vector<std::vector<HammingMatch>> chunk_matches(num_chunks);
  HammingMatchesBulk out;
  out.offsets.assign(queries.size() + 1, 0);
  ForChunks(queries.size(), kChunk, [&](size_t c, size_t begin, size_t end) {
    BatchScratch scratch;
    std::vector<HammingMatch>& matches = chunk_matches[c];
    for (size_t b = begin; b < end; b += internal::kScanBatch) {
      const size_t n = std::min(internal::kScanBatch, end - b);
      FindBatch(*state_, queries.subspan(b, n), &scratch);
      for (size_t i = 0; i < n; ++i) {
        matches.insert(matches.end(), scratch.matches[i].begin(), scratch.matches[i].end());
        out.offsets[b + i + 1] = matches.size();  // chunk-local for now
      }
    }
  });
  std::vector<size_t> chunk_base(num_chunks + 1, 0);
  for (size_t c = 0; c < num_chunks; ++c) {
    chunk_base[c + 1] = chunk_base[c] + chunk_matches[c].size();
  }
  out.matches.resize(chunk_base[num_chunks]);
  ForChunks(queries.size(), kChunk, [&](size_t c, size_t begin, size_t end) {
    std::copy(chunk_matches[c].begin(), chunk_matches[c].end(),
              out.matches.begin() + chunk_base[c]);
    for (size_t i = begin; i < end; ++i) out.offsets[i + 1] += chunk_base[c];
  });
  return out;
}

std::optional<HammingMatch> HammingIndex::FindFirst(uint64_t query) const {
  std::vector<ScanHit> hits;
  std::vector<HammingMatch> scratch;
  return FindFirstOf(*state_, query, &hits, &scratch);
}

std::vector<std::optional<HammingMatch>> HammingIndex::FindFirstBulk(
    std::span<const uint64_t> queries) const {
  std::vector<std::optional<HammingMatch>> out(queries.size());
  ForChunks(queries.size(), 2048, [&](size_t, size_t begin, size_t end) {
    BatchScratch scratch;
    for (size_t b = begin; b < end; b += internal::kScanBatch) {
      const size_t n = std::min(internal::kScanBatch, end - b);
      FindBatch(*state_, queries.subspan(b, n), &scratch);
      for (size_t i = 0; i < n; ++i) {
        if (!scratch.matches[i].empty()) out[b + i] = scratch.matches[i].front();
      }
    }
  });
  return out;
}

std::vector<HammingPair> HammingIndex::SelfJoin() const {
  std::unique_ptr<HammingRun> owned;
  const HammingRun* run = internal::CleanRun(*state_, &owned);
  if (run == nullptr) return {};
  return internal::SelfJoinRun(state_->layout, *run, table_begin(), table_end());
}

Result<std::vector<HammingPair>> HammingIndex::SelfJoinTables(uint64_t table_begin,
                                                              uint64_t table_end) const {
  NEARDUP_RETURN_IF_ERROR(CheckTableRange(table_begin, table_end, this->table_begin(),
                                          this->table_end(), num_tables()));
  std::unique_ptr<HammingRun> owned;
  const HammingRun* run = internal::CleanRun(*state_, &owned);
  if (run == nullptr) return std::vector<HammingPair>{};
  return internal::SelfJoinRun(state_->layout, *run, table_begin, table_end);
}

HammingClusters HammingIndex::Clusters(size_t min_cluster_size) const {
  std::unique_ptr<HammingRun> owned;
  const HammingRun* run = internal::CleanRun(*state_, &owned);
  if (run == nullptr) return HammingClusters{.offsets = {0}, .members = {}};
  return internal::ClustersOfRun(state_->layout, *run, min_cluster_size);
}

Status HammingIndex::Save(const std::string& path) const {
  if (!state_->layout.holds_all()) {
    return FailedPreconditionError("a HammingIndex of tables [" + std::to_string(table_begin()) +
                                   ", " + std::to_string(table_end()) + ") of " +
                                   std::to_string(num_tables()) +
                                   " cannot be saved: the file format holds every table");
  }
  std::unique_ptr<HammingRun> owned;
  const HammingRun* run = internal::CleanRun(*state_, &owned);
  return internal::SaveRun(state_->layout, run, path);
}

Result<HammingIndex> HammingIndex::Open(const std::string& path,
                                        const HammingOpenOptions& options) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<HammingIndexState> state,
                           internal::OpenState(path, options));
  return HammingIndex(std::move(state));
}

}  // namespace neardup
