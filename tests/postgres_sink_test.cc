// The PostgreSQL result sink against a real server that the test starts
// (postgres_test_server.h): rows equal the JSON output for similar, pairs
// and clusters; a run is one transaction (another session sees the old rows
// until COMMIT, a failed run leaves them); an incremental run rewrites only
// the lists that changed; hostile ids round-trip in both COPY formats; bad
// URLs, unreachable servers and wrong passwords fail clearly without ever
// showing the password. Skips when PostgreSQL is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <simdjson.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_util.h"
#include "neardup/result_sink.h"
#include "postgres_test_server.h"

namespace neardup {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::PostgresTestServer;

using Rows = std::vector<std::vector<std::string>>;  // text values, NULL as "<null>"

struct ConnectionDeleter {
  void operator()(PGconn* connection) const { PQfinish(connection); }
};
using Connection = std::unique_ptr<PGconn, ConnectionDeleter>;

// Hostile ids: quotes, COPY's special bytes, a literal \N, non-ASCII.
const std::vector<std::string> kHostileIds = {"it's \"quoted\"",
                                              "tab\there",
                                              "new\nline\r\n",
                                              "back\\slash \\N \\t",
                                              "\\N",
                                              "ünïcödé 日本 😀",
                                              "comma, semi; pipe| {brace} [x]",
                                              ""};

// The same ids as JSON string literals.
const std::vector<std::string> kHostileJson = {R"("it's \"quoted\"")",
                                               R"("tab\there")",
                                               R"("new\nline\r\n")",
                                               R"("back\\slash \\N \\t")",
                                               R"("\\N")",
                                               "\"ünïcödé 日本 😀\"",
                                               R"("comma, semi; pipe| {brace} [x]")",
                                               R"("")"};

class PostgresSinkTest : public testing::CliTestBase {
 protected:
  static void SetUpTestSuite() {
    server_ = new PostgresTestServer;
    skip_reason_ = server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << "PostgreSQL tests skipped: " << skip_reason_;
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    db_ = "t_" + name.substr(0, 50);
    Connection admin = Connect("postgres");
    ASSERT_NE(admin, nullptr);
    Exec(admin.get(), "CREATE DATABASE " + db_);
  }

  std::string Url(const std::string& password = PostgresTestServer::kPasswordInUrl) const {
    return server_->Url(db_, password);
  }

  Connection Connect(const std::string& db = "") const {
    Connection connection(PQconnectdb(server_->Url(db.empty() ? db_ : db).c_str()));
    if (PQstatus(connection.get()) != CONNECTION_OK) {
      ADD_FAILURE() << PQerrorMessage(connection.get());
      return nullptr;
    }
    PQsetClientEncoding(connection.get(), "UTF8");
    return connection;
  }

  static Rows Query(PGconn* connection, const std::string& sql) {
    Rows rows;
    PGresult* result = PQexec(connection, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    EXPECT_TRUE(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
        << sql << ": " << PQresultErrorMessage(result);
    for (int i = 0; i < PQntuples(result); ++i) {
      std::vector<std::string> row;
      for (int j = 0; j < PQnfields(result); ++j) {
        row.push_back(PQgetisnull(result, i, j)
                          ? "<null>"
                          : std::string(PQgetvalue(result, i, j),
                                        static_cast<size_t>(PQgetlength(result, i, j))));
      }
      rows.push_back(std::move(row));
    }
    PQclear(result);
    return rows;
  }
  static void Exec(PGconn* connection, const std::string& sql) { Query(connection, sql); }

  // `neardup <args> --sink URL` through the shell (the URL single-quoted).
  CommandResult Sink(const std::string& args, const std::string& url) {
    return Neardup(args + " --sink '" + url + "'", 60);
  }

  static void ExpectNoSecret(const CommandResult& run, const std::vector<std::string>& secrets) {
    for (const std::string& secret : secrets) {
      EXPECT_THAT(run.out, Not(HasSubstr(secret)));
      EXPECT_THAT(run.err, Not(HasSubstr(secret)));
    }
  }

  // The `similar` JSON lines as (a, rank, b, a_in_b, b_in_a) rows, ranks
  // counted within each a, sorted as the database sorts them (bytes).
  static Rows SimilarJsonRows(const std::string& jsonl) {
    simdjson::ondemand::parser parser;
    Rows rows;
    std::map<std::string, int> rank;
    for (const std::string& line : Lines(jsonl)) {
      simdjson::padded_string padded(line);
      simdjson::ondemand::document doc = parser.iterate(padded);
      std::string a(doc["a"].get_string().value());
      std::string b(doc["b"].get_string().value());
      double a_in_b = double(doc["a_in_b"]);
      double b_in_a = double(doc["b_in_a"]);
      rows.push_back({a, std::to_string(++rank[a]), b, Score(a_in_b), Score(b_in_a)});
    }
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
      return std::make_tuple(x[0], std::stoi(x[1])) < std::make_tuple(y[0], std::stoi(y[1]));
    });
    return rows;
  }

  // A score as the JSON output rounds it (6 significant digits).
  static std::string Score(double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.6g", value);
    return text;
  }
  static std::string Score(const std::string& stored) { return Score(std::stod(stored)); }

  Rows SimilarDatabaseRows(PGconn* connection) {
    Rows rows = Query(connection,
                      "SELECT a, rank, b, a_in_b, b_in_a FROM neardup_similar "
                      "ORDER BY a COLLATE \"C\", rank");
    for (auto& row : rows) {
      row[3] = Score(row[3]);
      row[4] = Score(row[4]);
    }
    return rows;
  }

  std::string Collection() const { return (dir_ / "archive").string(); }

  static PostgresTestServer* server_;
  static std::string skip_reason_;
  std::string db_;
};

PostgresTestServer* PostgresSinkTest::server_ = nullptr;
std::string PostgresSinkTest::skip_reason_;

TEST_F(PostgresSinkTest, SimilarRowsEqualTheJsonAndAnIncrementalRunRewritesOnlyChangedLists) {
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  ASSERT_EQ(Neardup("index add -q " + Collection() + " " + Example()).exit_code, 0);
  CommandResult json = Neardup("similar -q " + Collection());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  CommandResult sink = Sink("similar " + Collection(), Url());
  ASSERT_EQ(sink.exit_code, 0) << sink.err;
  EXPECT_EQ(sink.out, "");  // --sink without --output prints nothing
  Connection reader = Connect();
  const Rows expected = SimilarJsonRows(json.out);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(SimilarDatabaseRows(reader.get()), expected);
  std::set<std::string> documents;
  for (const auto& row : expected) documents.insert(row[0]);
  EXPECT_THAT(sink.err, HasSubstr(std::to_string(expected.size()) + " rows written, 0 deleted"));
  EXPECT_THAT(sink.err, HasSubstr("lists replaced " + std::to_string(documents.size())));
  EXPECT_THAT(sink.err, Not(HasSubstr(PostgresTestServer::kPasswordInUrl)));

  // Each list's transaction id: a rewritten list gets a new one.
  const std::string kVersions =
      "SELECT a, min(xmin::text), max(xmin::text) FROM neardup_similar GROUP BY a ORDER BY a";
  const Rows before = Query(reader.get(), kVersions);

  // Nothing changed: nothing is rewritten.
  CommandResult again =
      Sink("similar " + Collection() + " -o " + (dir_ / "again.jsonl").string(), Url());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Read((dir_ / "again.jsonl").string()), json.out);  // --output still written
  EXPECT_THAT(again.err, HasSubstr("0 rows written, 0 deleted; lists replaced 0, removed 0"));
  EXPECT_EQ(Query(reader.get(), kVersions), before);

  // A copy of harbor-wall-1 arrives and bread-recipe goes: the lists of the
  // harbor and bread documents change, the others stay as they were.
  std::string first_line = Lines(Read(Example()))[0];
  first_line.replace(first_line.find("harbor-wall-1"), 13, "harbor-wall-9");
  Write("more.jsonl", first_line + "\n");
  ASSERT_EQ(
      Neardup("index add -q " + Collection() + " " + (dir_ / "more.jsonl").string()).exit_code, 0);
  ASSERT_EQ(Neardup("index remove -q " + Collection() + " bread-recipe").exit_code, 0);
  CommandResult json2 = Neardup("similar -q " + Collection());
  ASSERT_EQ(json2.exit_code, 0) << json2.err;
  CommandResult incremental = Sink("similar " + Collection(), Url());
  ASSERT_EQ(incremental.exit_code, 0) << incremental.err;
  const Rows expected2 = SimilarJsonRows(json2.out);
  EXPECT_EQ(SimilarDatabaseRows(reader.get()), expected2);

  // The lists that differ between the two JSON outputs, and only those, have
  // new row versions.
  auto lists = [](const Rows& rows) {
    std::map<std::string, Rows> by_document;
    for (const auto& row : rows) by_document[row[0]].push_back(row);
    return by_document;
  };
  const auto old_lists = lists(expected), new_lists = lists(expected2);
  std::map<std::string, std::vector<std::string>> old_versions;
  for (const auto& row : before) old_versions[row[0]] = row;
  size_t changed = 0, unchanged = 0;
  for (const auto& row : Query(reader.get(), kVersions)) {
    auto old_list = old_lists.find(row[0]);
    const bool same = old_list != old_lists.end() && old_list->second == new_lists.at(row[0]);
    if (same) {
      ++unchanged;
      EXPECT_EQ(row, old_versions[row[0]]) << row[0] << " was rewritten though unchanged";
    } else {
      ++changed;
      EXPECT_NE(row[1], old_versions[row[0]].size() > 1 ? old_versions[row[0]][1] : "")
          << row[0] << " changed but kept its rows";
    }
  }
  size_t removed = 0;
  for (const auto& [a, rows] : old_lists) removed += new_lists.count(a) == 0;
  EXPECT_GT(changed, 0u);
  EXPECT_GT(unchanged, 0u);
  EXPECT_GT(removed, 0u);
  EXPECT_THAT(incremental.err,
              HasSubstr("lists replaced " + std::to_string(changed) + ", removed " +
                        std::to_string(removed) + ", unchanged " + std::to_string(unchanged)));
  // The digests describe what is stored.
  EXPECT_EQ(Query(reader.get(), "SELECT count(*) FROM neardup_similar_lists")[0][0],
            std::to_string(new_lists.size()));
  EXPECT_EQ(Query(reader.get(),
                  "SELECT count(*) FROM neardup_similar_lists l WHERE length <> "
                  "(SELECT count(*) FROM neardup_similar s WHERE s.a = l.a)")[0][0],
            "0");
  Rows runs = Query(reader.get(), "SELECT kind, label FROM neardup_runs ORDER BY run");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0][0], "similar");
  EXPECT_EQ(runs[0][1], "similar " + Collection());
}

TEST_F(PostgresSinkTest, PairsAndClustersWithHostileIdsEqualTheJson) {
  // The example corpus with hostile ids in place of the first ones.
  std::string input;
  size_t n = 0;
  for (std::string line : Lines(Read(Example()))) {
    if (n < kHostileJson.size()) {
      const size_t begin = line.find("\"id\": ") + 6;
      const size_t end = line.find('"', begin + 1) + 1;
      line.replace(begin, end - begin, kHostileJson[n]);
    }
    ++n;
    input += line + "\n";
  }
  const std::string path = Write("hostile.jsonl", input);
  Connection reader = Connect();
  simdjson::ondemand::parser parser;

  for (const char* method : {"minhash", "simhash"}) {
    const std::string args = std::string("pairs -q --method ") + method + " " + path;
    CommandResult json = Neardup(args);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    Rows expected;
    for (const std::string& line : Lines(json.out)) {
      simdjson::padded_string padded(line);
      simdjson::ondemand::document doc = parser.iterate(padded);
      std::string a(doc["a"].get_string().value());
      std::string b(doc["b"].get_string().value());
      int64_t distance = -1;
      if (std::string_view(method) == "simhash") distance = int64_t(doc["distance"]);
      double similarity = double(doc["similarity"]);
      expected.push_back(
          {a, b, Score(similarity), distance < 0 ? "<null>" : std::to_string(distance)});
    }
    ASSERT_FALSE(expected.empty()) << method;
    // Twice: the second run replaces the first one's rows.
    for (int run = 0; run < 2; ++run) {
      CommandResult sink = Sink(args, Url());
      ASSERT_EQ(sink.exit_code, 0) << sink.err;
      Rows stored = Query(reader.get(), "SELECT a, b, similarity, distance FROM neardup_pairs");
      for (auto& row : stored) row[2] = Score(row[2]);
      std::sort(stored.begin(), stored.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(stored, expected) << method << " run " << run;
    }
    // Pairs of hostile ids are there (else the test would prove little).
    if (std::string_view(method) == "minhash") {
      EXPECT_EQ(Query(reader.get(),
                      "SELECT count(*) FROM neardup_pairs WHERE a = 'it''s "
                      "\"quoted\"' AND b = E'new\\nline\\r\\n'")[0][0],
                "1");
    }
  }

  CommandResult json = Neardup("clusters -q " + path);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  Rows expected;
  for (const std::string& line : Lines(json.out)) {
    simdjson::padded_string padded(line);
    simdjson::ondemand::document doc = parser.iterate(padded);
    // Stored under its first member's id.
    std::vector<std::string> members;
    for (auto id : doc["ids"].get_array()) members.emplace_back(std::string_view(id.get_string()));
    for (const std::string& member : members) expected.push_back({members[0], member});
  }
  ASSERT_FALSE(expected.empty());
  CommandResult sink = Sink("clusters " + path, Url());
  ASSERT_EQ(sink.exit_code, 0) << sink.err;
  Rows stored = Query(reader.get(), "SELECT cluster, id FROM neardup_clusters");
  std::sort(stored.begin(), stored.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(stored, expected);
}

// pairs and clusters are incremental like similar: after two documents
// arrive (one a copy of an existing one), only the documents whose pairs
// changed and the clusters that changed get new row versions, and the
// stored rows equal the JSON output again.
TEST_F(PostgresSinkTest, PairsAndClustersRunsRewriteOnlyTheChangedGroups) {
  const std::vector<std::string> lines = Lines(Read(Example()));
  std::string corpus;
  for (const std::string& line : lines) corpus += line + "\n";
  const std::string path = Write("corpus.jsonl", corpus);
  std::string copy = lines[0];
  copy.replace(copy.find("harbor-wall-1"), 13, "harbor-wall-9");
  std::string other = lines.back();
  const size_t id_begin = other.find("\"id\": \"") + 7;
  other.replace(id_begin, other.find('"', id_begin) - id_begin, "zz-new-copy");
  Connection reader = Connect();
  simdjson::ondemand::parser parser;

  // (key, row) of each table as JSON says, and the row versions per key.
  auto pair_rows = [&](const std::string& jsonl) {
    Rows rows;
    for (const std::string& line : Lines(jsonl)) {
      simdjson::padded_string padded(line);
      simdjson::ondemand::document doc = parser.iterate(padded);
      rows.push_back(
          {std::string(doc["a"].get_string().value()), std::string(doc["b"].get_string().value())});
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  auto cluster_rows = [&](const std::string& jsonl) {
    Rows rows;
    for (const std::string& line : Lines(jsonl)) {
      simdjson::padded_string padded(line);
      simdjson::ondemand::document doc = parser.iterate(padded);
      std::vector<std::string> members;
      for (auto id : doc["ids"].get_array()) {
        members.emplace_back(std::string_view(id.get_string()));
      }
      for (const std::string& member : members) rows.push_back({members[0], member});
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  struct Table {
    const char* command;
    const char* rows_sql;
    const char* versions_sql;
    std::function<Rows(const std::string&)> from_json;
  };
  const Table tables[] = {
      {"pairs", "SELECT a, b FROM neardup_pairs ORDER BY 1, 2",
       "SELECT a, min(xmin::text) FROM neardup_pairs GROUP BY a", pair_rows},
      {"clusters", "SELECT cluster, id FROM neardup_clusters ORDER BY 1, 2",
       "SELECT cluster, min(xmin::text) FROM neardup_clusters GROUP BY cluster", cluster_rows},
  };
  for (const Table& table : tables) {
    SCOPED_TRACE(table.command);
    const std::string args = std::string(table.command) + " -q --threshold 0.5 ";
    Write("corpus.jsonl", corpus);
    CommandResult json = Neardup(args + path);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    ASSERT_EQ(Sink(args + path, Url()).exit_code, 0);
    const Rows before = table.from_json(json.out);
    ASSERT_FALSE(before.empty());
    // The stored rows sort as bytes only under "C": compare sorted here.
    auto stored = [&] {
      Rows rows = Query(reader.get(), table.rows_sql);
      std::sort(rows.begin(), rows.end());
      return rows;
    };
    EXPECT_EQ(stored(), before);
    std::map<std::string, std::string> old_versions;
    for (const auto& row : Query(reader.get(), table.versions_sql)) old_versions[row[0]] = row[1];

    Write("corpus.jsonl", corpus + copy + "\n" + other + "\n");
    CommandResult json2 = Neardup(args + path);
    ASSERT_EQ(json2.exit_code, 0) << json2.err;
    CommandResult sink = Sink(std::string(table.command) + " --threshold 0.5 " + path, Url());
    ASSERT_EQ(sink.exit_code, 0) << sink.err;
    const Rows after = table.from_json(json2.out);
    EXPECT_EQ(stored(), after);
    // Per key: the same rows keep their versions, others have new ones.
    auto by_key = [](const Rows& rows) {
      std::map<std::string, Rows> groups;
      for (const auto& row : rows) groups[row[0]].push_back(row);
      return groups;
    };
    const auto old_groups = by_key(before), new_groups = by_key(after);
    size_t changed = 0, unchanged = 0;
    for (const auto& row : Query(reader.get(), table.versions_sql)) {
      auto old_group = old_groups.find(row[0]);
      if (old_group != old_groups.end() && old_group->second == new_groups.at(row[0])) {
        ++unchanged;
        EXPECT_EQ(row[1], old_versions[row[0]]) << row[0] << " was rewritten though unchanged";
      } else {
        ++changed;
        EXPECT_NE(row[1], old_versions[row[0]]) << row[0] << " changed but kept its rows";
      }
    }
    EXPECT_GT(changed, 0u);
    EXPECT_GT(unchanged, 0u);
    EXPECT_THAT(sink.err, HasSubstr("lists replaced " + std::to_string(changed)));
    EXPECT_THAT(sink.err, HasSubstr("unchanged " + std::to_string(unchanged)));
  }
}

TEST_F(PostgresSinkTest, HostileTextRoundTripsInBothCopyFormats) {
  std::vector<std::string> ids = kHostileIds;
  ids.push_back("invalid \xFF utf-8");
  for (CopyFormat format : {CopyFormat::kBinary, CopyFormat::kText}) {
    ResultSinkOptions options;
    options.copy_format = format;
    options.label = "label with 'quotes', \\ and \t";
    Result<std::unique_ptr<ResultSink>> sink = OpenResultSink(Url(), options);
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    std::vector<PairRecord> pairs;
    std::vector<TopNRecord> top;
    for (size_t i = 0; i < ids.size(); ++i) {
      for (size_t j = 0; j < ids.size(); ++j) {
        if (i == j) continue;
        // Scores that text must carry exactly (17 digits) and binary as bits.
        const double score = 1.0 / static_cast<double>(3 + i * ids.size() + j);
        pairs.push_back({ids[i], ids[j], score, static_cast<int>(j)});
        top.push_back({ids[i], ids[j], score, 1.0 - score});
      }
    }
    ASSERT_TRUE((*sink)->UpdatePairs(pairs).ok());
    Result<SinkStats> stats = (*sink)->UpdateTopN(top);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    Connection reader = Connect();
    Rows stored = Query(reader.get(),
                        "SELECT a, b, similarity::text, distance FROM neardup_pairs "
                        "ORDER BY distance, a COLLATE \"C\"");
    Rows stored_top = Query(reader.get(),
                            "SELECT a, rank, b, a_in_b::text, b_in_a::text FROM neardup_similar "
                            "ORDER BY a COLLATE \"C\", rank");
    auto stored_id = [](const std::string& id) {
      return id == "invalid \xFF utf-8" ? std::string("invalid \xEF\xBF\xBD utf-8") : id;
    };
    Rows expected, expected_top;
    for (const PairRecord& pair : pairs) {
      expected.push_back({stored_id(std::string(pair.a)), stored_id(std::string(pair.b)), "",
                          std::to_string(pair.distance)});
    }
    std::sort(expected.begin(), expected.end(), [](const auto& x, const auto& y) {
      return std::make_tuple(std::stoi(x[3]), x[0]) < std::make_tuple(std::stoi(y[3]), y[0]);
    });
    ASSERT_EQ(stored.size(), expected.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      EXPECT_EQ(stored[i][0], expected[i][0]);
      EXPECT_EQ(stored[i][1], expected[i][1]);
      EXPECT_EQ(stored[i][3], expected[i][3]);
    }
    // Exact doubles: every stored score is the one sent.
    std::map<std::pair<std::string, std::string>, double> sent;
    for (const PairRecord& pair : pairs) {
      sent[{stored_id(std::string(pair.a)), stored_id(std::string(pair.b))}] = pair.similarity;
    }
    for (const auto& row : stored) EXPECT_EQ(std::stod(row[2]), (sent[{row[0], row[1]}]));
    ASSERT_EQ(stored_top.size(), top.size());
    for (const auto& row : stored_top) {
      const double score = sent[{row[0], row[2]}];
      EXPECT_EQ(std::stod(row[3]), score);
      EXPECT_EQ(std::stod(row[4]), 1.0 - score);
    }
    Rows label = Query(reader.get(), "SELECT label FROM neardup_runs ORDER BY run DESC LIMIT 1");
    EXPECT_EQ(label[0][0], options.label);

    // A NUL byte, or one document's rows apart, is refused and changes nothing.
    std::vector<PairRecord> nul = {{std::string_view("a\0b", 3), "c", 0.5, 1}};
    Result<SinkStats> refused = (*sink)->UpdatePairs(nul);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    std::vector<TopNRecord> apart = {
        {"x", "y", 0.5, 0.5}, {"y", "x", 0.5, 0.5}, {"x", "z", 0.5, 0.5}};
    EXPECT_EQ((*sink)->UpdateTopN(apart).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(Query(reader.get(), "SELECT count(*) FROM neardup_pairs")[0][0],
              std::to_string(pairs.size()));
    EXPECT_EQ(Query(reader.get(), "SELECT count(*) FROM neardup_similar")[0][0],
              std::to_string(top.size()));
  }
}

TEST_F(PostgresSinkTest, AnotherSessionSeesTheOldRowsUntilCommitAndNothingOfAFailedRun) {
  Connection reader = Connect();
  const std::string kTop = "SELECT a, rank, b FROM neardup_similar ORDER BY a COLLATE \"C\", rank";
  const std::string kPairs = "SELECT a, b FROM neardup_pairs ORDER BY a, b";
  std::vector<TopNRecord> v1 = {{"d1", "d2", 0.9, 0.8},
                                {"d1", "d3", 0.5, 0.4},
                                {"d2", "d1", 0.8, 0.9},
                                {"d3", "d1", 0.4, 0.5}};
  // d1's list stays, d2's changes, d3's goes, d4's comes.
  std::vector<TopNRecord> v2 = {{"d1", "d2", 0.9, 0.8},
                                {"d1", "d3", 0.5, 0.4},
                                {"d2", "d1", 0.8, 0.9},
                                {"d2", "d4", 0.7, 0.7},
                                {"d4", "d2", 0.7, 0.7}};
  std::vector<PairRecord> p1 = {{"d1", "d2", 0.9, -1}, {"d1", "d3", 0.8, -1}};
  std::vector<PairRecord> p2 = {{"d2", "d4", 0.7, -1}};
  {
    Result<std::unique_ptr<ResultSink>> sink = OpenResultSink(Url());
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    ASSERT_TRUE((*sink)->UpdateTopN(v1).ok());
    ASSERT_TRUE((*sink)->UpdatePairs(p1).ok());
  }
  const Rows old_top = Query(reader.get(), kTop);
  const Rows old_pairs = Query(reader.get(), kPairs);
  ASSERT_EQ(old_top.size(), 4u);

  // Just before COMMIT, every row is written and deleted, yet the other
  // session still reads the last committed result.
  int hook_calls = 0;
  Rows committed_top = old_top, committed_pairs = old_pairs;
  ResultSinkOptions options;
  options.before_commit = [&]() -> Status {
    ++hook_calls;
    EXPECT_EQ(Query(reader.get(), kTop), committed_top);
    EXPECT_EQ(Query(reader.get(), kPairs), committed_pairs);
    return Status::Ok();
  };
  Result<std::unique_ptr<ResultSink>> sink = OpenResultSink(Url(), options);
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  Result<SinkStats> stats = (*sink)->UpdateTopN(v2);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->documents_replaced, 2u);   // d2 changed, d4 new
  EXPECT_EQ(stats->documents_removed, 1u);    // d3
  EXPECT_EQ(stats->documents_unchanged, 1u);  // d1
  EXPECT_EQ(stats->rows_written, 3u);
  EXPECT_EQ(stats->rows_deleted, 2u);
  const Rows new_top = Query(reader.get(), kTop);
  EXPECT_EQ(new_top, (Rows{{"d1", "1", "d2"},
                           {"d1", "2", "d3"},
                           {"d2", "1", "d1"},
                           {"d2", "2", "d4"},
                           {"d4", "1", "d2"}}));
  committed_top = new_top;
  ASSERT_TRUE((*sink)->UpdatePairs(p2).ok());
  EXPECT_EQ(hook_calls, 2);
  EXPECT_EQ(Query(reader.get(), kPairs), (Rows{{"d2", "d4"}}));

  // A run that fails before COMMIT leaves the last committed result.
  ResultSinkOptions failing;
  failing.before_commit = [] { return IoError("stop before commit"); };
  Result<std::unique_ptr<ResultSink>> failing_sink = OpenResultSink(Url(), failing);
  ASSERT_TRUE(failing_sink.ok());
  Result<SinkStats> failed = (*failing_sink)->UpdateTopN(v1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "stop before commit");
  EXPECT_FALSE((*failing_sink)->UpdatePairs(p1).ok());
  EXPECT_EQ(Query(reader.get(), kTop), new_top);
  EXPECT_EQ(Query(reader.get(), kPairs), (Rows{{"d2", "d4"}}));
  // A connection is still usable after a rollback.
  committed_pairs = {{"d2", "d4"}};
  EXPECT_TRUE((*sink)->UpdatePairs(p1).ok());
  EXPECT_EQ(Query(reader.get(), kPairs), old_pairs);
}

TEST_F(PostgresSinkTest, BadServerOrCredentialsFailClearlyWithoutShowingThePassword) {
  const std::string news = Example();
  // Wrong password in the URL.
  CommandResult wrong = Sink("pairs -q " + news, Url("Wr0ngPassw0rd"));
  EXPECT_EQ(wrong.exit_code, 3) << wrong.err;
  EXPECT_THAT(wrong.err, HasSubstr("cannot connect to PostgreSQL"));
  EXPECT_THAT(wrong.err, HasSubstr("password authentication failed"));
  EXPECT_THAT(wrong.err, HasSubstr("neardup_test:***@"));
  ExpectNoSecret(wrong, {"Wr0ngPassw0rd"});

  // The password from PGPASSWORD: right, then wrong.
  ASSERT_EQ(setenv("PGPASSWORD", PostgresTestServer::kPassword, 1), 0);
  CommandResult from_env = Sink("pairs " + news, Url(""));
  EXPECT_EQ(from_env.exit_code, 0) << from_env.err;
  EXPECT_EQ(from_env.out, "");
  ExpectNoSecret(from_env, {PostgresTestServer::kPassword, PostgresTestServer::kPasswordInUrl});
  ASSERT_EQ(setenv("PGPASSWORD", "EnvWr0ngPass", 1), 0);
  CommandResult wrong_env = Sink("pairs " + news, Url(""));
  EXPECT_EQ(wrong_env.exit_code, 3);
  EXPECT_THAT(wrong_env.err, HasSubstr("password authentication failed"));
  ExpectNoSecret(wrong_env, {"EnvWr0ngPass"});
  unsetenv("PGPASSWORD");

  // No server at the address: a refused TCP connection, a missing socket.
  CommandResult refused = Sink("pairs -q " + news, "postgresql://u:Unreach4ble@127.0.0.1:1/db");
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_THAT(refused.err,
              HasSubstr("cannot connect to PostgreSQL at postgresql://u:***@127.0.0.1:1/db"));
  ExpectNoSecret(refused, {"Unreach4ble"});
  CommandResult no_socket =
      Sink("similar " + Collection(), "postgresql://u:N0Socket@/db?host=/nonexistent&port=5");
  EXPECT_NE(no_socket.exit_code, 0);
  ExpectNoSecret(no_socket, {"N0Socket"});
  ASSERT_EQ(Neardup("index create " + Collection()).exit_code, 0);
  CommandResult similar_refused =
      Sink("similar " + Collection(), "postgresql://u:Unreach4ble@127.0.0.1:1/db");
  EXPECT_EQ(similar_refused.exit_code, 3);
  ExpectNoSecret(similar_refused, {"Unreach4ble"});

  // Malformed URLs: libpq's parser quotes what it rejects.
  for (const char* url :
       {"postgresql://u:Malf0rmed@host:notaport/db", "postgresql://u:Malf0rmed%zz@host/db",
        "postgresql://host/db?password=Malf0rmed&bogus_option=1"}) {
    CommandResult malformed = Sink("pairs -q " + news, url);
    EXPECT_NE(malformed.exit_code, 0) << url;
    EXPECT_NE(malformed.err, "") << url;
    ExpectNoSecret(malformed, {"Malf0rmed"});
  }
  // Not a PostgreSQL URL at all: a usage error.
  CommandResult other = Sink("pairs -q " + news, "mysql://u:Hunter2x@h/db");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_THAT(other.err, HasSubstr("must be a postgresql:// or postgres:// URL"));
  ExpectNoSecret(other, {"Hunter2x"});
}

}  // namespace
}  // namespace neardup
