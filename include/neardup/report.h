// The HTML report: one self-contained page (inline CSS, JavaScript and SVG,
// no network access) that shows a result to the person who must judge it: a
// summary, plots, searchable and sortable tables of pairs, clusters and
// documents, and a pair view with the matching passages of both documents
// highlighted in the same colour and linked, plus a word-level comparison
// (docs/REPORT.md).
//
// Two builders fill a ReportData, and RenderReport turns it into the page:
//  - BuildCollectionReport: a containment collection's top-N lists
//    (neardup/containment_engine.h), with the passages MatchingPassages
//    finds.
//  - BuildNearDuplicateReport: the verified pairs (and clusters) of
//    `neardup pairs` / `clusters`, with the shared shingles of each pair
//    chained into passages the same way.
//  - BuildStreamReport: a page of a stream's near-duplicate answers
//    (neardup/stream.h), with passages when the stream keeps texts.
//
// Safety: every text of the data (document text, ids, the command line) is
// either HTML-escaped into the page or embedded once as JSON inside a
// <script type="application/json"> element with '<', '>' and '&' written as
// \u escapes, so no text can close the element or start markup; the page's
// script inserts texts with textContent only.
// Offsets: a Passage holds BYTE offsets into the full UTF-8 texts; the page
// receives UTF-16 code-unit offsets into the (possibly cut) embedded texts,
// the unit JavaScript strings index by.
// Cost: RenderReport is linear in the data (about 60 bytes of JSON per pair
// plus 16 per passage, plus each distinct document's text up to
// max_text_bytes). Thread safety: pure functions of their inputs, except that
// the builders read the collection or the document reader they are given.
#ifndef NEARDUP_REPORT_H_
#define NEARDUP_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/document_reader.h"
#include "neardup/recipe.h"
#include "neardup/status.h"
#include "neardup/stream.h"

namespace neardup {

enum class ReportKind { kNearDuplicates, kContainment };

struct ReportDocument {
  std::string id;
  uint64_t length = 0;              // bytes of the full text
  std::optional<std::string> text;  // the full text; nullopt when not shown
  // Containment only: the best max(a_in_b, b_in_a) over its top-N (0: none).
  double best_score = 0.0;
  // Seconds since the epoch (a stream's documents); shown as UTC when set.
  std::optional<int64_t> time = std::nullopt;
};

struct ReportPair {
  uint64_t a = 0;  // indexes into ReportData::documents
  uint64_t b = 0;
  double similarity = 0.0;  // near-duplicates: as `neardup pairs`; containment: max of the two
  int distance = -1;        // SimHash pairs only
  double a_in_b = -1.0;     // containment only (-1: not a containment pair)
  double b_in_a = -1.0;
  std::vector<Passage> passages;  // query = a, match = b; byte offsets of the full texts
};

struct ReportCluster {
  std::vector<uint64_t> members;  // document indexes, in input order
  uint64_t kept = 0;              // the member kept (a document index)
  std::string why;                // the keep rule's reason, for people
};

struct ReportSummary {
  std::string recipe_id;
  std::string recipe_json;   // canonical recipe JSON
  std::string command_line;  // as typed
  std::string method;        // e.g. "minhash, threshold 0.8" or "containment, top 10"
  std::string keep_rule;     // "first" | "longest" | "shortest"; empty for containment
  std::string cluster_rule;  // "leader" | "components"; empty for containment
  uint64_t documents = 0;    // documents read (or live in the collection)
  uint64_t bytes_total = 0;
};

// A text field of a ReportNavigation's search form.
struct ReportFormField {
  std::string name;   // the query parameter
  std::string label;  // shown before the field
  std::string value;  // its current value
};

// What a live page (`neardup serve`'s stream pages) shows above its tables:
// facts, links to other pages of the same result, and a GET form that asks
// the server for another page. Empty: nothing (a report file).
// Every text is HTML-escaped; a link or form whose href/action is not a path
// on the same server ("/..." without "//", a scheme or a backslash) is left
// out, so no value can make the page leave its server.
struct ReportNavigation {
  std::vector<std::pair<std::string, std::string>> facts;  // (label, value)
  std::vector<std::pair<std::string, std::string>> links;  // (label, href)
  std::string form_action;                                 // empty: no form
  std::vector<ReportFormField> form_fields;
};

struct ReportData {
  ReportKind kind = ReportKind::kNearDuplicates;
  ReportSummary summary;
  std::vector<ReportDocument> documents;
  std::vector<ReportPair> pairs;
  std::vector<ReportCluster> clusters;  // near-duplicates only
  ReportNavigation navigation;
};

struct ReportOptions {
  // A text longer than this is cut (at a character boundary) and the page
  // says so; passages past the cut are clipped. Default 64 KiB: a long essay
  // whole, and 100k pairs of short documents stay within a few hundred MB.
  size_t max_text_bytes = size_t{64} << 10;
  // Rows per table page. Default 100.
  size_t page_size = 100;
};

// The page. InvalidArgument when a pair or cluster names a document index
// out of range, or a score is not finite.
Result<std::string> RenderReport(const ReportData& data, const ReportOptions& options);

struct CollectionReportOptions {
  // Similar documents per document, and the least score (as `similar`).
  size_t top_n = 10;
  double min_similarity = 0.1;
};

// The collection's top-N lists: each unordered pair once (a = the smaller
// document number), with passages when the collection stores texts. Reads the
// stored table when it is current for these options, else computes the
// lists without storing them (a read-only collection is enough). The errors
// of the collection's reads.
Result<ReportData> BuildCollectionReport(const Collection& collection,
                                         const CollectionReportOptions& options);

// One pair of `neardup pairs` JSON lines, by id (owning its ids, unlike the
// sink's PairRecord of result_sink.h, which views them).
struct PairLine {
  std::string a;
  std::string b;
  double similarity = 0.0;
  int distance = -1;
};

// Parses `neardup pairs` output. InvalidArgument naming the line for a line
// that is not such a record.
Result<std::vector<PairLine>> ParsePairLines(std::string_view jsonl);
// Parses `neardup clusters` output: the ids of each cluster.
Result<std::vector<std::vector<std::string>>> ParseClusterLines(std::string_view jsonl);

struct NearDuplicateReportOptions {
  // The recipe the pairs were found with: its chunk spans (at the MinHash
  // shingle width, unsampled) give the passages. A digest recipe gives none.
  Recipe recipe;
  // When `clusters` is empty, they are formed from the pairs with this rule.
  ClusterRule cluster_rule = ClusterRule::kLeader;
  KeepRule keep_rule = KeepRule::kFirst;
};

// Reads every document of `reader` (the inputs the pairs came from), keeps the
// texts of those in a pair or cluster, and computes passages, clusters and
// the kept member of each. A document id is the first document of that id.
// InvalidArgument when a pair or cluster names an id not among the inputs.
Result<ReportData> BuildNearDuplicateReport(DocumentReader& reader,
                                            const std::vector<PairLine>& pairs,
                                            const std::vector<std::vector<std::string>>& clusters,
                                            const NearDuplicateReportOptions& options);

// A page of a stream's near-duplicate answers (NearDuplicateStream::List with
// `options`; newest first by default) as a near-duplicates report: per
// answer a pair (A = the kept document, B = the near-duplicate, with its
// similarity and, for SimHash, distance), documents with their times, and
// per kept document a cluster of it and its near-duplicates on this page
// (kept by the leader rule). A stream that keeps texts adds both texts and
// their passages (StreamDetail::passages; `options.detail` is set here);
// one that does not shows ids, times and similarities only. The summary
// counts the window (Stats()); the navigation is left to the caller, with
// the page's next cursor. The errors of List.
struct StreamReport {
  ReportData data;
  std::string next_cursor;  // as StreamPage::next_cursor
};
Result<StreamReport> BuildStreamReport(const NearDuplicateStream& stream,
                                       StreamListOptions options);

// One entry of a report index: a live service's page per collection and
// per stream (`neardup serve` at /ui/, docs/REPORT.md).
struct ReportIndexEntry {
  std::string name;
  std::string href;                                        // the entry's own page; empty: no link
  std::vector<std::pair<std::string, std::string>> facts;  // (label, value) lines
};

// A small self-contained page (inline CSS, no script, the report's
// Content-Security-Policy): a title, a note, and per entry its name (a link
// to `href`) and facts. Every text is HTML-escaped; an href is kept only when
// it is a path on the same server ("/..." without "//" or a scheme), so a
// name can never make a link leave it.
std::string RenderReportIndex(std::string_view title, std::string_view note,
                              const std::vector<ReportIndexEntry>& entries);

}  // namespace neardup

#endif  // NEARDUP_REPORT_H_
