// A result sink takes the results of one run (near-duplicate pairs, clusters,
// or every document's top-N list of similar documents) and stores them
// somewhere other programs read them, replacing what an earlier run stored.
// The one implementation today is PostgreSQL through libpq's COPY
// (docs/POSTGRESQL.md has the tables); a build without libpq answers
// OpenResultSink with an Unimplemented error.
//
// Contract of every sink:
//  - Each call is one transaction: a reader sees the old result or the new
//    one, never a part of each. Writers of the same database are serialized.
//  - Every run is incremental: the rows are grouped (similar: a document's
//    top-N list; pairs: the pairs whose first id is a document; clusters: a
//    cluster, named by its first member), and only the groups whose content
//    differs from the stored ones are rewritten (a 64-bit digest per stored
//    group decides); stored groups that are gone are deleted. A run costs in
//    proportion to what changed. Into empty tables (a first run) the rows
//    are bulk-loaded and the indexes built after them; readers then wait for
//    the COMMIT instead of reading the empty tables.
//  - Ids and texts are stored as UTF-8: bytes that are not valid UTF-8
//    become U+FFFD (as in the JSON output); an id holding a NUL byte is an
//    InvalidArgument error (PostgreSQL text cannot hold one).
//  - Credentials come from the URL or the client library's environment
//    (PGPASSWORD, PGUSER, ~/.pgpass, ...) and are never part of a returned
//    error message: RedactUrlPassword is applied to everything reported.
// Cost: O(rows) time; memory one encoding buffer (about 1 MB) plus the
// stored digests (one id and 8 bytes per stored group) and one entry per
// group (pairs: plus 8 bytes per pair).
// Thread safety: a sink holds one connection; use it from one thread at a
// time. Distinct sinks are independent.
#ifndef NEARDUP_RESULT_SINK_H_
#define NEARDUP_RESULT_SINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup {

// One near-duplicate pair (`neardup pairs`).
struct PairRecord {
  std::string_view a;
  std::string_view b;
  double similarity = 0.0;
  int distance = -1;  // SimHash Hamming distance; -1 (stored as NULL) for MinHash
};

// One member of a cluster (`neardup clusters`). The members of a cluster are
// consecutive; the cluster is stored under its first member's id (the number
// names it in one run's output only).
struct ClusterRecord {
  uint64_t cluster = 0;
  std::string_view id;
};

// One entry of document a's top-N list (`neardup similar`). The rows of one
// document are consecutive, best first: the position in the group is the
// stored rank (1 = best).
struct TopNRecord {
  std::string_view a;
  std::string_view b;
  double a_in_b = 0.0;
  double b_in_a = 0.0;
};

struct SinkStats {
  uint64_t rows_written = 0;
  uint64_t rows_deleted = 0;
  // Groups (lists, pair lists, clusters) written (new or changed), deleted
  // (gone from the result), left as they were.
  uint64_t documents_replaced = 0;
  uint64_t documents_removed = 0;
  uint64_t documents_unchanged = 0;
};

// How rows travel to PostgreSQL. Binary is the default: no escaping and no
// number formatting, and it measured faster (docs/BENCHMARKS.md); text is
// kept for comparison and for servers behind proxies that rewrite COPY data.
enum class CopyFormat { kBinary, kText };

struct ResultSinkOptions {
  CopyFormat copy_format = CopyFormat::kBinary;
  // Recorded with the run (the "label" column of neardup_runs), e.g. the
  // command line without the URL. Default empty.
  std::string label;
  // Called inside the transaction after every row is written, just before
  // COMMIT; an error rolls the run back. For tests that check what other
  // sessions see meanwhile. Default none.
  std::function<Status()> before_commit;
};

class ResultSink {
 public:
  virtual ~ResultSink() = default;

  // Makes the stored pairs equal `pairs` (any order), rewriting only the
  // documents whose pairs (as first id) changed.
  virtual Result<SinkStats> UpdatePairs(std::span<const PairRecord> pairs) = 0;
  // Makes the stored clusters equal `members`, rewriting only the clusters
  // that changed. REQUIRES (else InvalidArgument): the members of a cluster
  // are consecutive, first member first; a document is in one cluster.
  virtual Result<SinkStats> UpdateClusters(std::span<const ClusterRecord> members) = 0;
  // Makes the stored top-N lists equal `rows`, rewriting only the lists that
  // changed. REQUIRES (else InvalidArgument): the rows of one document are
  // consecutive.
  virtual Result<SinkStats> UpdateTopN(std::span<const TopNRecord> rows) = 0;
};

// true for the URLs OpenResultSink recognises (postgresql:// and
// postgres://), whether or not this build can open them.
bool IsResultSinkUrl(std::string_view url);

// Connects to the sink named by `url`. Errors: InvalidArgument for a URL of
// no known kind, Unimplemented when this build lacks the client library,
// IoError when the server cannot be reached or refuses the credentials (the
// message names the URL with its password redacted).
Result<std::unique_ptr<ResultSink>> OpenResultSink(std::string_view url,
                                                   ResultSinkOptions options = {});

// `url` with the password of its user-info part and any password=...
// query parameter replaced by "***", for messages and logs.
std::string RedactUrlPassword(std::string_view url);

}  // namespace neardup

#endif  // NEARDUP_RESULT_SINK_H_
