// The rows of a sink run, grouped by the key that an incremental run
// replaces as a whole, each group with a 64-bit digest of its content, so
// that a run can tell which stored groups changed without reading the stored
// rows back:
//  - similar: a document's top-N list (key: the document's id; its rows are
//    consecutive, in rank order);
//  - pairs: the pairs whose first id is the document (key: that id; sorted
//    by b, then similarity, so the digest does not depend on input order);
//  - clusters: the members of one cluster (key: the id of its first member,
//    which names the cluster across runs: cluster numbers shift when a
//    cluster forms in front of others).
// Each digest is XXH3-64 (seed 0) over, per row in the group's order, the
// stored text of the row's other id, a 0 byte, and the row's numbers (the
// IEEE-754 bits of doubles, little endian; pairs: the distance as 4 bytes
// little endian). It is stored (the *_lists tables, docs/POSTGRESQL.md); if
// it ever changed, the next run would only rewrite every group once, never
// keep a stale one.
// Cost: O(rows + bytes of ids) (pairs: plus a sort); memory one entry per
// group (pairs: plus one index per row).
// Thread safety: pure functions.
#ifndef NEARDUP_SINK_ROW_GROUPS_H_
#define NEARDUP_SINK_ROW_GROUPS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "neardup/result_sink.h"
#include "neardup/status.h"

namespace neardup::internal {

struct RowGroup {
  std::string key;   // as stored (StorableText)
  size_t begin = 0;  // its rows are Row(begin) .. Row(end - 1)
  size_t end = 0;
  int64_t digest = 0;  // the digest's bits, as PostgreSQL's bigint holds them
};

struct RowGroups {
  std::vector<RowGroup> groups;  // in order of first appearance (pairs: of key)
  // The row index at each position; empty when it is the position itself.
  std::vector<size_t> order;

  size_t Row(size_t position) const { return order.empty() ? position : order[position]; }
};

// Top-N lists. InvalidArgument when the rows of one document are not
// consecutive or an id holds a NUL byte.
Result<RowGroups> GroupTopNLists(std::span<const TopNRecord> rows);

// Pairs by their first id. InvalidArgument when an id holds a NUL byte or
// two different ids store as the same text (invalid UTF-8 replaced).
Result<RowGroups> GroupPairs(std::span<const PairRecord> pairs);

// Clusters by their first member. InvalidArgument when the members of one
// cluster are not consecutive, a document is in two clusters, or an id holds
// a NUL byte.
Result<RowGroups> GroupClusters(std::span<const ClusterRecord> members);

}  // namespace neardup::internal

#endif  // NEARDUP_SINK_ROW_GROUPS_H_
