// HammingIndex: finds stored 64-bit fingerprints (SimHash) within
// `max_distance` bits of a query, and all such pairs among the stored ones.
//
// The scheme is the permuted-table index of Manku, Jain and Das Sarma,
// "Detecting near-duplicates for web crawling", WWW 2007 (the `Corpus(
// num_blocks, diff_bits)` of the classic `simhash` library). The 64 bits are cut
// into num_blocks (m) contiguous blocks whose sizes differ by at most one; there
// is one table per choice of m - k of them (k = max_distance), holding every
// fingerprint permuted so that the chosen blocks lead, sorted.
//
// Invariant (pigeonhole): two fingerprints that differ in at most k bits, cut
// into m > k blocks, agree on at least m - k whole blocks, so some table holds
// both under the same leading blocks. A query therefore only compares the
// entries that share its leading blocks in each table; a match is reported
// only from the first table (in lexicographic order of the chosen blocks) whose
// leading blocks it shares, so every match is reported exactly once.
//
// Entries are (fingerprint, id) pairs and form a set: several ids may share a
// fingerprint, and inserting a pair that is present is a no-op.
//
// Cost (U = distinct fingerprints, N = entries, T = C(m, k) tables):
//   memory about 8*T + 12 bytes per entry plus directory lines of 3.2-6.4
//   bytes per entry per table (see MemoryBytes() and docs/HAMMING_INDEX.md);
//   Build O(T N) for hashed fingerprints (a radix sort per table; O(T N log N)
//   at worst), split across cores; a query O(T) probes plus the entries
//   sharing its leading blocks (about N * 2^-(64 (m-k)/m) per table for random
//   fingerprints); Insert/Remove amortised O(T log N) element moves (a small
//   unsorted buffer, then sorted runs merged geometrically, never a re-sort;
//   removes are tombstones compacted when a run is half dead).
//
// Thread safety: const methods may run concurrently with each other; a
// mutation (Insert*, Remove*, Compact, move) needs exclusive access. Bulk
// methods use all cores through oneTBB.
#ifndef NEARDUP_HAMMING_INDEX_H_
#define NEARDUP_HAMMING_INDEX_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "neardup/status.h"

namespace neardup {

namespace internal {
struct HammingIndexState;
}  // namespace internal

struct HammingIndexOptions {
  // m: how many contiguous blocks the 64 bits are cut into. More blocks mean
  // more tables (C(m, k)) and memory, but longer leading keys and so fewer
  // candidates per probe. See RecommendHammingParameters.
  int num_blocks = 6;
  // k: the largest Hamming distance reported. REQUIRES: 0 <= k < m <= 64.
  int max_distance = 3;
};

// The most tables an index may have (C(num_blocks, max_distance)).
inline constexpr uint64_t kMaxHammingTables = 4096;

// The most distinct fingerprints, and the most entries, one index holds.
inline constexpr uint64_t kMaxHammingEntries = (uint64_t{1} << 32) - 2;

// OK, or InvalidArgument naming the bad parameter, its bound and its value.
Status ValidateHammingIndexOptions(const HammingIndexOptions& options);

// C(num_blocks, max_distance), or 0 when that exceeds kMaxHammingTables.
uint64_t HammingNumTables(int num_blocks, int max_distance);

struct HammingRecommendation {
  int num_blocks = 0;
  int max_distance = 0;
  uint64_t num_tables = 0;
  // Table, directory and id memory per entry (random fingerprints).
  double bytes_per_entry = 0;
  // Probes (one per table) and stored entries compared per query, expected
  // for random fingerprints.
  double expected_probes = 0;
  double expected_candidates = 0;
};

// Recommends num_blocks for `max_distance` and a corpus of `corpus_size`
// random fingerprints, by minimising the cost model probes + candidates / 8 (a
// probe is a cache miss; eight candidates fill one cache line) over the
// num_blocks whose table count is at most `max_tables`.
// REQUIRES (else InvalidArgument): 0 <= max_distance < 64, max_tables >= 1.
Result<HammingRecommendation> RecommendHammingParameters(int max_distance, uint64_t corpus_size,
                                                         uint64_t max_tables = 64);

// One stored entry. Ordered by (fingerprint, id).
struct HammingEntry {
  uint64_t fingerprint = 0;
  uint64_t id = 0;
  friend auto operator<=>(const HammingEntry&, const HammingEntry&) = default;
};

// One match of a query: a stored entry and its Hamming distance to the query.
struct HammingMatch {
  uint64_t fingerprint = 0;
  uint64_t id = 0;
  int distance = 0;
  friend bool operator==(const HammingMatch&, const HammingMatch&) = default;
};

// The matches of many queries: query i's matches are
// matches[offsets[i], offsets[i + 1]), in the order of FindAll.
struct HammingMatchesBulk {
  std::vector<size_t> offsets;  // size = number of queries + 1
  std::vector<HammingMatch> matches;
  std::span<const HammingMatch> For(size_t query) const {
    return std::span<const HammingMatch>(matches).subspan(offsets[query],
                                                          offsets[query + 1] - offsets[query]);
  }
};

// Two entries within max_distance. Invariant: (a.id, a.fingerprint) <
// (b.id, b.fingerprint).
struct HammingPair {
  HammingEntry a;
  HammingEntry b;
  int distance = 0;
  friend bool operator==(const HammingPair&, const HammingPair&) = default;
};

// Connected components of the "within max_distance" graph over the entries.
// Cluster c is members[offsets[c], offsets[c + 1]); members of a cluster are
// ordered by (id, fingerprint) and clusters by their first (smallest) member.
struct HammingClusters {
  std::vector<size_t> offsets;  // size = num_clusters() + 1
  std::vector<HammingEntry> members;
  size_t num_clusters() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::span<const HammingEntry> Cluster(size_t c) const {
    return std::span<const HammingEntry>(members).subspan(offsets[c], offsets[c + 1] - offsets[c]);
  }
};

struct HammingOpenOptions {
  // Also check the data checksum and the structure of every table (reads the
  // whole file: O(file size)). Off by default so that opening is O(1); a
  // corrupt body then gives wrong answers but never reads out of bounds.
  bool verify_data = false;
};

class HammingIndex {
 public:
  // An empty index. InvalidArgument if the options are invalid.
  static Result<HammingIndex> Create(const HammingIndexOptions& options);

  // An index holding `entries` (duplicates are stored once), built in
  // parallel. ResourceExhausted past kMaxHammingEntries.
  static Result<HammingIndex> Build(const HammingIndexOptions& options,
                                    std::span<const HammingEntry> entries);

  // A partial index: Create and Build that build and hold only the permuted
  // tables [table_begin, table_end) of the num_tables() (a distributed job's
  // share: each rank builds its range, and the ranges' SelfJoins together
  // are the whole SelfJoin, each pair once). It holds every entry (ids and
  // the fingerprint array, with table 0's directory, 23-27 bytes an entry)
  // plus 11-15 bytes an entry per held table other than 0, where the whole
  // index holds every table. Its queries, SelfJoin and Clusters see only the
  // pairs whose canonical table it holds (pairs of equal fingerprints: table
  // 0; see SelfJoinTables); mutations work as on a whole index. An empty
  // range holds no table and finds nothing. InvalidArgument unless
  // table_begin <= table_end <= C(num_blocks, max_distance), or as above.
  static Result<HammingIndex> Create(const HammingIndexOptions& options, uint64_t table_begin,
                                     uint64_t table_end);
  static Result<HammingIndex> Build(const HammingIndexOptions& options,
                                    std::span<const HammingEntry> entries, uint64_t table_begin,
                                    uint64_t table_end);

  // Writes the live entries as one flat, memory-mappable file (to `path`.tmp,
  // fsynced, then renamed over `path`). IoError on failure; FailedPrecondition
  // for a partial index (the file holds every table).
  Status Save(const std::string& path) const;

  // Maps a file written by Save; O(1) besides the mapping (the tables are
  // used in place). DataLoss if the file is truncated, has a bad magic,
  // version, header checksum or parameters, or (with verify_data) a bad body.
  // The index may then be mutated: changes live in memory until saved.
  static Result<HammingIndex> Open(const std::string& path, const HammingOpenOptions& options = {});

  HammingIndex(HammingIndex&& other) noexcept;
  HammingIndex& operator=(HammingIndex&& other) noexcept;
  ~HammingIndex();

  const HammingIndexOptions& options() const;
  // C(num_blocks, max_distance), held or not.
  uint64_t num_tables() const;
  // The tables this index holds: [0, num_tables()) unless built partial.
  uint64_t table_begin() const;
  uint64_t table_end() const;
  // Live entries.
  size_t size() const;
  // Bytes held by the tables, directories, ids, buffers and tombstones
  // (mapped file bytes included).
  size_t MemoryBytes() const;

  // Adds one entry; true if it was not there. ResourceExhausted when full
  // or when memory runs out; on error the index's contents are unchanged
  // (its capacity, and so MemoryBytes(), may stay grown).
  Result<bool> Insert(HammingEntry entry);
  // Adds entries (in parallel); returns how many were not there. Errors as
  // Insert's, with the contents unchanged (no tombstone revived).
  Result<size_t> InsertBulk(std::span<const HammingEntry> entries);
  // Removes one entry; false if it was not there. Allocates nothing, so
  // cannot fail, when the entry's run was built by Insert, InsertBulk or the
  // compactions Remove runs;
  // the first remove from a run of Build, Compact or a loaded or mapped
  // file allocates its tombstone bits (1 bit an entry) and may throw
  // std::bad_alloc, with the contents unchanged. Running out of memory for a
  // compaction leaves the run uncompacted (the same answers).
  bool Remove(HammingEntry entry);
  // Removes entries; returns how many were there.
  size_t RemoveBulk(std::span<const HammingEntry> entries);
  bool Contains(HammingEntry entry) const;
  // Merges every run and buffer into one run and drops tombstones, so that
  // queries probe each table once.
  void Compact();

  // The entries within max_distance of `query`, ordered by (distance, id,
  // fingerprint). (A partial index: those whose canonical table it holds.)
  std::vector<HammingMatch> FindAll(uint64_t query) const;
  HammingMatchesBulk FindAllBulk(std::span<const uint64_t> queries) const;
  // The first match FindAll would return (the nearest; ties to the smallest
  // id, then fingerprint), or nullopt.
  std::optional<HammingMatch> FindFirst(uint64_t query) const;
  std::vector<std::optional<HammingMatch>> FindFirstBulk(std::span<const uint64_t> queries) const;

  // Every pair of live entries within max_distance, each once, ordered by
  // (a, b) in (id, fingerprint) order. Compares only entries that share the
  // leading blocks of some table (never all N^2 pairs). A partial index:
  // SelfJoinTables(table_begin(), table_end()).
  std::vector<HammingPair> SelfJoin() const;
  // The part of SelfJoin() found in tables [table_begin, table_end) (of
  // num_tables()): each pair at distance > 0 belongs to exactly one table
  // (its canonical one), and entries with equal fingerprints to table 0, so
  // the SelfJoin of a split of the tables into ranges, concatenated and
  // sorted, is SelfJoin(). Same order as SelfJoin().
  // REQUIRES (else InvalidArgument): this->table_begin() <= table_begin <=
  // table_end <= this->table_end().
  Result<std::vector<HammingPair>> SelfJoinTables(uint64_t table_begin, uint64_t table_end) const;
  // Clusters of live entries joined by SelfJoin pairs, those with at least
  // `min_cluster_size` members, without materialising the pairs.
  // (A partial index: joined by its own SelfJoin's pairs, and entries of one
  // fingerprint always together.)
  HammingClusters Clusters(size_t min_cluster_size = 2) const;

 private:
  explicit HammingIndex(std::unique_ptr<internal::HammingIndexState> state);
  std::unique_ptr<internal::HammingIndexState> state_;
};

}  // namespace neardup

#endif  // NEARDUP_HAMMING_INDEX_H_
