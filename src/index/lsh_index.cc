#include "neardup/lsh_index.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "index/lsh_band_key.h"
#include "index/lsh_index_state.h"
#include "util/mix.h"
#include "util/status_fallback.h"

namespace neardup {

namespace {

using internal::ChainLink;
using internal::HugePageVector;
using internal::LshBand;
using internal::LshIndexState;
using internal::ShardedSlotTable;

// Runs fn(begin, end) over [0, n), on all cores when `parallel`.
template <typename Fn>
void ForRange(size_t n, bool parallel, Fn&& fn) {
  if (!parallel) {
    fn(size_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
                    [&](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); });
}

constexpr uint32_t kNoSlot = ShardedSlotTable::kNoSlot;
constexpr size_t kMaxDocuments = ShardedSlotTable::kMaxEntries;
// InsertBulk batches below this size run on the calling thread: the task
// overhead of oneTBB is not repaid.
constexpr size_t kParallelInsertThreshold = 4096;

// Band keys of one sketch into a caller buffer, stack-allocated for up to
// kInlineBands bands.
constexpr int kInlineBands = 64;

// Computes the band keys of one sketch and prefetches each band's table
// position as soon as its key is known, so that the memory accesses overlap
// the hashing of the following bands.
class BandKeys {
 public:
  BandKeys(const LshIndexState& state, const uint64_t* sketch) {
    const LshParams& params = state.params;
    if (params.num_bands > kInlineBands) {
      heap_.resize(params.num_bands);
      keys_ = heap_.data();
    }
    switch (params.rows_per_band) {
      case 8:
        HashAndPrefetch<8>(state, sketch);
        break;
      case 13:
        HashAndPrefetch<13>(state, sketch);
        break;
      default:
        HashAndPrefetch<0>(state, sketch);
    }
  }
  uint64_t operator[](int band) const { return keys_[band]; }

 private:
  // kRows > 0: rows_per_band known at compile time (see ComputeBandKeys).
  template <int kRows>
  void HashAndPrefetch(const LshIndexState& state, const uint64_t* sketch) {
    const int rows = kRows > 0 ? kRows : state.params.rows_per_band;
    for (int band = 0; band < state.params.num_bands; ++band) {
      keys_[band] = internal::BandKey(sketch, rows, state.first_band + band);
      state.bands[band].table.Prefetch(keys_[band]);
    }
  }

  uint64_t inline_[kInlineBands];
  std::vector<uint64_t> heap_;
  uint64_t* keys_ = inline_;
};

size_t FindHead(const LshBand& band, uint64_t key) {
  return band.table.Find(key, band.keys.data());
}

// Links `slot` (whose key's high half is already in band.keys[slot]) at the
// head of its key's chain. `staggered`: the table's shards grow on the
// schedule of band `b` of `num_bands` (ShardedBandTable::
// FindOrInsertStaggered), else at load 1/2. Below a Reserve either would
// do (staggered growth never comes before load 1/2, so it keeps the
// Reserve's room too); the flag keeps InsertKeys' choice beside
// GrowBandAhead's, on the same condition (n >= reserved), and the inserts
// below a Reserve on FindOrInsert's plain path.
void LinkIntoBand(LshBand& band, uint32_t slot, uint64_t key, bool staggered, int b,
                  int num_bands) {
  const auto [pos, inserted] = staggered ? band.table.FindOrInsertStaggered(
                                               key, slot, band.keys.data(), static_cast<size_t>(b),
                                               static_cast<size_t>(num_bands))
                                         : band.table.FindOrInsert(key, slot, band.keys.data());
  if (inserted) {
    band.links[slot] = ChainLink{kNoSlot, kNoSlot};
    return;
  }
  const uint32_t head = band.table.SlotAt(pos);
  band.links[slot] = ChainLink{head, kNoSlot};
  band.links[head].prev = slot;
  band.table.SetSlotAt(pos, slot);
}

// Insert's growth of the band arrays, spread over the inserts: band b's
// arrays double once the documents pass 1/2 + b / (2 num_bands) of their
// capacity, instead of every band's at the same insert (all bands hold one
// key per document, so they fill together). One insert then copies and
// first-touches the arrays of one band, not of all: a stream adding one
// document at a time paused ~35 ms at 32k documents (16 bands), and the
// pause grows with the index. Since session 16 a growth past 2 MiB moves
// the arrays' pages instead of copying them (lsh_huge_page_array.h: ~0.05
// ms for two 8 MiB arrays, ~20 ms copied on the loaded VM); the schedule
// still keeps the copies below 2 MiB and the page moves one band per
// insert.
// Below 64 entries growth is left to the arrays. Not below a Reserve (its room is never grown). The
// band tables are 8 shards that grow at their own inserts (ShardedBandTable;
// until session 12 band b's table doubled at 3/8 + b / (8 num_bands) of its
// capacity, which put half the bands' table steps on the same insert as
// another band's array step), but the 8 num_bands shards fill together, so
// since session 17 Insert staggers them too (ShardedBandTable::
// FindOrInsertStaggered: shard s of band b doubles at a load of 1/2 +
// (s num_bands + b) / (128 num_bands), later than 1/2, so never bigger).
void GrowBandAhead(LshBand& band, int b, int num_bands, size_t documents) {
  const size_t capacity = band.keys.capacity();
  if (capacity >= 64 && documents >= capacity / 2 + capacity / 2 * b / num_bands) {
    band.keys.reserve(2 * capacity);
    band.links.reserve(2 * capacity);
  }
}

size_t FindHeadPosition(const LshBand& band, uint32_t head) {
  const size_t pos = band.table.FindSlot(head, band.keys.data());
  NEARDUP_CHECK(pos != internal::ShardedBandTable::kNotFound)
      << "chain head " << head << " missing from its band";
  return pos;
}

void UnlinkFromBand(LshBand& band, uint32_t slot) {
  const ChainLink link = band.links[slot];
  if (link.prev == kNoSlot) {
    const size_t pos = FindHeadPosition(band, slot);
    if (link.next == kNoSlot) {
      band.table.EraseAt(pos, band.keys.data());
    } else {
      band.table.SetSlotAt(pos, link.next);
    }
  } else {
    band.links[link.prev].next = link.next;
  }
  if (link.next != kNoSlot) band.links[link.next].prev = link.prev;
}

// Moves the (linked) document in slot `from` to the free slot `to`.
void MoveSlot(LshBand& band, uint32_t from, uint32_t to) {
  const ChainLink link = band.links[from];
  band.keys[to] = band.keys[from];
  band.links[to] = link;
  if (link.prev == kNoSlot) {
    band.table.SetSlotAt(FindHeadPosition(band, from), to);
  } else {
    band.links[link.prev].next = to;
  }
  if (link.next != kNoSlot) band.links[link.next].prev = to;
}

// The id pass of a serial InsertBulk: appends doc_ids and inserts each into
// the id table (prefetched a few ids ahead), which doubles as the
// duplicate check. On a repeated or present id it undoes the ids inserted so
// far and fails, leaving the contents as they were (the id table may keep
// its grown capacity, as after Reserve). No sort and no second lookup per id,
// which the parallel path's up-front validation needs.
Status InsertIdsSerial(LshIndexState& s, std::span<const uint64_t> doc_ids) {
  // As in the band passes of InsertBulk: 24 ahead measured 10-15% faster than
  // 8 on 1M documents (a table miss costs about 0.1 µs on this VM's L3).
  constexpr size_t kPrefetchDistance = 24;
  const size_t base = s.doc_ids.size();
  const size_t m = doc_ids.size();
  s.id_table.Reserve(base + m);
  s.doc_ids.append(doc_ids.begin(), doc_ids.end());
  for (size_t i = 0; i < m; ++i) {
    if (i + kPrefetchDistance < m) {
      s.id_table.Prefetch(internal::Mix64(doc_ids[i + kPrefetchDistance]));
    }
    const uint64_t id = doc_ids[i];
    const auto [pos, inserted] =
        s.id_table.FindOrInsert(internal::Mix64(id), static_cast<uint32_t>(base + i),
                                [&](uint32_t other) { return s.doc_ids[other] == id; });
    if (inserted) continue;
    const bool in_batch = s.id_table.SlotAt(pos) >= base;
    for (size_t j = 0; j < i; ++j) {
      const auto undo_slot = static_cast<uint32_t>(base + j);
      const size_t undo = s.id_table.Find(internal::Mix64(doc_ids[j]),
                                          [&](uint32_t slot) { return slot == undo_slot; });
      NEARDUP_CHECK(undo != ShardedSlotTable::kNotFound) << "doc_id " << doc_ids[j] << " lost";
      s.id_table.EraseAt(undo);
    }
    s.doc_ids.truncate(base);
    return InvalidArgumentError(
        in_batch ? "doc_ids contains doc_id (" + std::to_string(id) + ") more than once"
                 : "doc_id (" + std::to_string(id) + ") is already in the LSH index");
  }
  return Status::Ok();
}

bool ContainsId(const LshIndexState& s, uint64_t doc_id) {
  return s.id_table.Find(internal::Mix64(doc_id), [&](uint32_t slot) {
    return s.doc_ids[slot] == doc_id;
  }) != ShardedSlotTable::kNotFound;
}

// InsertBulk hashes the band keys of a chunk of documents into a scratch
// buffer of at most this many bytes (num_bands * 8 bytes a document: 32K
// documents at b = 16), allocated once per call in huge pages, so that its
// page faults are few and paid once; each chunk costs two parallel loops,
// so chunks are not made smaller than the buffer allows.
constexpr size_t kKeyScratchBytes = size_t{4} << 20;
constexpr size_t kMinKeyChunk = 1024;

size_t KeyChunkDocuments(int num_bands) {
  return std::max(kMinKeyChunk, kKeyScratchBytes / (sizeof(uint64_t) * num_bands));
}
// Table prefetches run 24 documents ahead: a miss into a 16 MB table costs
// about 0.1 us here, and 24 measured 10-15% faster than 8.
constexpr uint32_t kTablePrefetch = 24;

// Links slots [first, first + count) of `band` into their keys' chains;
// band_keys[i] is the key of slot first + i.
void FillBand(LshBand& band, uint32_t first, size_t count, const uint64_t* band_keys) {
  ChainLink* const links = band.links.data();
  band.table.FindOrInsertRange(
      first, static_cast<uint32_t>(first + count), kTablePrefetch,
      [band_keys, first](uint32_t slot) { return band_keys[slot - first]; }, band.keys.data(),
      [links](uint32_t slot) {
        links[slot] = ChainLink{kNoSlot, kNoSlot};
      },
      [links](uint32_t slot, uint32_t head) {
        // `slot` becomes the head of its key's chain.
        links[slot] = ChainLink{head, kNoSlot};
        links[head].prev = slot;
        return slot;
      });
}

// Inserts the ids of slots [first, first + count) (already in s.doc_ids)
// into the id table. REQUIRES: validated as new and unique. The table is
// reserved for them, but a shard may still grow here (its share of the ids
// can exceed its reserve by chance); nothing else touches the table meanwhile.
void FillIdTable(LshIndexState& s, size_t first, size_t count) {
  const size_t end = first + count;
  for (size_t slot = first; slot < end; ++slot) {
    if (slot + kTablePrefetch < end) {
      s.id_table.Prefetch(internal::Mix64(s.doc_ids[slot + kTablePrefetch]));
    }
    const uint64_t id = s.doc_ids[slot];
    const bool inserted = s.id_table
                              .FindOrInsert(internal::Mix64(id), static_cast<uint32_t>(slot),
                                            [&](uint32_t other) { return s.doc_ids[other] == id; })
                              .second;
    NEARDUP_CHECK(inserted) << "doc_id " << id << " was validated as new";
  }
}

// Called in a bad_alloc handler (StatusOrShort: "out of memory" when even
// the message cannot be allocated).
Status OutOfMemoryError(size_t documents) {
  return internal::StatusOrShort(StatusCode::kResourceExhausted, "out of memory", [&] {
    return ResourceExhaustedError("out of memory inserting " + std::to_string(documents) +
                                  " document(s) into the LSH index (left unchanged)");
  });
}

// The undo of inserts into slots from `n` on: the band arrays and doc_ids
// cut back to n slots (capacity kept). Allocates nothing.
void TruncateSlotsTo(LshIndexState& s, size_t n) {
  for (LshBand& band : s.bands) {
    band.keys.resize(std::min(band.keys.size(), n));
    band.links.resize(std::min(band.links.size(), n));
  }
  s.doc_ids.truncate(std::min(s.doc_ids.size(), n));
}

// Removes `slot`'s entry (of an id hashing to `id_hash`) from the id table,
// if the insert put it there. Allocates nothing.
void EraseIdOfSlot(LshIndexState& s, uint64_t id_hash, uint32_t slot) {
  const size_t pos = s.id_table.Find(id_hash, [slot](uint32_t other) { return other == slot; });
  if (pos != ShardedSlotTable::kNotFound) s.id_table.EraseAt(pos);
}

// Undoes an InsertBulkOf of doc_ids into slots [base, base + m) that ran
// out of memory part way: whatever of it reached the id table, doc_ids and
// each band (keys_of as InsertBulkOf's; `keys` has room for num_bands keys).
// Within one key's chain a band links its new slots in slot order, each
// becoming the chain's head (FillBand; FindOrInsertRange keeps a key's
// slots in order), so going from the last slot back, a slot that was linked
// is at its chain's head and one that was not is not. Allocates nothing.
template <typename KeysOf>
void UndoBulkInsert(LshIndexState& s, std::span<const uint64_t> doc_ids, size_t base,
                    const KeysOf& keys_of, uint64_t* keys) {
  const int num_bands = s.params.num_bands;
  for (size_t i = doc_ids.size(); i-- > 0;) {
    const auto slot = static_cast<uint32_t>(base + i);
    bool computed = false;
    for (int b = 0; b < num_bands; ++b) {
      LshBand& band = s.bands[b];
      if (band.keys.size() <= slot) continue;  // never resized for it
      if (!computed) keys_of(i, keys);
      computed = true;
      const size_t pos = FindHead(band, keys[b]);
      if (pos != internal::ShardedBandTable::kNotFound && band.table.SlotAt(pos) == slot) {
        UnlinkFromBand(band, slot);
      }
    }
    EraseIdOfSlot(s, internal::Mix64(doc_ids[i]), slot);
  }
  TruncateSlotsTo(s, base);
}

// InsertBulkOf's work, which may throw bad_alloc part way (InsertBulkOf
// undoes it then). REQUIRES: 0 < doc_ids.size() <= kMaxDocuments - size.
template <typename KeysOf>
Status InsertBulkIn(LshIndexState& s, std::span<const uint64_t> doc_ids, const KeysOf& keys_of) {
  const size_t m = doc_ids.size();
  const size_t base = s.doc_ids.size();
  const bool parallel = m >= kParallelInsertThreshold;

  if (!parallel) {
    NEARDUP_RETURN_IF_ERROR(InsertIdsSerial(s, doc_ids));
  } else {
    // Validate everything before changing anything.
    std::vector<uint64_t> sorted_ids(doc_ids.begin(), doc_ids.end());
    tbb::parallel_sort(sorted_ids.begin(), sorted_ids.end());
    const auto repeated = std::adjacent_find(sorted_ids.begin(), sorted_ids.end());
    if (repeated != sorted_ids.end()) {
      return InvalidArgumentError("doc_ids contains doc_id (" + std::to_string(*repeated) +
                                  ") more than once");
    }
    const size_t first_present = tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, m), m,
        [&](const tbb::blocked_range<size_t>& r, size_t found) {
          for (size_t i = r.begin(); i < r.end(); ++i) {
            if (ContainsId(s, doc_ids[i])) return std::min(found, i);
          }
          return found;
        },
        [](size_t a, size_t b) { return std::min(a, b); });
    if (first_present != m) {
      return InvalidArgumentError("doc_id (" + std::to_string(doc_ids[first_present]) +
                                  ") is already in the LSH index");
    }
    s.doc_ids.append(doc_ids.begin(), doc_ids.end());
  }

  const size_t total = base + m;
  for (LshBand& band : s.bands) {
    band.keys.resize(total);
    band.links.resize(total);
  }
  if (parallel) s.id_table.Reserve(total);
  // The new documents go in chunks: hash the chunk's band keys into the
  // scratch buffer (band-major, full 64-bit keys), reading each sketch once
  // and whole (the sketches may lie apart: one page, one TLB miss, per
  // document rather than per document and band), then fill each band's
  // table from it, which also writes the high halves into band.keys. The
  // scratch keeps the band arrays at 4 bytes per key while the table pass
  // still sees whole keys.
  const int num_bands = s.params.num_bands;
  const size_t chunk = std::min(m, KeyChunkDocuments(num_bands));
  HugePageVector<uint64_t> chunk_keys(chunk * num_bands);
  for (size_t chunk_begin = 0; chunk_begin < m; chunk_begin += chunk) {
    const size_t count = std::min(chunk, m - chunk_begin);
    ForRange(count, parallel, [&](size_t begin, size_t end) {
      uint64_t keys[kInlineBands];
      std::vector<uint64_t> heap_keys(num_bands > kInlineBands ? num_bands : 0);
      uint64_t* const band_keys = num_bands > kInlineBands ? heap_keys.data() : keys;
      for (size_t i = begin; i < end; ++i) {
        keys_of(chunk_begin + i, band_keys);
        for (int b = 0; b < num_bands; ++b) chunk_keys[b * chunk + i] = band_keys[b];
      }
    });
    // The id table and each band's table are independent: fill them
    // concurrently, task `num_bands` being the id table (filled already on
    // the serial path).
    const auto first_slot = static_cast<uint32_t>(base + chunk_begin);
    ForRange(num_bands + (parallel ? 1 : 0), parallel, [&](size_t begin, size_t end) {
      for (size_t task = begin; task < end; ++task) {
        if (task == static_cast<size_t>(num_bands)) {
          FillIdTable(s, first_slot, count);
        } else {
          FillBand(s.bands[task], first_slot, count, chunk_keys.data() + task * chunk);
        }
      }
    });
  }
  return Status::Ok();
}

// InsertBulk, InsertBulkSpans and InsertBulkBandKeys: keys_of(i, keys)
// writes doc_ids[i]'s keys of the index's bands into keys[0, num_bands)
// (sizes checked by the caller).
template <typename KeysOf>
Status InsertBulkOf(LshIndexState& s, std::span<const uint64_t> doc_ids, const KeysOf& keys_of) {
  const size_t m = doc_ids.size();
  const size_t base = s.doc_ids.size();
  if (m > kMaxDocuments - base) {
    return ResourceExhaustedError("inserting " + std::to_string(m) + " documents into " +
                                  std::to_string(base) + " would exceed the LSH index maximum of " +
                                  std::to_string(kMaxDocuments));
  }
  if (m == 0) return Status::Ok();
  // Allocated before anything changes: UndoBulkInsert's key buffer.
  std::vector<uint64_t> undo_keys;
  try {
    undo_keys.resize(static_cast<size_t>(s.params.num_bands));
    return InsertBulkIn(s, doc_ids, keys_of);
  } catch (const std::bad_alloc&) {
    if (!undo_keys.empty()) UndoBulkInsert(s, doc_ids, base, keys_of, undo_keys.data());
    return OutOfMemoryError(m);
  }
}
}  // namespace

LshIndex::LshIndex(std::unique_ptr<internal::LshIndexState> state) : state_(std::move(state)) {}
LshIndex::LshIndex(LshIndex&&) noexcept = default;
LshIndex& LshIndex::operator=(LshIndex&&) noexcept = default;
LshIndex::~LshIndex() = default;

namespace {

// Undoes an insert of `doc_id` into slot `n` that ran out of memory after
// linking it into bands [0, linked): whatever of it reached the id table,
// doc_ids and the band arrays. Frees nothing and allocates nothing.
void UndoInsert(LshIndexState& s, size_t n, uint64_t id_hash, int linked) {
  const auto slot = static_cast<uint32_t>(n);
  for (int b = 0; b < linked; ++b) UnlinkFromBand(s.bands[b], slot);
  TruncateSlotsTo(s, n);
  EraseIdOfSlot(s, id_hash, slot);
}

// Insert's and InsertBandKeys' shared part: `keys` (any type with
// operator[](band)) are the document's keys of the index's bands; the id's
// slot is prefetched. A growth that throws bad_alloc changes nothing
// (HugePageArray, the tables' Grow, SegmentedArray::push_back), so undoing
// what came before it restores the index (UndoInsert).
template <typename Keys>
Status InsertKeys(LshIndexState& s, uint64_t doc_id, uint64_t id_hash, const Keys& keys) {
  const size_t n = s.doc_ids.size();
  if (n >= kMaxDocuments) {
    return ResourceExhaustedError("the LSH index holds its maximum of " +
                                  std::to_string(kMaxDocuments) + " documents");
  }
  const int num_bands = s.params.num_bands;
  const uint32_t slot = static_cast<uint32_t>(n);
  int linked = 0;
  try {
    // Beyond a Reserve the id table's shards grow at staggered loads (as
    // the bands' below: LinkIntoBand), not all near the same document.
    const auto same_id = [&](uint32_t other) { return s.doc_ids[other] == doc_id; };
    const bool inserted = n >= s.reserved
                              ? s.id_table.FindOrInsertStaggered(id_hash, slot, same_id).second
                              : s.id_table.FindOrInsert(id_hash, slot, same_id).second;
    if (!inserted) {
      return InvalidArgumentError("doc_id (" + std::to_string(doc_id) +
                                  ") is already in the LSH index");
    }
    s.doc_ids.push_back(doc_id);
    for (; linked < num_bands; ++linked) {
      LshBand& band = s.bands[linked];
      const bool grows = n >= s.reserved;
      if (grows) GrowBandAhead(band, linked, num_bands, n + 1);
      band.keys.push_back(internal::ShardedBandTable::HighHalf(keys[linked]));
      band.links.emplace_back();
      LinkIntoBand(band, slot, keys[linked], grows, linked, num_bands);
    }
  } catch (const std::bad_alloc&) {
    UndoInsert(s, n, id_hash, linked);
    return OutOfMemoryError(1);
  }
  return Status::Ok();
}

// Query's and QueryBandKeys' shared part.
template <typename Keys>
std::vector<uint64_t> QueryKeys(const LshIndexState& s, const Keys& keys) {
  std::vector<uint64_t> out;
  for (int b = 0; b < s.params.num_bands; ++b) {
    const LshBand& band = s.bands[b];
    const size_t pos = FindHead(band, keys[b]);
    if (pos == internal::ShardedBandTable::kNotFound) continue;
    for (uint32_t slot = band.table.SlotAt(pos); slot != kNoSlot; slot = band.links[slot].next) {
      out.push_back(s.doc_ids[slot]);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status CheckKeyCount(const LshIndexState& s, size_t count) {
  if (count != static_cast<size_t>(s.params.num_bands)) {
    return InvalidArgumentError(std::to_string(count) + " band keys; the index holds " +
                                std::to_string(s.params.num_bands) + " bands");
  }
  return Status::Ok();
}

}  // namespace

Result<LshIndex> LshIndex::Create(LshParams params, int num_hashes) {
  return CreateForBands(params, num_hashes, 0, params.num_bands);
}

Result<LshIndex> LshIndex::CreateForBands(LshParams params, int num_hashes, int first_band,
                                          int num_bands) {
  if (params.num_bands < 1) {
    return InvalidArgumentError("num_bands (" + std::to_string(params.num_bands) +
                                ") must be at least 1");
  }
  if (params.rows_per_band < 1) {
    return InvalidArgumentError("rows_per_band (" + std::to_string(params.rows_per_band) +
                                ") must be at least 1");
  }
  if (num_hashes < 1) {
    return InvalidArgumentError("num_hashes (" + std::to_string(num_hashes) +
                                ") must be at least 1");
  }
  const int64_t used = int64_t{params.num_bands} * params.rows_per_band;
  if (used > num_hashes) {
    return InvalidArgumentError("num_bands * rows_per_band (" + std::to_string(params.num_bands) +
                                " * " + std::to_string(params.rows_per_band) + " = " +
                                std::to_string(used) + ") must be at most num_hashes (" +
                                std::to_string(num_hashes) + ")");
  }
  if (first_band < 0 || num_bands < 1 || int64_t{first_band} + num_bands > params.num_bands) {
    return InvalidArgumentError("bands [" + std::to_string(first_band) + ", " +
                                std::to_string(int64_t{first_band} + num_bands) +
                                ") must be a non-empty range within the scheme's " +
                                std::to_string(params.num_bands) + " bands");
  }
  auto state = std::make_unique<LshIndexState>();
  state->params = LshParams{num_bands, params.rows_per_band};
  state->first_band = first_band;
  state->num_hashes = num_hashes;
  state->bands.resize(num_bands);
  // Each band's arrays start at a different offset into their huge pages,
  // so that the bands, which fill in step, cross into new pages (a 2 MiB
  // page fault each) at different inserts (lsh_huge_page_allocator.h).
  const size_t step = internal::kHugePageBytes / num_bands / 128 * 64;
  for (int b = 0; b < num_bands; ++b) {
    LshBand& band = state->bands[b];
    const size_t offset = 2 * step * b;
    band.keys = internal::HugePageArray<uint32_t>(offset);
    band.links = internal::HugePageArray<ChainLink>(offset + step);
  }
  return LshIndex(std::move(state));
}

const LshParams& LshIndex::params() const { return state_->params; }
int LshIndex::num_hashes() const { return state_->num_hashes; }
size_t LshIndex::size() const { return state_->doc_ids.size(); }

bool LshIndex::Contains(uint64_t doc_id) const { return ContainsId(*state_, doc_id); }

Status LshIndex::Insert(uint64_t doc_id, std::span<const uint64_t> sketch) {
  LshIndexState& s = *state_;
  if (sketch.size() != static_cast<size_t>(s.num_hashes)) {
    return InvalidArgumentError("sketch size (" + std::to_string(sketch.size()) +
                                ") must equal num_hashes (" + std::to_string(s.num_hashes) + ")");
  }
  const uint64_t id_hash = internal::Mix64(doc_id);
  s.id_table.Prefetch(id_hash);
  const BandKeys keys(s, sketch.data());
  return InsertKeys(s, doc_id, id_hash, keys);
}

Status LshIndex::InsertBandKeys(uint64_t doc_id, std::span<const uint64_t> keys) {
  LshIndexState& s = *state_;
  NEARDUP_RETURN_IF_ERROR(CheckKeyCount(s, keys.size()));
  const uint64_t id_hash = internal::Mix64(doc_id);
  s.id_table.Prefetch(id_hash);
  for (int b = 0; b < s.params.num_bands; ++b) s.bands[b].table.Prefetch(keys[b]);
  return InsertKeys(s, doc_id, id_hash, keys);
}

Status LshIndex::BandKeysOf(std::span<const uint64_t> sketch, std::vector<uint64_t>* keys) const {
  const LshIndexState& s = *state_;
  if (sketch.size() != static_cast<size_t>(s.num_hashes)) {
    return InvalidArgumentError("sketch size (" + std::to_string(sketch.size()) +
                                ") must equal num_hashes (" + std::to_string(s.num_hashes) + ")");
  }
  keys->resize(static_cast<size_t>(s.params.num_bands));
  internal::ComputeBandKeys(s.params, sketch.data(), keys->data(), s.first_band);
  return Status::Ok();
}

Status LshIndex::InsertBulk(std::span<const uint64_t> doc_ids,
                            std::span<const uint64_t> sketches_row_major) {
  const size_t k = static_cast<size_t>(state_->num_hashes);
  const size_t m = doc_ids.size();
  if (sketches_row_major.size() % k != 0 || sketches_row_major.size() / k != m) {
    return InvalidArgumentError("sketches_row_major size (" +
                                std::to_string(sketches_row_major.size()) +
                                ") must equal the number of doc_ids (" + std::to_string(m) +
                                ") times num_hashes (" + std::to_string(k) + ")");
  }
  const uint64_t* const values = sketches_row_major.data();
  const LshIndexState& s = *state_;
  return InsertBulkOf(*state_, doc_ids, [values, k, &s](size_t i, uint64_t* keys) {
    internal::ComputeBandKeys(s.params, values + i * k, keys, s.first_band);
  });
}

namespace {

// One row per document id, each of row_size values (InsertBulkSpans' sketches,
// InsertBulkBandKeys' key rows); an error names the rows, the first bad row
// and, around the expected size, what a row holds.
struct RowNames {
  const char* rows;         // "sketches"
  const char* row;          // "sketch"
  const char* before_size;  // " values; num_hashes is "
  const char* after_size;   // ""
};

Status CheckRowsPerDocument(std::span<const uint64_t> doc_ids,
                            std::span<const std::span<const uint64_t>> rows, size_t row_size,
                            const RowNames& names) {
  if (rows.size() != doc_ids.size()) {
    return InvalidArgumentError(std::string(names.rows) + " (" + std::to_string(rows.size()) +
                                ") must be as many as doc_ids (" + std::to_string(doc_ids.size()) +
                                ")");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != row_size) {
      return InvalidArgumentError(std::string(names.row) + " " + std::to_string(i) + " has " +
                                  std::to_string(rows[i].size()) + names.before_size +
                                  std::to_string(row_size) + names.after_size);
    }
  }
  return Status::Ok();
}

}  // namespace

Status LshIndex::InsertBulkSpans(std::span<const uint64_t> doc_ids,
                                 std::span<const std::span<const uint64_t>> sketches) {
  NEARDUP_RETURN_IF_ERROR(
      CheckRowsPerDocument(doc_ids, sketches, static_cast<size_t>(state_->num_hashes),
                           {"sketches", "sketch", " values; num_hashes is ", ""}));
  const LshIndexState& s = *state_;
  return InsertBulkOf(*state_, doc_ids, [sketches, &s](size_t i, uint64_t* keys) {
    internal::ComputeBandKeys(s.params, sketches[i].data(), keys, s.first_band);
  });
}

Status LshIndex::InsertBulkBandKeys(std::span<const uint64_t> doc_ids,
                                    std::span<const std::span<const uint64_t>> keys) {
  NEARDUP_RETURN_IF_ERROR(
      CheckRowsPerDocument(doc_ids, keys, static_cast<size_t>(state_->params.num_bands),
                           {"key rows", "key row", " keys; the index holds ", " bands"}));
  return InsertBulkOf(*state_, doc_ids, [keys](size_t i, uint64_t* out) {
    std::copy(keys[i].begin(), keys[i].end(), out);
  });
}

Status LshIndex::Reserve(size_t num_documents) {
  LshIndexState& s = *state_;
  if (num_documents > kMaxDocuments) {
    return ResourceExhaustedError("cannot reserve " + std::to_string(num_documents) +
                                  " documents: the LSH index holds at most " +
                                  std::to_string(kMaxDocuments));
  }
  s.reserved = std::max(s.reserved, num_documents);
  s.doc_ids.reserve(num_documents);
  // Growing a table writes (and first touches) all of it: the tables are
  // independent, so large ones grow on all cores, one task per table (task
  // `num_bands` the id table).
  const size_t num_bands = s.bands.size();
  ForRange(num_bands + 1, num_documents >= kParallelInsertThreshold, [&](size_t begin, size_t end) {
    for (size_t task = begin; task < end; ++task) {
      if (task == num_bands) {
        s.id_table.Reserve(num_documents);
        continue;
      }
      LshBand& band = s.bands[task];
      band.keys.reserve(num_documents);
      band.links.reserve(num_documents);
      band.table.Reserve(num_documents, band.keys.data());
    }
  });
  return Status::Ok();
}

bool LshIndex::Remove(uint64_t doc_id) {
  LshIndexState& s = *state_;
  const size_t pos = s.id_table.Find(internal::Mix64(doc_id),
                                     [&](uint32_t slot) { return s.doc_ids[slot] == doc_id; });
  if (pos == ShardedSlotTable::kNotFound) return false;
  const uint32_t slot = s.id_table.SlotAt(pos);
  s.id_table.EraseAt(pos);
  for (LshBand& band : s.bands) UnlinkFromBand(band, slot);
  const uint32_t last = static_cast<uint32_t>(s.doc_ids.size() - 1);
  if (slot != last) {
    for (LshBand& band : s.bands) MoveSlot(band, last, slot);
    const uint64_t moved_id = s.doc_ids[last];
    const size_t moved_pos =
        s.id_table.Find(internal::Mix64(moved_id), [&](uint32_t other) { return other == last; });
    NEARDUP_CHECK(moved_pos != ShardedSlotTable::kNotFound)
        << "doc_id " << moved_id << " lost its slot";
    s.id_table.SetSlotAt(moved_pos, slot);
    s.doc_ids[slot] = moved_id;
  }
  s.doc_ids.pop_back();
  for (LshBand& band : s.bands) {
    band.keys.pop_back();
    band.links.pop_back();
  }
  return true;
}

Result<std::vector<uint64_t>> LshIndex::Query(std::span<const uint64_t> sketch) const {
  const LshIndexState& s = *state_;
  if (sketch.size() != static_cast<size_t>(s.num_hashes)) {
    return InvalidArgumentError("sketch size (" + std::to_string(sketch.size()) +
                                ") must equal num_hashes (" + std::to_string(s.num_hashes) + ")");
  }
  return QueryKeys(s, BandKeys(s, sketch.data()));
}

Result<std::vector<uint64_t>> LshIndex::QueryBandKeys(std::span<const uint64_t> keys) const {
  const LshIndexState& s = *state_;
  NEARDUP_RETURN_IF_ERROR(CheckKeyCount(s, keys.size()));
  for (int b = 0; b < s.params.num_bands; ++b) s.bands[b].table.Prefetch(keys[b]);
  return QueryKeys(s, keys);
}

size_t LshIndex::MemoryBytes() const {
  const LshIndexState& s = *state_;
  size_t bytes = sizeof(LshIndexState) + s.doc_ids.MemoryBytes() + s.id_table.MemoryBytes() +
                 s.bands.capacity() * sizeof(LshBand);
  for (const LshBand& band : s.bands) {
    // The arrays' huge pages, the offset's slack included (up to a page each).
    bytes += band.table.MemoryBytes() + internal::ReservedBytes(band.keys) +
             internal::ReservedBytes(band.links);
  }
  return bytes;
}

}  // namespace neardup
