// LshIndex: banded locality-sensitive hashing over k-value MinHash sketches
// (one-permutation hashing, densified), after Indyk and Motwani 1998 and
// Leskovec, Rajaraman, Ullman, "Mining of Massive Datasets", ch. 3.4.
//
// A sketch of num_hashes values is cut into num_bands bands of rows_per_band
// consecutive values (values past num_bands * rows_per_band are unused). Two
// documents are candidates when they agree on every value of at least one
// band; documents with Jaccard similarity s become candidates with probability
// 1 - (1 - s^r)^b (see neardup/lsh_params.h for choosing b and r). Candidates
// are not verified here: the caller compares the sketches (or documents).
//
// Invariant: each band is stored as a 64-bit band key, XXH3-64 of the band's
// rows_per_band values (little-endian bytes) seeded with the band index, so a
// band key is deterministic across processes and runs. Distinct value tuples
// collide with probability 2^-64 per pair and band; such a collision would
// only add a candidate, never lose one.
//
// Cost, with b bands and n documents:
//   Insert / Remove / Query: O(b * rows_per_band) to hash the bands, plus
//     expected O(b) hash-table probes, plus the size of the matching groups
//     (Query) -- no scan of the stored documents.
//   AllPairCandidates: O(b * n) chain walks plus, for each pair a band groups,
//     up to b head comparisons (a group of g documents sharing a band key
//     yields g(g-1)/2 pairs, so g exact duplicates cost g^2/2 pairs, emitted
//     once by the first band and checked in each later one).
//   Memory per document: 8 (id) + b * 12 (the band key's high half and
//     chain links; the low half lives in the band table's entry) + 16..32
//     (id table) + b * 14..32 (band tables, load <= 1/2, up to 9/16 for
//     Insert beyond a Reserve since session 17; less when documents share
//     band keys) bytes: about 445..750 bytes for b = 16, and from 2 MiB
//     a band array on, up to one 2 MiB huge page more per band array (their
//     staggered offsets). MemoryBytes() reports the exact figure.
//   Growth: a part at a time (session 12), so that no single Insert pays for
//     the whole index: the id table and each band's table are 8 shards that
//     rehash at their own inserts, the ids are in 4 MiB segments (nothing
//     copied past the first 4 MiB), and each band's arrays double at a
//     different insert.
// At most 2^31 documents.
//
// Thread safety: const methods (Query, AllPairCandidates, size, MemoryBytes)
// may run concurrently with each other; Insert, InsertBulk and Remove need an
// external lock excluding every other call. InsertBulk and AllPairCandidates
// use all cores through oneTBB.
#ifndef NEARDUP_LSH_INDEX_H_
#define NEARDUP_LSH_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "neardup/lsh_params.h"
#include "neardup/status.h"

namespace neardup {

namespace internal {
struct LshIndexState;
}  // namespace internal

class LshIndex {
 public:
  // REQUIRES (else InvalidArgument): num_bands >= 1, rows_per_band >= 1,
  // num_hashes >= 1, num_bands * rows_per_band <= num_hashes.
  static Result<LshIndex> Create(LshParams params, int num_hashes);

  // An index over bands [first_band, first_band + num_bands) of the scheme
  // `params` only: a document is keyed by those bands exactly as in an index
  // of the whole scheme, so the candidates of the whole scheme are the union
  // of the candidates of any split of its bands into ranges (how a job is
  // split across processes: neardup/near_duplicate_stages.h). params()
  // then reports the bands held ({num_bands, rows_per_band}).
  // REQUIRES (else InvalidArgument): as Create, and 0 <= first_band,
  // num_bands >= 1, first_band + num_bands <= params.num_bands.
  static Result<LshIndex> CreateForBands(LshParams params, int num_hashes, int first_band,
                                         int num_bands);

  LshIndex(LshIndex&&) noexcept;
  LshIndex& operator=(LshIndex&&) noexcept;
  ~LshIndex();

  const LshParams& params() const;
  int num_hashes() const;

  // Stores `sketch` under `doc_id`. InvalidArgument if sketch.size() !=
  // num_hashes() or doc_id is already present; ResourceExhausted past 2^31
  // documents or when memory runs out part way (session 17: what was
  // inserted is undone). On error the index's contents are unchanged (its
  // capacity, and so MemoryBytes(), may stay grown, as after Reserve).
  Status Insert(uint64_t doc_id, std::span<const uint64_t> sketch);

  // Inserts doc_ids[i] with sketch sketches_row_major[i * num_hashes ..
  // (i + 1) * num_hashes). Same errors as Insert (also for an id repeated in
  // doc_ids), checked before anything is inserted; running out of memory
  // part way undoes the batch. On error the contents are unchanged (the
  // capacity as Insert's). Large batches hash bands and fill the band tables
  // on all cores.
  Status InsertBulk(std::span<const uint64_t> doc_ids,
                    std::span<const uint64_t> sketches_row_major);
  // InsertBulk with sketches[i] the sketch of doc_ids[i], wherever each lies
  // (no copy into one array first); InvalidArgument, before anything is
  // inserted, unless there are as many sketches as ids, each of num_hashes
  // values. Each band reads only its rows of every sketch.
  Status InsertBulkSpans(std::span<const uint64_t> doc_ids,
                         std::span<const std::span<const uint64_t>> sketches);

  // InsertBulkSpans with each document's band keys given instead of its
  // sketch: keys[i] holds doc_ids[i]'s keys of the bands the index holds
  // (params().num_bands of them, band first_band + j at j), each the key an
  // index computes from the sketch (index/lsh_band_key.h's BandKey; the keys
  // a fingerprint stage computed ahead, so the sketches need not be kept).
  // InvalidArgument, before anything is inserted, unless there are as many
  // rows as ids, each of params().num_bands keys; the other errors as
  // InsertBulk.
  Status InsertBulkBandKeys(std::span<const uint64_t> doc_ids,
                            std::span<const std::span<const uint64_t>> keys);

  // Makes room for num_documents documents in total (stored ones included)
  // so that inserting up to that many grows no array and, unless the keys
  // are far from uniform, no table: no copying, no rehashing and no
  // first-touch page faults of the discarded smaller buffers during the
  // inserts. Each table is 8 shards chosen by key bits, each reserved for
  // its share plus four standard deviations (a shard that draws more grows
  // alone, 1/8 of the table). Allocates about MemoryBytes() of a full index
  // up front (the band tables are sized for one distinct key per document
  // per band). A no-op when the index already has the room.
  // ResourceExhausted above 2^31 documents.
  Status Reserve(size_t num_documents);

  // Removes `doc_id`; false if it is not present.
  bool Remove(uint64_t doc_id);

  bool Contains(uint64_t doc_id) const;

  // The ids of stored documents that share at least one band key with
  // `sketch`, sorted ascending and unique (a stored copy of `sketch` itself
  // is included). InvalidArgument if sketch.size() != num_hashes().
  Result<std::vector<uint64_t>> Query(std::span<const uint64_t> sketch) const;

  // The keys Insert and Query compute from `sketch` (params().num_bands of
  // them, into *keys), for a caller that queries a sketch and then inserts
  // it: QueryBandKeys and InsertBandKeys with them do as Query and Insert
  // with the sketch, the keys hashed once. InvalidArgument if sketch.size()
  // != num_hashes().
  Status BandKeysOf(std::span<const uint64_t> sketch, std::vector<uint64_t>* keys) const;
  // Query and Insert with the sketch's keys (BandKeysOf) given instead;
  // InvalidArgument (index unchanged) unless keys.size() ==
  // params().num_bands, else Query's and Insert's errors.
  Result<std::vector<uint64_t>> QueryBandKeys(std::span<const uint64_t> keys) const;
  Status InsertBandKeys(uint64_t doc_id, std::span<const uint64_t> keys);

  // Every pair of stored documents that share at least one band key, as
  // (smaller id, larger id), each once, sorted ascending. Each band's chains
  // of equal keys are walked in slot ranges on all cores; a pair is emitted
  // by the first band that puts it in one chain only (an array per band but
  // the last gives each document's chain head), so the bands' lists are
  // disjoint and need one parallel sort, no merge. Scratch memory: 4 bytes
  // per document and band plus the pairs. bands_per_pass bands are grouped
  // at a time (values >= num_bands: all at once; below 1: 1); the result is
  // the same for every value and thread count. Every pass's lists are kept
  // until the result is allocated once and filled from them, so the peak
  // is about twice the pairs whatever bands_per_pass is (it bounds the
  // scratch of one pass only).
  std::vector<std::pair<uint64_t, uint64_t>> AllPairCandidates(int bands_per_pass = 4) const;

  size_t size() const;
  // Bytes held by the index: the allocations of all its arrays and tables,
  // the huge pages of its band arrays whole (their offsets' slack included).
  size_t MemoryBytes() const;

 private:
  explicit LshIndex(std::unique_ptr<internal::LshIndexState> state);
  std::unique_ptr<internal::LshIndexState> state_;
};

}  // namespace neardup

#endif  // NEARDUP_LSH_INDEX_H_
