// Loading results into PostgreSQL (issue 17): rows per second with COPY
// (binary and text, through the result sink) against row-by-row INSERT of a
// prepared statement, on the same rows; and the time to load (then update
// 1% of) the top-100 lists of `documents` documents through UpdateTopN.
// Each COPY load is measured twice: into empty tables (the sink's bulk
// path: indexes built after the rows) and into tables that already hold a
// result (the incremental path: every index maintained row by row), unless
// `indexed` is 0 (for the large loads, where it would double the time).
//
//   postgres_sink_bench URL [pair_rows] [insert_rows] [documents] [indexed]
//
// bench/postgres_sink_bench.sh starts a throwaway server and runs this.
// Ids look like corpus ids ("doc-0001234"); scores are varied doubles.
// INSERT runs in one transaction (the fair case: one COMMIT per row would
// add a WAL flush per row on top).
#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "neardup/result_sink.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string Id(uint64_t n) {
  char text[32];
  std::snprintf(text, sizeof(text), "doc-%07llu", static_cast<unsigned long long>(n));
  return text;
}

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "postgres_sink_bench: %s\n", what.c_str());
    std::exit(1);
  }
}

void Exec(PGconn* connection, const char* sql) {
  PGresult* result = PQexec(connection, sql);
  const ExecStatusType status = PQresultStatus(result);
  Check(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK,
        std::string(sql) + ": " + PQresultErrorMessage(result));
  PQclear(result);
}

// Prepared INSERT, one row per round trip, in one transaction.
double InsertRowByRow(PGconn* connection, const std::vector<neardup::PairRecord>& pairs) {
  Exec(connection, "DELETE FROM neardup_pairs");
  Exec(connection, "VACUUM neardup_pairs");
  const auto started = Clock::now();
  Exec(connection, "BEGIN");
  PGresult* prepared = PQprepare(
      connection, "insert_pair",
      "INSERT INTO neardup_pairs (a, b, similarity, distance) VALUES ($1, $2, $3, $4)", 4, nullptr);
  Check(PQresultStatus(prepared) == PGRES_COMMAND_OK, PQresultErrorMessage(prepared));
  PQclear(prepared);
  std::string a, b, similarity;
  for (const neardup::PairRecord& pair : pairs) {
    a.assign(pair.a);
    b.assign(pair.b);
    similarity = std::to_string(pair.similarity);
    const char* values[] = {a.c_str(), b.c_str(), similarity.c_str(), nullptr};
    PGresult* result = PQexecPrepared(connection, "insert_pair", 4, values, nullptr, nullptr, 0);
    Check(PQresultStatus(result) == PGRES_COMMAND_OK, PQresultErrorMessage(result));
    PQclear(result);
  }
  Exec(connection, "COMMIT");
  return Seconds(started);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: postgres_sink_bench URL [pair_rows] [insert_rows] [documents] "
                 "[indexed]\n");
    return 2;
  }
  const std::string url = argv[1];
  const uint64_t pair_rows = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  const uint64_t insert_rows = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100000;
  const uint64_t documents = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 10000;
  const bool indexed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) != 0 : true;
  constexpr uint64_t kTop = 100;

  // The same rows for every method.
  std::vector<std::string> ids;
  const uint64_t num_ids = std::max<uint64_t>(documents, 1000);
  for (uint64_t i = 0; i < num_ids; ++i) ids.push_back(Id(i));
  std::vector<neardup::PairRecord> pairs;
  pairs.reserve(pair_rows);
  for (uint64_t i = 0; i < pair_rows; ++i) {
    pairs.push_back({ids[i % num_ids], ids[(i * 7919 + 13) % num_ids],
                     0.5 + static_cast<double>(i % 1000) / 2000.0, -1});
  }

  const std::vector<neardup::PairRecord> seed_pairs = {{"seed-a", "seed-b", 0.5, -1}};
  for (neardup::CopyFormat format : {neardup::CopyFormat::kBinary, neardup::CopyFormat::kText}) {
    neardup::ResultSinkOptions options;
    options.copy_format = format;
    auto sink = neardup::OpenResultSink(url, options);
    Check(sink.ok(), sink.ok() ? "" : sink.status().message());
    const char* name = format == neardup::CopyFormat::kBinary ? "binary" : "text";
    for (bool into_empty : {true, false}) {
      if (!into_empty && !indexed) break;
      // Into empty tables: a run of no pairs empties them (and creates them
      // the first time). Into a stored result: one stored pair, so that
      // every pair is new but the incremental path runs.
      Check((*sink)->UpdatePairs({}).ok(), "empty run");
      if (!into_empty) Check((*sink)->UpdatePairs(seed_pairs).ok(), "seed run");
      const auto started = Clock::now();
      auto stats = (*sink)->UpdatePairs(pairs);
      const double seconds = Seconds(started);
      Check(stats.ok(), stats.ok() ? "" : stats.status().message());
      std::printf("COPY %-6s pairs, %-22s %9llu rows in %7.2f s = %9.0f rows/s\n", name,
                  into_empty ? "into empty tables:" : "indexes maintained:",
                  static_cast<unsigned long long>(pair_rows), seconds,
                  static_cast<double>(pair_rows) / seconds);
    }
    Check((*sink)->UpdatePairs({}).ok(), "empty run");
  }
  {
    PGconn* connection = PQconnectdb(url.c_str());
    Check(PQstatus(connection) == CONNECTION_OK, PQerrorMessage(connection));
    std::vector<neardup::PairRecord> some(pairs.begin(),
                                          pairs.begin() + std::min(insert_rows, pair_rows));
    const double seconds = InsertRowByRow(connection, some);
    std::printf("INSERT prepared pairs: %9zu rows in %7.2f s = %9.0f rows/s\n", some.size(),
                seconds, static_cast<double>(some.size()) / seconds);
    Exec(connection, "DELETE FROM neardup_pairs");
    PQfinish(connection);
  }

  // Top-100 lists: a first load, then 1% of the lists changed.
  std::vector<neardup::TopNRecord> rows;
  rows.reserve(documents * kTop);
  for (uint64_t d = 0; d < documents; ++d) {
    for (uint64_t r = 0; r < kTop; ++r) {
      const double score = 1.0 - static_cast<double>(r) / 200.0;
      rows.push_back({ids[d], ids[(d + r + 1) % documents], score, score * 0.9});
    }
  }
  auto sink = neardup::OpenResultSink(url);
  Check(sink.ok(), sink.ok() ? "" : sink.status().message());
  auto started = Clock::now();
  auto stats = (*sink)->UpdateTopN(rows);
  double seconds = Seconds(started);
  Check(stats.ok(), stats.ok() ? "" : stats.status().message());
  std::printf(
      "top-%llu lists, first load (into empty tables): %llu documents, %llu rows in %.2f s = "
      "%.0f rows/s\n",
      static_cast<unsigned long long>(kTop), static_cast<unsigned long long>(documents),
      static_cast<unsigned long long>(rows.size()), seconds,
      static_cast<double>(rows.size()) / seconds);
  for (uint64_t d = 0; d < documents; d += 100) {
    for (uint64_t r = 0; r < kTop; ++r) rows[d * kTop + r].a_in_b *= 0.5;
  }
  started = Clock::now();
  stats = (*sink)->UpdateTopN(rows);
  seconds = Seconds(started);
  Check(stats.ok(), stats.ok() ? "" : stats.status().message());
  std::printf(
      "top-%llu lists, 1%% changed: %llu lists replaced, %llu unchanged, %llu rows "
      "written, %llu deleted in %.2f s\n",
      static_cast<unsigned long long>(kTop),
      static_cast<unsigned long long>(stats->documents_replaced),
      static_cast<unsigned long long>(stats->documents_unchanged),
      static_cast<unsigned long long>(stats->rows_written),
      static_cast<unsigned long long>(stats->rows_deleted), seconds);
  if (indexed) {
    // The same load through the incremental path (every list new, the
    // primary key maintained row by row): what a first load cost before the
    // bulk path.
    const std::vector<neardup::TopNRecord> seed = {{"seed-a", "seed-b", 0.5, 0.5}};
    Check((*sink)->UpdateTopN(seed).ok(), "seed run");
    started = Clock::now();
    stats = (*sink)->UpdateTopN(rows);
    seconds = Seconds(started);
    Check(stats.ok(), stats.ok() ? "" : stats.status().message());
    std::printf("top-%llu lists, indexes maintained: %llu rows in %.2f s = %.0f rows/s\n",
                static_cast<unsigned long long>(kTop), static_cast<unsigned long long>(rows.size()),
                seconds, static_cast<double>(rows.size()) / seconds);
  }
  return 0;
}
