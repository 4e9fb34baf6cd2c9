// The state behind LshIndex (neardup/lsh_index.h), shared by the files
// that implement it: lsh_index.cc (inserts, removes, queries) and
// lsh_all_pairs.cc (every candidate pair at once).
// Thread safety: as LshIndex's (const access may be concurrent).
#ifndef NEARDUP_INDEX_LSH_INDEX_STATE_H_
#define NEARDUP_INDEX_LSH_INDEX_STATE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/lsh_band_table.h"
#include "index/lsh_huge_page_array.h"
#include "index/lsh_segmented_array.h"
#include "index/lsh_slot_table.h"
#include "neardup/lsh_params.h"

namespace neardup::internal {

// Documents sharing a band key form a doubly linked chain through their
// slots, so removal is O(1) however many exact duplicates share the key.
struct ChainLink {
  uint32_t next;
  uint32_t prev;
};

// One band: band key -> head of the chain of slots with that key.
// Invariant: keys.size() == links.size() == number of documents; the table
// holds exactly one entry per distinct key, whose slot is the chain head
// (the only chain member with prev == kNoSlot). A band key is stored once:
// its high half in keys[slot], its low half in the table entry of its chain
// (see lsh_band_table.h), so two slots have equal keys iff they are in the
// same chain.
struct LshBand {
  ShardedBandTable table;  // in 8 shards, each growing at its own insert
  // Grown by moving pages, not copying (session 16, lsh_huge_page_array.h):
  // a pointer from keys.data() or links.data() is stale after any growth.
  HugePageArray<uint32_t> keys;    // keys[slot]: high half of document `slot`'s key
  HugePageArray<ChainLink> links;  // links[slot]: neighbours in its key's chain
};

// Documents occupy dense slots 0..n-1; Remove moves the last document into
// the freed slot so that every array stays dense.
struct LshIndexState {
  // The bands held: num_bands of them, starting at band first_band of the
  // scheme (0 for an index of the whole scheme).
  LshParams params;
  int first_band = 0;
  int num_hashes = 0;
  // doc_ids[slot]; in segments and the id table in shards (session 12), so
  // that neither grows all at one insert (lsh_segmented_array.h,
  // ShardedSlotTable in lsh_slot_table.h).
  SegmentedArray<uint64_t> doc_ids;
  ShardedSlotTable id_table;  // Mix64(doc_id) -> slot
  std::vector<LshBand> bands;
  size_t reserved = 0;  // the largest Reserve: Insert grows nothing ahead below it
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_INDEX_STATE_H_
