#include "neardup/format/wire_format.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace neardup::format {
namespace {

// Known answers: these lines are the documented output (docs/CLI.md,
// docs/CONTAINMENT.md); a change here is a change of the wire format.
TEST(WireFormatTest, PairsClustersAndDedupDecisions) {
  std::string out;
  AppendPairLine(&out, "harbor-wall-1", "harbor-wall-3", SimilarPair{0, 2, 0.8208955, -1});
  AppendPairLine(&out, "a", "b", SimilarPair{0, 1, 0.921875, 5});
  AppendClusterLine(&out, 0, {"a", "b", "c"});
  AppendDedupDecisionLine(&out, "one.txt", std::nullopt);
  AppendDedupDecisionLine(&out, "two.txt", "one.txt");
  EXPECT_EQ(out,
            "{\"a\":\"harbor-wall-1\",\"b\":\"harbor-wall-3\",\"similarity\":0.820896}\n"
            "{\"a\":\"a\",\"b\":\"b\",\"distance\":5,\"similarity\":0.921875}\n"
            "{\"cluster\":0,\"ids\":[\"a\",\"b\",\"c\"]}\n"
            "{\"id\":\"one.txt\",\"kept\":true}\n"
            "{\"id\":\"two.txt\",\"kept\":false,\"duplicate_of\":\"one.txt\"}\n");
}

TEST(WireFormatTest, SimilarityRowsAsJsonAndCsv) {
  std::string json;
  AppendSimilarityLine(&json, "x", "y\"q", 1.0, 0.25);
  EXPECT_EQ(json, "{\"a\":\"x\",\"b\":\"y\\\"q\",\"a_in_b\":1,\"b_in_a\":0.25}\n");
  std::string csv;
  AppendSimilarityCsvHeader(&csv);
  AppendSimilarityCsvLine(&csv, "plain", "has,comma", 0.5, 1.0);
  AppendSimilarityCsvLine(&csv, "quote\"d", "line\nbreak", 0.0, 0.125);
  EXPECT_EQ(csv,
            "a,b,a_in_b,b_in_a\n"
            "plain,\"has,comma\",0.5,1\n"
            "\"quote\"\"d\",\"line\nbreak\",0,0.125\n");
}

// A query result of 7 chunks: doc-1 and doc-2 (0.5, 0.75), two passages each.
QueryResult TwoMatches() {
  QueryResult result;
  result.num_chunks = 7;
  QueryMatch first;
  first.id = "doc-1";
  first.a_in_b = 0.5;
  first.b_in_a = 0.75;
  first.passages = {Passage{0, 10, 20, 30, 2}, Passage{40, 50, 60, 70, 1}};
  QueryMatch second = first;
  second.id = "doc-2";
  result.matches = {first, second};
  return result;
}

TEST(WireFormatTest, QueryResultWithPassagesOnlyForTheFirstMatches) {
  const QueryResult result = TwoMatches();
  std::string out;
  AppendQueryResultLine(&out, "q", result, 1);
  EXPECT_EQ(out,
            "{\"query\":\"q\",\"chunks\":7,\"matches\":["
            "{\"b\":\"doc-1\",\"a_in_b\":0.5,\"b_in_a\":0.75,\"passages\":["
            "{\"query\":[0,10],\"match\":[20,30]},{\"query\":[40,50],\"match\":[60,70]}]},"
            "{\"b\":\"doc-2\",\"a_in_b\":0.5,\"b_in_a\":0.75}]}\n");
  std::string none;
  AppendQueryResultLine(&none, "empty", QueryResult{}, 3);
  EXPECT_EQ(none, "{\"query\":\"empty\",\"chunks\":0,\"matches\":[]}\n");
}

TEST(WireFormatTest, QueryMatchesFromExtractedFilesNameTheirFormatAndFile) {
  QueryResult result;
  QueryMatch pdf;
  pdf.id = "theses/a.pdf";
  pdf.name = "theses/a.pdf";  // the file is the id: no b_name
  pdf.format = "pdf";
  QueryMatch record;
  record.id = "http://example.org/x";
  record.name = "crawl.warc.gz";
  record.format = "warc";
  QueryMatch text;
  text.id = "b.txt";
  text.name = "b.txt";
  result.matches = {pdf, record, text};
  std::string out;
  AppendQueryResultLine(&out, "q", result, 0);
  EXPECT_EQ(out,
            "{\"query\":\"q\",\"chunks\":0,\"matches\":["
            "{\"b\":\"theses/a.pdf\",\"a_in_b\":0,\"b_in_a\":0,\"b_format\":\"pdf\"},"
            "{\"b\":\"http://example.org/x\",\"a_in_b\":0,\"b_in_a\":0,\"b_format\":\"warc\","
            "\"b_name\":\"crawl.warc.gz\"},"
            "{\"b\":\"b.txt\",\"a_in_b\":0,\"b_in_a\":0}]}\n");
}

TEST(WireFormatTest, FingerprintLineKeepsOnlyTheSelectedSketches) {
  Fingerprint fingerprint;
  fingerprint.num_tokens = 3;
  fingerprint.simhash = 0x3aa423c558350ff4ULL;
  fingerprint.chunks = {17, 4000000000u};
  SketchSelection selection;
  selection.simhash = true;
  selection.chunks = true;
  std::string out;
  AppendFingerprintLine(&out, "a.txt", fingerprint, selection, 64, "0123456789abcdef");
  EXPECT_EQ(out,
            "{\"id\":\"a.txt\",\"recipe\":\"0123456789abcdef\",\"tokens\":3,"
            "\"simhash\":\"3aa423c558350ff4\",\"chunks\":[17,4000000000]}\n");
}

TEST(WireFormatTest, InvalidUtf8InAnIdStillGivesValidJson) {
  std::string out;
  AppendJsonString(&out, std::string("caf\xe9\ttab", 8));
  EXPECT_EQ(out, "\"caf\\ufffd\\ttab\"");
}

// Known answers for the tables: RFC 4180 quoting in CSV, COPY-text escapes
// in TSV, empty fields for absent values.
TEST(WireFormatTest, TablesOfPairsClustersSimilarityAndQueries) {
  EXPECT_EQ(ParseTableFormat("csv"), TableFormat::kCsv);
  EXPECT_EQ(ParseTableFormat("tsv"), TableFormat::kTsv);
  EXPECT_EQ(ParseTableFormat("jsonl"), std::nullopt);

  std::string csv, tsv;
  for (auto [out, format] : {std::pair{&csv, TableFormat::kCsv}, {&tsv, TableFormat::kTsv}}) {
    AppendPairTableHeader(out, format);
    AppendPairTableRow(out, "a,\"1\"", "tab\there", SimilarPair{0, 1, 0.8208955, -1}, format);
    AppendPairTableRow(out, "x", "back\\slash\nline", SimilarPair{0, 1, 0.921875, 5}, format);
    AppendClusterTableHeader(out, format);
    AppendClusterTableRows(out, 3, {"p", "q r"}, format);
    AppendSimilarityTableHeader(out, format);
    AppendSimilarityTableRow(out, "a", "b", 1.0, 0.25, format);
  }
  EXPECT_EQ(csv,
            "a,b,similarity,distance\n"
            "\"a,\"\"1\"\"\",tab\there,0.820896,\n"
            "x,\"back\\slash\nline\",0.921875,5\n"
            "cluster,id\n"
            "3,p\n"
            "3,q r\n"
            "a,b,a_in_b,b_in_a\n"
            "a,b,1,0.25\n");
  EXPECT_EQ(tsv,
            "a\tb\tsimilarity\tdistance\n"
            "a,\"1\"\ttab\\there\t0.820896\t\n"
            "x\tback\\\\slash\\nline\t0.921875\t5\n"
            "cluster\tid\n"
            "3\tp\n"
            "3\tq r\n"
            "a\tb\ta_in_b\tb_in_a\n"
            "a\tb\t1\t0.25\n");

  const QueryResult result = TwoMatches();
  std::string query;
  AppendQueryTableHeader(&query, TableFormat::kCsv);
  AppendQueryTableRows(&query, "q", result, 1, TableFormat::kCsv);
  AppendQueryTableRows(&query, "none", QueryResult{}, 1, TableFormat::kCsv);
  EXPECT_EQ(query,
            "query,chunks,b,a_in_b,b_in_a,passages\n"
            "q,7,doc-1,0.5,0.75,0-10:20-30 40-50:60-70\n"
            "q,7,doc-2,0.5,0.75,\n"
            "none,0,,,,\n");
}

// The pair line and rows as they were written before they were built in
// place (session 21): field by field, the score by printf.
std::string ReferenceScore(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string ReferencePairLine(std::string_view a, std::string_view b, const SimilarPair& pair) {
  std::string out = "{\"a\":";
  AppendJsonString(&out, a);
  out += ",\"b\":";
  AppendJsonString(&out, b);
  if (pair.distance >= 0) out += ",\"distance\":" + std::to_string(pair.distance);
  out += ",\"similarity\":" + ReferenceScore(pair.similarity) + "}\n";
  return out;
}

std::string ReferenceTsvField(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ReferencePairRow(std::string_view a, std::string_view b, const SimilarPair& pair,
                             TableFormat format) {
  const std::string distance = pair.distance >= 0 ? std::to_string(pair.distance) : "";
  const std::string score = ReferenceScore(pair.similarity);
  if (format == TableFormat::kTsv) {
    return ReferenceTsvField(a) + "\t" + ReferenceTsvField(b) + "\t" + score + "\t" + distance +
           "\n";
  }
  std::string out;
  AppendCsvField(&out, a);
  out += ",";
  AppendCsvField(&out, b);
  return out + "," + score + "," + distance + "\n";
}

// Every pair of ids (plain ones of lengths on both sides of where a line
// stops fitting the stack buffer, ones to escape, UTF-8, invalid bytes)
// with distances and scores at their edges, appended after other text:
// the same bytes as the field-by-field writer.
TEST(WireFormatTest, PairLinesAndRowsAreWrittenAsFieldByField) {
  std::vector<std::string> ids = {
      "",          "doc-1",       "a\"b",        "back\\slash",
      "tab\there", "line\nbreak", "caf\xc3\xa9", std::string("\xff\x01", 2),
      "a,b",       "x y"};
  for (const size_t size : {7, 8, 9, 100, 200, 210, 211, 212, 213, 300, 420, 421, 422, 430, 600}) {
    ids.push_back(std::string(size, static_cast<char>('a' + size % 26)));
  }
  ids.push_back(std::string(205, 'q') + "\"");
  const std::vector<SimilarPair> pairs = {
      {0, 1, 1.0, 0},      {0, 1, 0.0, -1},       {0, 1, 0.8208955, -1}, {0, 1, 105.0 / 128, -1},
      {0, 1, 0.984375, 1}, {0, 1, 0.9999995, 64}, {0, 1, 1e-5, -1},      {0, 1, 0.5, 2147483647}};
  for (const std::string& a : ids) {
    for (const std::string& b : ids) {
      for (const SimilarPair& pair : pairs) {
        std::string out = "before\n";
        AppendPairLine(&out, a, b, pair);
        ASSERT_EQ(out, "before\n" + ReferencePairLine(a, b, pair)) << a.size() << " " << b.size();
        for (const TableFormat format : {TableFormat::kCsv, TableFormat::kTsv}) {
          std::string row = "x";
          AppendPairTableRow(&row, a, b, pair, format);
          ASSERT_EQ(row, "x" + ReferencePairRow(a, b, pair, format)) << a << " " << b;
        }
      }
    }
  }
}

}  // namespace
}  // namespace neardup::format
