// `neardup pairs`, `clusters` (both rules) and `dedup` give byte-identical
// output for every thread count (issue 13: the stages after fingerprinting
// run on all cores), and that output is a brute-force oracle's on a planted
// corpus.
//
// The corpus: chains of documents cut from one long stream of random words,
// each window shifted by a tenth of its length from the previous one, so
// neighbours share 90% of their words (word-shingle Jaccard about 0.82) and
// documents two apart 80% (about 0.67), whatever the shingle width (1-9);
// unrelated documents share no shingle. At threshold 0.75 the near-duplicate
// pairs are exactly the chain neighbours: components are whole chains, while
// the leader rule cuts a chain into pairs (member 1 joins leader 0, member 2
// is similar only to member 1, so it leads, and so on). Chains and
// singletons are interleaved so that clusters overlap in input order.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_util.h"
#include "util/mix.h"

namespace neardup::testing {
namespace {

constexpr int kWindow = 200;  // words per document
constexpr int kShift = 20;    // words between chain neighbours

struct Planted {
  std::string jsonl;
  std::vector<std::string> ids;            // in input order
  std::vector<int> chain;                  // chain of each document, -1 for none
  std::vector<int> position;               // place in its chain
  std::vector<std::pair<int, int>> pairs;  // (a, b) input positions, a < b
};

std::string Word(internal::SplitMix64& rng) {
  std::string word;
  const int length = 3 + static_cast<int>(rng.Next() % 6);
  for (int i = 0; i < length; ++i) word.push_back(static_cast<char>('a' + rng.Next() % 26));
  return word;
}

Planted MakeCorpus() {
  internal::SplitMix64 rng(2026);
  const std::vector<int> chain_lengths = {2, 5, 3, 7, 2, 4, 6, 3};
  // Each chain member or singleton, then shuffled into the input order.
  std::vector<std::pair<int, int>> slots;  // (chain or -1, position)
  for (int c = 0; c < static_cast<int>(chain_lengths.size()); ++c) {
    for (int i = 0; i < chain_lengths[c]; ++i) slots.emplace_back(c, i);
  }
  for (int i = 0; i < 60; ++i) slots.emplace_back(-1, i);
  for (size_t i = slots.size() - 1; i > 0; --i) std::swap(slots[i], slots[rng.Next() % (i + 1)]);
  // Keep each chain's members in chain order, so that the leader rule's
  // outcome follows from the chain alone.
  std::map<int, std::vector<size_t>> at;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].first >= 0) at[slots[i].first].push_back(i);
  }
  for (auto& [c, places] : at) {
    for (size_t i = 0; i < places.size(); ++i) slots[places[i]].second = static_cast<int>(i);
  }
  std::vector<std::vector<std::string>> streams(chain_lengths.size());
  for (size_t c = 0; c < chain_lengths.size(); ++c) {
    for (int i = 0; i < kWindow + kShift * (chain_lengths[c] - 1); ++i) {
      streams[c].push_back(Word(rng));
    }
  }
  Planted planted;
  std::map<int, std::vector<int>> members;
  for (size_t doc = 0; doc < slots.size(); ++doc) {
    const auto [chain, position] = slots[doc];
    std::string text;
    for (int w = 0; w < kWindow; ++w) {
      if (w > 0) text += ' ';
      text += chain >= 0 ? streams[chain][position * kShift + w] : Word(rng);
    }
    const std::string id = "doc" + std::to_string(doc);
    planted.jsonl += "{\"id\":\"" + id + "\",\"text\":\"" + text + "\"}\n";
    planted.ids.push_back(id);
    planted.chain.push_back(chain);
    planted.position.push_back(position);
    if (chain >= 0) members[chain].push_back(static_cast<int>(doc));
  }
  for (const auto& [chain, docs] : members) {
    for (size_t i = 0; i + 1 < docs.size(); ++i) planted.pairs.emplace_back(docs[i], docs[i + 1]);
  }
  std::sort(planted.pairs.begin(), planted.pairs.end());
  return planted;
}

// The oracle's clusters of two or more, as output lines, from the planted
// pairs: connected components, or the leader rule run directly.
std::vector<std::string> OracleClusters(const Planted& planted, bool leader) {
  const int n = static_cast<int>(planted.ids.size());
  std::vector<int> cluster(n);
  std::iota(cluster.begin(), cluster.end(), 0);
  std::vector<bool> is_leader(n, true);
  for (int doc = 0; doc < n; ++doc) {
    for (const auto& [a, b] : planted.pairs) {
      if (b != doc) continue;
      if (leader) {
        if (cluster[doc] == doc && is_leader[a]) cluster[doc] = a;
      } else {
        // Labels stay each set's smallest member.
        const int from = std::max(cluster[a], cluster[b]);
        const int to = std::min(cluster[a], cluster[b]);
        for (int& c : cluster) c = c == from ? to : c;
      }
    }
    is_leader[doc] = cluster[doc] == doc;
  }
  std::vector<std::string> lines;
  for (int first = 0; first < n; ++first) {
    std::vector<int> docs;
    for (int doc = 0; doc < n; ++doc) {
      if (cluster[doc] == first) docs.push_back(doc);
    }
    if (docs.size() < 2) continue;
    std::string line = "{\"cluster\":" + std::to_string(lines.size()) + ",\"ids\":[";
    for (size_t i = 0; i < docs.size(); ++i) {
      line += (i ? ",\"" : "\"") + planted.ids[docs[i]] + "\"";
    }
    lines.push_back(line + "]}");
  }
  return lines;
}

class ParallelStagesCliTest : public CliTestBase {
 protected:
  // The command's output at 1 thread, after checking 2, 3 and 8 threads
  // give the same bytes.
  std::string SameForEveryThreadCount(const std::string& args) {
    const CommandResult one = Neardup(args + " --threads 1");
    EXPECT_EQ(one.exit_code, 0) << args << ": " << one.err;
    for (int threads : {2, 3, 8}) {
      const CommandResult run = Neardup(args + " --threads " + std::to_string(threads));
      EXPECT_EQ(run.exit_code, 0) << args << ": " << run.err;
      EXPECT_EQ(run.out, one.out) << args << " with " << threads << " threads";
    }
    return one.out;
  }

  Planted planted_ = MakeCorpus();
  std::string corpus_ = Write("planted.jsonl", planted_.jsonl);
};

TEST_F(ParallelStagesCliTest, PairsAreTheOraclesForEveryThreadCount) {
  const std::vector<std::string> lines =
      Lines(SameForEveryThreadCount("pairs -q --threshold 0.75 " + corpus_));
  ASSERT_EQ(lines.size(), planted_.pairs.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto [a, b] = planted_.pairs[i];
    EXPECT_EQ(lines[i].rfind("{\"a\":\"" + planted_.ids[a] + "\",\"b\":\"" + planted_.ids[b] +
                                 "\",\"similarity\":0.8",
                             0),
              0u)
        << lines[i];
  }
}

TEST_F(ParallelStagesCliTest, ClustersFollowEachRuleForEveryThreadCount) {
  EXPECT_EQ(
      Lines(SameForEveryThreadCount("clusters -q --threshold 0.75 --rule components " + corpus_)),
      OracleClusters(planted_, /*leader=*/false));
  const std::vector<std::string> leader =
      Lines(SameForEveryThreadCount("clusters -q --threshold 0.75 --rule leader " + corpus_));
  EXPECT_EQ(leader, OracleClusters(planted_, /*leader=*/true));
  // The two rules differ on this corpus (chains longer than two).
  EXPECT_NE(leader, OracleClusters(planted_, /*leader=*/false));
}

TEST_F(ParallelStagesCliTest, DedupKeepsTheOraclesDocumentsForEveryThreadCount) {
  const std::string kept = SameForEveryThreadCount("dedup -q --threshold 0.75 " + corpus_);
  // The leader rule keeps every leader: the even places of each chain.
  std::string want;
  const std::vector<std::string> records = Lines(planted_.jsonl);
  for (size_t doc = 0; doc < records.size(); ++doc) {
    if (planted_.chain[doc] < 0 || planted_.position[doc] % 2 == 0) want += records[doc] + "\n";
  }
  EXPECT_EQ(kept, want);
  // From standard input (records kept in memory) the same bytes.
  EXPECT_EQ(
      SameForEveryThreadCount("dedup -q --threshold 0.75 --input-format jsonl - < " + corpus_),
      want);
  // SimHash candidates and verification as well: same bytes at any count.
  SameForEveryThreadCount("pairs -q --method simhash --max-distance 12 " + corpus_);
}

// `clusters` and `dedup` with --method simhash group the copies of one
// SimHash (session 19: FindNearDuplicateGroups, ClusterDocumentGroups): their
// output is the oracle's over every pair that `pairs --method simhash` lists
// (which still joins every copy), under both rules, at every thread count.
TEST_F(ParallelStagesCliTest, SimHashCopiesClusterAsEveryPair) {
  // The planted corpus with copies: after every third record, 1-6 copies of
  // it or of an earlier record (chain members too, so groups are near
  // groups), each with its own id.
  Planted copies;
  internal::SplitMix64 rng(19);
  const std::vector<std::string> records = Lines(planted_.jsonl);
  const auto add = [&](const std::string& record) {
    const std::string id = "d" + std::to_string(copies.ids.size());
    copies.jsonl += "{\"id\":\"" + id + "\"" + record.substr(record.find(",\"text\":")) + "\n";
    copies.ids.push_back(id);
  };
  for (size_t doc = 0; doc < records.size(); ++doc) {
    add(records[doc]);
    if (doc % 3 != 0) continue;
    for (uint64_t k = 1 + rng.Next() % 6; k > 0; --k) add(records[rng.Next() % (doc + 1)]);
  }
  const std::string file = Write("copies.jsonl", copies.jsonl);
  const std::string options = " -q --method simhash --max-distance 12 ";
  std::map<std::string, int> position;
  for (size_t i = 0; i < copies.ids.size(); ++i) position[copies.ids[i]] = static_cast<int>(i);
  const auto field = [](const std::string& line, const std::string& name) {
    const size_t start = line.find("\"" + name + "\":\"") + name.size() + 4;
    return line.substr(start, line.find('"', start) - start);
  };
  for (const std::string& line : Lines(SameForEveryThreadCount("pairs" + options + file))) {
    copies.pairs.emplace_back(position.at(field(line, "a")), position.at(field(line, "b")));
  }
  std::sort(copies.pairs.begin(), copies.pairs.end());
  ASSERT_GT(copies.pairs.size(), copies.ids.size());
  // The rules differ here (chains of groups).
  EXPECT_NE(OracleClusters(copies, /*leader=*/true), OracleClusters(copies, /*leader=*/false));
  for (const bool leader : {true, false}) {
    const std::string rule = leader ? "--rule leader " : "--rule components ";
    const std::vector<std::string> want = OracleClusters(copies, leader);
    EXPECT_EQ(Lines(SameForEveryThreadCount("clusters" + options + rule + file)), want) << rule;
    // dedup (--keep first): every cluster's first member stays.
    std::set<std::string> removed;
    for (const std::string& line : want) {
      size_t at = line.find("\"ids\":[\"") + 8;
      at = line.find('"', at) + 1;  // past the first member
      while ((at = line.find('"', at)) != std::string::npos) {
        const size_t end = line.find('"', at + 1);
        removed.insert(line.substr(at + 1, end - at - 1));
        at = end + 1;
      }
    }
    std::string kept;
    for (const std::string& record : Lines(copies.jsonl)) {
      if (!removed.count(field(record, "id"))) kept += record + "\n";
    }
    EXPECT_EQ(SameForEveryThreadCount("dedup" + options + rule + file), kept) << rule;
  }
}

// MinHash over a JSONL file computes the verification sketches only for the
// documents of candidate pairs, from their records (neardup/
// deferred_sketches.h), and so does `dedup` from stdin, from the records it
// keeps, and a directory of JSONL files; a gzip file takes the one-pass
// path, every sketch of every document. All give the same bytes, and the same --explain counts, for
// every command, verification and thread count.
TEST_F(ParallelStagesCliTest, DeferredSketchesEqualTheOnePassPath) {
  // Some records with escapes and CRLF, so that the second parse has work.
  std::string messy = planted_.jsonl;
  messy += "{\"id\":\"esc\",\"text\":\"caf\\u00e9 \\\"quoted\\\" line\\nbreak\"}\r\n";
  messy += "{\"id\":\"esc2\",\"text\":\"caf\\u00e9 \\\"quoted\\\" line\\nbreak\"}\r\n";
  const std::string file = Write("one/messy.jsonl", messy);
  const std::string directory = file.substr(0, file.rfind('/'));
  // A gzip copy (the ids are the records' own): the one-pass path.
  const std::string gzip = Write("two/messy.jsonl", messy) + ".gz";
  ASSERT_EQ(std::system(("gzip " + gzip.substr(0, gzip.size() - 3)).c_str()), 0);
  auto run = [&](const std::string& args) {
    const CommandResult result = Neardup(args);
    EXPECT_EQ(result.exit_code, 0) << args << ": " << result.err;
    return result;
  };
  for (const std::string command :
       {"pairs -q --threshold 0.5",
        "clusters -q --threshold 0.75 --rule components --verify sketch",
        "dedup -q --threshold 0.75"}) {
    const std::string one_pass = run(command + " --threads 2 " + gzip).out;
    EXPECT_NE(one_pass, "") << command;
    EXPECT_EQ(run(command + " --threads 3 " + file).out, one_pass) << command;
    EXPECT_EQ(run(command + " --threads 2 " + directory).out, one_pass) << command << " (dir)";
    if (command.starts_with("dedup")) {
      EXPECT_EQ(run(command + " --threads 1 " + file).out, one_pass) << command << " at 1 thread";
      EXPECT_EQ(run(command + " --threads 3 --input-format jsonl - < " + file).out, one_pass)
          << command << " from stdin";
    }
  }
  const std::string explain = "pairs -q --threshold 0.5 --explain ";
  EXPECT_EQ(Lines(run(explain + file).err), Lines(run(explain + gzip).err));
}

}  // namespace
}  // namespace neardup::testing
