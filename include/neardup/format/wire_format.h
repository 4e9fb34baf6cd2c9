// Wire formats: the JSON lines (and CSV/TSV tables) that neardup's front ends write for
// fingerprints, near-duplicate pairs, clusters, dedup decisions, `similar`
// rows and `query` results. One encoder per record, shared by the CLI and
// every later front end (server, MPI, Python), so a record reads the same
// whichever of them wrote it. Each Append*Line appends one record and its
// '\n' to *out (no DOM, no allocation beyond growing *out).
//
// Frozen: the field names and order and the number formats below are what
// docs/CLI.md promises; changing them breaks readers of the output.
//  - Strings are JSON strings; bytes that are not valid UTF-8 (ids from file
//    names can hold any byte) become \ufffd, so every line is valid JSON.
//  - Scores (similarity, a_in_b, b_in_a) have up to 6 significant decimals and
//    never an exponent in [0, 1] ("1", "0.820896").
//  - 64-bit sketch values are 16 lower-case hex digits in strings (JSON
//    numbers lose precision past 2^53 in most readers).
// Thread safety: pure functions.
#ifndef NEARDUP_FORMAT_WIRE_FORMAT_H_
#define NEARDUP_FORMAT_WIRE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/containment_engine.h"
#include "neardup/fingerprinter.h"

namespace neardup::format {

// A quoted JSON string (see above for invalid UTF-8).
void AppendJsonString(std::string* out, std::string_view value);
// A score. REQUIRES: finite.
void AppendJsonScore(std::string* out, double value);
// An RFC 4180 CSV field: quoted (quotes doubled) when it holds a comma, a
// quote or a line break, as is otherwise.
void AppendCsvField(std::string* out, std::string_view value);

// `neardup fingerprint`:
//   {"id":"a.txt","recipe":"<16 hex>","tokens":42,"simhash":"<16 or 32 hex>",
//    "minhash":["<16 hex>",...],"kminhash":["<16 hex>",...],"chunks":[17,...]}
// Keys appear only for the selected sketches; a 128-bit SimHash is written
// high word first.
void AppendFingerprintLine(std::string* out, std::string_view id, const Fingerprint& fingerprint,
                           const SketchSelection& selection, int simhash_bits,
                           std::string_view recipe_id);
// The same line for one document of a flat batch (fingerprint_batch.h).
void AppendFingerprintLine(std::string* out, std::string_view id,
                           const FingerprintView& fingerprint, const SketchSelection& selection,
                           int simhash_bits, std::string_view recipe_id);

// `neardup pairs`: {"a":id,"b":id,"distance":d,"similarity":s}, "distance"
// only for a SimHash pair (pair.distance >= 0).
void AppendPairLine(std::string* out, std::string_view a, std::string_view b,
                    const SimilarPair& pair);

// `neardup clusters`: {"cluster":n,"ids":[id,...]}.
void AppendClusterLine(std::string* out, uint64_t cluster,
                       const std::vector<std::string_view>& ids);

// `neardup dedup` for inputs that are not all JSONL: {"id":id,"kept":true} or
// {"id":id,"kept":false,"duplicate_of":kept id}.
void AppendDedupDecisionLine(std::string* out, std::string_view id,
                             std::optional<std::string_view> duplicate_of);

// `neardup similar`: {"a":id,"b":id,"a_in_b":x,"b_in_a":y} or, as CSV after
// the header "a,b,a_in_b,b_in_a", the same four fields.
void AppendSimilarityLine(std::string* out, std::string_view a, std::string_view b, double a_in_b,
                          double b_in_a);
void AppendSimilarityCsvHeader(std::string* out);
void AppendSimilarityCsvLine(std::string* out, std::string_view a, std::string_view b,
                             double a_in_b, double b_in_a);

// `neardup query`: {"query":id,"chunks":n,"matches":[{"b":id,"a_in_b":x,
// "b_in_a":y,"passages":[{"query":[begin,end],"match":[begin,end]},...]},...]};
// "passages" only for the first `passages_top` matches. A match extracted
// from a PDF, DOCX, ODT, HTML or WARC file also has "b_format" (pdf, ...)
// and, when its original file is not its id (a WARC record), "b_name".
// Matches from text and JSONL have neither, so their lines are as before.
void AppendQueryResultLine(std::string* out, std::string_view query_id, const QueryResult& result,
                           size_t passages_top);

// Tables: `--format csv|tsv` of pairs, clusters, similar and query. A header
// line, then one row per record (per cluster member; per query match, or one
// row with empty match fields for a query without matches). Ids are written
// as given; scores as in the JSON lines; an absent value (a MinHash pair's
// distance, a match's passages beyond passages_top) is an empty field.
//  - csv: RFC 4180 (AppendCsvField), fields separated by ','.
//  - tsv: fields separated by a tab; a tab, line feed, carriage return or
//    backslash inside a field is written \t, \n, \r, \\ (the text format
//    of PostgreSQL's COPY, so one record is always one line).
enum class TableFormat { kCsv, kTsv };

// "csv" or "tsv"; nullopt for any other name.
std::optional<TableFormat> ParseTableFormat(std::string_view name);

// `neardup pairs`: a,b,similarity,distance.
void AppendPairTableHeader(std::string* out, TableFormat format);
void AppendPairTableRow(std::string* out, std::string_view a, std::string_view b,
                        const SimilarPair& pair, TableFormat format);

// `neardup clusters`: cluster,id (one row per member, in member order).
void AppendClusterTableHeader(std::string* out, TableFormat format);
void AppendClusterTableRows(std::string* out, uint64_t cluster,
                            const std::vector<std::string_view>& ids, TableFormat format);

// `neardup similar`: a,b,a_in_b,b_in_a.
void AppendSimilarityTableHeader(std::string* out, TableFormat format);
void AppendSimilarityTableRow(std::string* out, std::string_view a, std::string_view b,
                              double a_in_b, double b_in_a, TableFormat format);

// `neardup query`: query,chunks,b,a_in_b,b_in_a,passages; passages as
// "qb-qe:mb-me" byte ranges separated by spaces.
void AppendQueryTableHeader(std::string* out, TableFormat format);
void AppendQueryTableRows(std::string* out, std::string_view query_id, const QueryResult& result,
                          size_t passages_top, TableFormat format);

}  // namespace neardup::format

#endif  // NEARDUP_FORMAT_WIRE_FORMAT_H_
