// End-to-end tests of the `neardup` binary: real files in, JSON lines out,
// exit codes and messages for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "cli_test_util.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

using neardup::testing::CommandResult;
using CliTest = neardup::testing::CliTestBase;

TEST_F(CliTest, HelpOnEveryCommand) {
  for (const char* args : {"--help", "fingerprint --help", "recipe --help", "recipe show --help"}) {
    CommandResult run = Neardup(args);
    EXPECT_EQ(run.exit_code, 0) << args;
    EXPECT_THAT(run.out, HasSubstr("Usage")) << args;
  }
  EXPECT_THAT(Neardup("fingerprint --help").out, HasSubstr("--preset"));
}

TEST_F(CliTest, VersionNamesTheCpuPathInUse) {
  CommandResult run = Neardup("--version");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out,
              MatchesRegex("neardup [0-9]+\\.[0-9]+\\.[0-9]+\n"
                           "cpu path (portable|avx2|avx512) \\(of reference portable[a-z0-9 ]*\\); "
                           "features [a-z0-9 ]+\n"));
}

TEST_F(CliTest, FingerprintsTheExampleCorpusInInputOrder) {
  CommandResult run = Neardup("fingerprint --quiet --simhash --minhash " + Example());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_THAT(lines[0], MatchesRegex("\\{\"id\":\"harbor-wall-1\",\"recipe\":\"[0-9a-f]{16}\","
                                     "\"tokens\":[0-9]+,\"simhash\":\"[0-9a-f]{16}\","
                                     "\"minhash\":\\[\"[0-9a-f]{16}\".*\\]\\}"));
  EXPECT_THAT(lines[11], HasSubstr("\"id\":\"CAF\xc3\x89-REVIEW-SHOUTED\""));
  EXPECT_TRUE(run.err.empty()) << run.err;
}

// --profile: one line on stderr after the run (even with --quiet), the
// corpus commands' line with the fingerprint and close stages; the output is
// unchanged. This checks the line's format only: that the serial figure is
// filled is fingerprint_pipeline_test's (a 0.000 here passes).
TEST_F(CliTest, FingerprintProfilePrintsTheStagesAndKeepsTheOutput) {
  CommandResult plain = Neardup("fingerprint --quiet --minhash --threads 2 " + Example());
  CommandResult profiled =
      Neardup("fingerprint --quiet --minhash --profile --threads 2 " + Example());
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  EXPECT_EQ(profiled.out, plain.out);
  EXPECT_TRUE(plain.err.empty()) << plain.err;
  EXPECT_THAT(profiled.err,
              MatchesRegex("neardup: profile \\(2 threads; wall/cpu/main-thread cpu/serial cpu "
                           "s\\): fingerprint [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+, close "
                           "[0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+, total "
                           "[0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+; peak RSS [0-9.]+ MB, [0-9]+ "
                           "bytes/document\n"));
}

TEST_F(CliTest, OutputIsByteIdenticalWhateverTheThreadCount) {
  std::string corpus;
  for (int i = 0; i < 3000; ++i) {
    corpus += "{\"id\": " + std::to_string(i) + ", \"text\": \"record " + std::to_string(i) +
              " about subject " + std::to_string(i % 13) + " and more words\"}\n";
  }
  std::string path = Write("many.jsonl", corpus);
  CommandResult one = Neardup("fingerprint -q --simhash --minhash --chunks --threads 1 " + path);
  CommandResult two = Neardup("fingerprint -q --simhash --minhash --chunks --threads 2 " + path);
  CommandResult all = Neardup("fingerprint -q --simhash --minhash --chunks " + path);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(Lines(one.out).size(), 3000u);
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out, all.out);
  EXPECT_THAT(Lines(one.out)[42], HasSubstr("\"id\":\"42\""));
}

// --device auto gives the CPU's output byte for byte (on the GPU where one
// is present, else on the CPU); --device gpu without a usable GPU fails with
// a message naming why, never a crash; an unknown device is a usage error.
TEST_F(CliTest, DeviceFlagChoosesTheBackendWithIdenticalOutput) {
  const std::string args = " -q --simhash --minhash --chunks " + Example();
  CommandResult cpu = Neardup("fingerprint --device cpu" + args);
  CommandResult automatic = Neardup("fingerprint --device auto" + args);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_EQ(automatic.out, cpu.out);
  CommandResult gpu = Neardup("fingerprint --device gpu" + args);
  if (gpu.exit_code == 0) {
    EXPECT_EQ(gpu.out, cpu.out);
  } else {
    EXPECT_THAT(gpu.err, HasSubstr("CUDA"));
  }
  CommandResult pairs_cpu = Neardup("pairs --device cpu -q " + Example());
  CommandResult pairs_auto = Neardup("pairs --device auto -q " + Example());
  ASSERT_EQ(pairs_cpu.exit_code, 0) << pairs_cpu.err;
  EXPECT_EQ(pairs_auto.out, pairs_cpu.out);
  EXPECT_NE(Neardup("fingerprint --device tpu" + args).exit_code, 0);
}

TEST_F(CliTest, PaperPresetFromStdin) {
  std::string path = Write("paper.txt", "A school is a school if it has students and teachers");
  CommandResult run = Neardup("fingerprint -q --preset paper - < " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"id\":\"-\""));
  EXPECT_THAT(run.out, HasSubstr("\"simhash\":\"3aa423c558350ff4\""));
}

// Issue 18: ExLSH's hashes, hex and Base64, through the command line.
TEST_F(CliTest, ExLshPresetPrintsBase64) {
  std::string path = Write("lorem.jsonl",
                           "{\"id\": \"a\", \"text\": \"Lorem ipsum dolor sit amet\"}\n"
                           "{\"id\": \"b\", \"text\": \"username\"}\n");
  CommandResult run = Neardup("fingerprint -q --preset exlsh " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"id\":\"a\""));
  EXPECT_THAT(run.out, HasSubstr("\"tokens\":5,\"simhash\":\"b97d398ad29a8210348101c2c0308816\","
                                 "\"simhash_base64\":\"uX05itKaghA0gQHCwDCIFg==\""));
  CommandResult chars = Neardup("fingerprint -q --preset exlsh-chars " + path);
  ASSERT_EQ(chars.exit_code, 0) << chars.err;
  EXPECT_THAT(chars.out, HasSubstr("\"simhash_base64\":\"FPIBaaBQGlKKARlqA9lb1g==\""));
  // The digest route computes SimHash only, and says so.
  CommandResult minhash = Neardup("fingerprint -q --preset exlsh --minhash " + path);
  EXPECT_NE(minhash.exit_code, 0);
  EXPECT_THAT(minhash.err, HasSubstr("computes SimHash only"));
  // pairs over all 128 bits: "a" with itself repeated is distance 0.
  std::string dup = Write("dup.jsonl",
                          "{\"id\": \"x\", \"text\": \"the quick brown fox jumps\"}\n"
                          "{\"id\": \"y\", \"text\": \"The quick, brown fox jumps!\"}\n"
                          "{\"id\": \"z\", \"text\": \"something else entirely here\"}\n");
  CommandResult pairs =
      Neardup("pairs -q --method simhash --preset exlsh --max-distance 10 " + dup);
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  EXPECT_EQ(pairs.out, "{\"a\":\"x\",\"b\":\"y\",\"distance\":0,\"similarity\":1}\n");
}

TEST_F(CliTest, DirectoryIdsAreSortedRelativePaths) {
  Write("tree/b.txt", "second file text");
  Write("tree/a/z.txt", "nested file text");
  Write("tree/a/y.txt", "another nested file");
  CommandResult run = Neardup("fingerprint -q " + (dir_ / "tree").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("\"id\":\"a/y.txt\""));
  EXPECT_THAT(lines[1], HasSubstr("\"id\":\"a/z.txt\""));
  EXPECT_THAT(lines[2], HasSubstr("\"id\":\"b.txt\""));
}

TEST_F(CliTest, CompressedInputsMatchPlainOnes) {
  std::string plain = Write("docs.jsonl", Read(Example()));
  ASSERT_EQ(std::system(("gzip -k -c " + plain + " > " + plain + ".gz").c_str()), 0);
  ASSERT_EQ(std::system(("zstd -q -c " + plain + " > " + plain + ".zst").c_str()), 0);
  CommandResult expected = Neardup("fingerprint -q " + plain);
  ASSERT_EQ(expected.exit_code, 0);
  EXPECT_EQ(Neardup("fingerprint -q " + plain + ".gz").out, expected.out);
  EXPECT_EQ(Neardup("fingerprint -q " + plain + ".zst").out, expected.out);
}

TEST_F(CliTest, TruncatedGzipKeepsEarlierDocumentsAndFailsClearly) {
  std::string corpus;
  for (int i = 0; i < 20000; ++i) {
    corpus += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"text number " +
              std::to_string(i * 7919) + "\"}\n";
  }
  std::string plain = Write("big.jsonl", corpus);
  ASSERT_EQ(std::system(("gzip -c " + plain + " > " + plain + ".gz").c_str()), 0);
  std::string gz = Read(plain + ".gz");
  std::string truncated = Write("cut.jsonl.gz", gz.substr(0, gz.size() / 2));
  CommandResult run = Neardup("fingerprint -q " + truncated);
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_THAT(run.err, HasSubstr("cut.jsonl.gz"));
  EXPECT_THAT(run.err, HasSubstr("truncated"));
  std::vector<std::string> lines = Lines(run.out);
  EXPECT_GT(lines.size(), 1000u);
  EXPECT_LT(lines.size(), 20000u);
  EXPECT_THAT(lines[0], HasSubstr("\"id\":\"d0\""));
}

TEST_F(CliTest, InvalidJsonLineIsSkippedAndReported) {
  std::string path = Write("bad.jsonl",
                           "{\"id\": \"ok1\", \"text\": \"fine\"}\n"
                           "{\"id\": \"broken\", \"text\": \n"
                           "{\"id\": \"ok2\", \"text\": \"also fine\"}\n");
  CommandResult run = Neardup("fingerprint " + path);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(Lines(run.out).size(), 2u);
  EXPECT_THAT(run.err, HasSubstr("bad.jsonl:2"));
  EXPECT_THAT(run.err, HasSubstr("1 records skipped"));
  EXPECT_EQ(Neardup("fingerprint -q --strict " + path).exit_code, 5);
}

TEST_F(CliTest, BinaryAndEmptyFilesAreFingerprintedAndCounted) {
  Write("in/binary.bin", std::string("\x00\xff\xfe\x01garbage\x80\x81", 12));
  Write("in/empty.txt", "");
  CommandResult run = Neardup("fingerprint " + (dir_ / "in").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Lines(run.out).size(), 2u);
  EXPECT_THAT(run.err, HasSubstr("1 empty, 1 with invalid UTF-8"));
}

TEST_F(CliTest, HundredMegabyteSingleLine) {
  std::string text;
  text.reserve(100u << 20);
  uint64_t x = 1;
  while (text.size() < (100u << 20)) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    text += "w" + std::to_string((x >> 33) % 5000) + " ";
  }
  std::string path = Write("huge.jsonl", "{\"id\": \"huge\", \"text\": \"" + text + "\"}\n");
  text.clear();
  CommandResult run = Neardup("fingerprint -q --minhash " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("\"id\":\"huge\""));
  EXPECT_THAT(lines[0], MatchesRegex(".*\"tokens\":1[0-9]{7},.*"));
}

// `pairs` reserves each output chunk's text from its first line: a first
// line with a 2 MB id (ids are the user's) before ~20,000 short lines must
// not ask for 2 MB times the chunk (50 GB: out of memory, or an ASan
// abort); the reservation is capped.
TEST_F(CliTest, PairsWithOneLongIdBeforeManyShortLines) {
  const std::string long_id(2u << 20, 'x');
  const std::string a = "the quick brown fox jumps over the lazy dog near the river bank today";
  const std::string b = "pack my box with five dozen liquor jugs and then sail across the bay";
  std::string jsonl = "{\"id\": \"" + long_id + "\", \"text\": \"" + a + "\"}\n";
  jsonl += "{\"id\": \"second\", \"text\": \"" + a + "\"}\n";
  for (int i = 0; i < 200; ++i) {
    jsonl += "{\"id\": \"g" + std::to_string(i) + "\", \"text\": \"" + b + "\"}\n";
  }
  const std::string path = Write("long_id.jsonl", jsonl);
  CommandResult run = Neardup("pairs -q --threads 2 " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err.substr(0, 300);
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 1u + 200u * 199u / 2u);
  EXPECT_THAT(lines[0], HasSubstr(long_id));
  EXPECT_THAT(lines[0], HasSubstr("\"second\""));
  EXPECT_THAT(lines[1], HasSubstr("\"g0\""));
}

TEST_F(CliTest, ErrorsHaveClearMessagesAndExitCodes) {
  CommandResult missing = Neardup("fingerprint " + (dir_ / "nope.jsonl").string());
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("nope.jsonl"));

  CommandResult preset = Neardup("fingerprint --preset fastest " + Example());
  EXPECT_EQ(preset.exit_code, 2);
  EXPECT_THAT(preset.err, HasSubstr("unknown preset \"fastest\""));

  std::string recipe = Write("r.json", "{\"version\": 1, \"simhash\": {\"bits\": 96}}");
  CommandResult bad_recipe = Neardup("fingerprint --recipe " + recipe + " " + Example());
  EXPECT_EQ(bad_recipe.exit_code, 2);
  EXPECT_THAT(bad_recipe.err, HasSubstr("simhash.bits (96) must be 64 or 128"));

  EXPECT_EQ(Neardup("fingerprint").exit_code, 2);
  EXPECT_EQ(Neardup("no-such-command").exit_code, 2);
}

TEST_F(CliTest, RecipeShowRoundTripsThroughRecipeFlag) {
  CommandResult show = Neardup("recipe show --preset short");
  ASSERT_EQ(show.exit_code, 0);
  std::string recipe = Write("short.json", show.out);
  CommandResult by_preset = Neardup("fingerprint -q --preset short " + Example());
  CommandResult by_file = Neardup("fingerprint -q --recipe " + recipe + " " + Example());
  ASSERT_EQ(by_file.exit_code, 0) << by_file.err;
  EXPECT_EQ(by_preset.out, by_file.out);
}

TEST_F(CliTest, VersionOneDefaultStaysSelectable) {
  // Recipe version 2 (issue 20): `default-v1` is version 1's `default`, by
  // name and by its JSON, with the old id; the list says which is which.
  CommandResult list = Neardup("recipe list");
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("default-v1 1b6dd7a19890a092  version=1"));
  EXPECT_THAT(list.out, HasSubstr("segment_scripts=characters"));
  CommandResult show = Neardup("recipe show --preset default-v1");
  ASSERT_EQ(show.exit_code, 0);
  EXPECT_THAT(show.out, HasSubstr("\"version\":1,"));
  std::string recipe = Write("v1.json", show.out);
  CommandResult by_file = Neardup("fingerprint -q --recipe " + recipe + " " + Example());
  ASSERT_EQ(by_file.exit_code, 0) << by_file.err;
  EXPECT_THAT(by_file.out, HasSubstr("\"recipe\":\"1b6dd7a19890a092\""));
  EXPECT_EQ(by_file.out, Neardup("fingerprint -q --preset default-v1 " + Example()).out);
}

TEST_F(CliTest, StopwordFileChangesTheRecipe) {
  std::string stopwords = Write("stop.txt", "# my list\nThe\nof\n\n");
  CommandResult with = Neardup("fingerprint -q --stopwords " + stopwords + " " + Example());
  CommandResult without = Neardup("fingerprint -q " + Example());
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.out, without.out);
  CommandResult show = Neardup("recipe show --stopwords " + stopwords);
  EXPECT_THAT(show.out, HasSubstr("\"stopwords\":[\"of\",\"the\"]"));
}

TEST_F(CliTest, PairsFindThePlantedNearDuplicates) {
  CommandResult exact =
      Neardup("pairs -q --threshold 0.6 --verify exact --fn-weight 0.9 " + Example());
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_THAT(
      exact.out,
      HasSubstr("{\"a\":\"harbor-wall-1\",\"b\":\"harbor-wall-3\",\"similarity\":0.820896}"));
  EXPECT_THAT(exact.out, HasSubstr("{\"a\":\"bread-recipe\",\"b\":\"bread-recipe-copy\""));
  EXPECT_THAT(exact.out,
              HasSubstr("\"a\":\"caf\xc3\xa9-review\",\"b\":\"CAF\xc3\x89-REVIEW-SHOUTED\","
                        "\"similarity\":1}"));
  EXPECT_THAT(exact.out, Not(HasSubstr("weather-report")));
  CommandResult simhash =
      Neardup("pairs -q --method simhash --max-distance 6 --blocks 8 " + Example());
  ASSERT_EQ(simhash.exit_code, 0) << simhash.err;
  EXPECT_THAT(simhash.out, HasSubstr("{\"a\":\"bread-recipe\",\"b\":\"bread-recipe-copy\","
                                     "\"distance\":5,\"similarity\":0.921875}"));
}

TEST_F(CliTest, ClusterRulesDiffer) {
  // 100 words; b changes 2 of a's words, c changes 2 more of b's: a~b and
  // b~c (Jaccard of 5-shingles about 0.8) but not a~c (about 0.65).
  std::vector<std::string> words;
  for (int i = 0; i < 100; ++i) words.push_back("word" + std::to_string(i));
  auto text = [&](std::vector<int> changed) {
    std::vector<std::string> copy = words;
    for (int i : changed) copy[i] = "changed" + std::to_string(i);
    std::string out;
    for (const std::string& w : copy) out += w + " ";
    return out;
  };
  std::string path =
      Write("chain.jsonl", "{\"id\":\"a\",\"text\":\"" + text({}) +
                               "\"}\n{\"id\":\"b\",\"text\":\"" + text({20, 70}) +
                               "\"}\n{\"id\":\"c\",\"text\":\"" + text({20, 70, 45, 95}) + "\"}\n");
  const std::string flags = "-q --threshold 0.75 --verify exact --fn-weight 0.95 --fp-weight 0.05 ";
  CommandResult pairs = Neardup("pairs " + flags + path);
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  std::vector<std::string> lines = Lines(pairs.out);
  ASSERT_EQ(lines.size(), 2u) << pairs.out;
  EXPECT_THAT(lines[0], HasSubstr("\"a\":\"a\",\"b\":\"b\""));
  EXPECT_THAT(lines[1], HasSubstr("\"a\":\"b\",\"b\":\"c\""));
  EXPECT_EQ(Neardup("clusters --rule components " + flags + path).out,
            "{\"cluster\":0,\"ids\":[\"a\",\"b\",\"c\"]}\n");
  EXPECT_EQ(Neardup("clusters " + flags + path).out, "{\"cluster\":0,\"ids\":[\"a\",\"b\"]}\n");
}

TEST_F(CliTest, DedupKeepsJsonlRecordsVerbatim) {
  std::string output = (dir_ / "kept.jsonl").string();
  CommandResult run = Neardup("dedup -q --threshold 0.6 --verify exact --fn-weight 0.9 -o " +
                              output + " " + Example());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> kept = Lines(Read(output));
  std::vector<std::string> input = Lines(Read(Example()));
  ASSERT_EQ(kept.size(), 7u);    // 12 less harbor-wall-2/3, bread copy, lumen mirror, SHOUTED
  EXPECT_EQ(kept[0], input[0]);  // harbor-wall-1, verbatim
  EXPECT_EQ(kept[1], input[3]);  // bread-recipe
  for (const std::string& line : kept) EXPECT_THAT(line, Not(HasSubstr("SHOUTED")));
  // The same from stdin (kept in memory) and with --keep longest.
  CommandResult piped = Neardup(
      "dedup -q --threshold 0.6 --verify exact --fn-weight 0.9 "
      "--input-format jsonl - < " +
      Example());
  EXPECT_EQ(piped.out, Read(output));
  CommandResult longest = Neardup(
      "dedup -q --threshold 0.6 --verify exact --fn-weight 0.9 "
      "--keep longest " +
      Example());
  EXPECT_THAT(longest.out, HasSubstr("harbor-wall-2"));
  EXPECT_THAT(longest.out, Not(HasSubstr("harbor-wall-1\"")));
}

TEST_F(CliTest, DedupOfFilesListsKeptAndRemovedIds) {
  std::string text(Read(Example()));
  Write("files/one.txt", "the same short note about the meeting on friday at noon in room four");
  Write("files/two.txt", "the same short note about the meeting on friday at noon in room four");
  Write("files/three.txt", "an unrelated text about gardening and tomatoes in late summer");
  CommandResult run = Neardup("dedup -q " + (dir_ / "files").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "{\"id\":\"one.txt\",\"kept\":true}\n"
            "{\"id\":\"three.txt\",\"kept\":true}\n"
            "{\"id\":\"two.txt\",\"kept\":false,\"duplicate_of\":\"one.txt\"}\n");
}

// --format binary: the records hold what the JSON lines hold (checked
// against them field by field), the ids come beside them in the same order,
// and a selection without fixed width is refused.
TEST_F(CliTest, BinaryFormatHoldsTheJsonFingerprints) {
  const std::string json_args = "fingerprint -q --simhash --minhash --threads 2 " + Example();
  CommandResult json = Neardup(json_args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::string records = (dir_ / "fp.bin").string();
  const std::string ids = (dir_ / "ids.jsonl").string();
  CommandResult binary =
      Neardup(json_args + " --format binary -o " + records + " --ids-output " + ids);
  ASSERT_EQ(binary.exit_code, 0) << binary.err;
  const std::vector<std::string> lines = Lines(json.out);
  const std::string bytes = Read(records);
  const size_t record_bytes = 8 * (1 + 1 + 1 + 128);  // tokens, simhash, count, k values
  ASSERT_EQ(bytes.size(), lines.size() * record_bytes);
  auto word = [&](size_t record, size_t index) {
    uint64_t value;
    std::memcpy(&value, bytes.data() + record * record_bytes + 8 * index, 8);  // x86: LE
    return value;
  };
  auto hex = [](uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return std::string(text);
  };
  const std::vector<std::string> id_lines = Lines(Read(ids));
  ASSERT_EQ(id_lines.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], HasSubstr("{\"id\":" + id_lines[i] + ","));
    EXPECT_THAT(lines[i], HasSubstr("\"tokens\":" + std::to_string(word(i, 0)) + ","));
    EXPECT_THAT(lines[i], HasSubstr("\"simhash\":\"" + hex(word(i, 1)) + "\""));
    std::string minhash = "\"minhash\":[";
    for (size_t j = 0; j < word(i, 2); ++j) {
      minhash += (j > 0 ? ",\"" : "\"") + hex(word(i, 3 + j)) + "\"";
    }
    EXPECT_THAT(lines[i], HasSubstr(minhash + "]"));
  }

  CommandResult chunks = Neardup("fingerprint -q --chunks --format binary " + Example());
  EXPECT_NE(chunks.exit_code, 0);
  EXPECT_THAT(chunks.err, HasSubstr("chunk"));
}

}  // namespace

namespace {

// A field of one of our JSON lines (ids of the example corpus hold no
// quotes or commas): a string's characters or a number's text; "" when
// absent.
std::string JsonField(const std::string& line, const std::string& key, size_t from = 0) {
  size_t at = line.find("\"" + key + "\":", from);
  if (at == std::string::npos) return "";
  at += key.size() + 3;
  if (line[at] == '"') return line.substr(at + 1, line.find('"', at + 1) - at - 1);
  return line.substr(at, line.find_first_of(",}]", at) - at);
}

std::string Row(const std::vector<std::string>& fields, const std::string& separator) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) row += (i > 0 ? separator : "") + fields[i];
  return row + "\n";
}

// --format csv|tsv of pairs, clusters, similar and query: the records of the
// JSON lines, one row each (a cluster: a row per member; a query: a row per
// match), after a header line.
TEST_F(CliTest, TablesHoldTheRecordsOfTheJsonLines) {
  const std::string archive = (dir_ / "archive").string();
  ASSERT_EQ(Neardup("index create " + archive).exit_code, 0);
  ASSERT_EQ(Neardup("index add -q " + archive + " " + Example()).exit_code, 0);
  for (const std::string format : {"csv", "tsv"}) {
    SCOPED_TRACE(format);
    const std::string sep = format == "csv" ? "," : "\t";
    for (const std::string method : {"minhash", "simhash"}) {
      const std::string args = "pairs -q --method " + method +
                               (method == "minhash" ? " --threshold 0.5 " : " --max-distance 12 ") +
                               Example();
      CommandResult json = Neardup(args), table = Neardup(args + " --format " + format);
      ASSERT_EQ(table.exit_code, 0) << table.err;
      std::string expected = Row({"a", "b", "similarity", "distance"}, sep);
      for (const std::string& line : Lines(json.out)) {
        expected += Row({JsonField(line, "a"), JsonField(line, "b"), JsonField(line, "similarity"),
                         JsonField(line, "distance")},
                        sep);
      }
      EXPECT_GT(Lines(expected).size(), 2u);
      EXPECT_EQ(table.out, expected) << method;
    }

    CommandResult clusters = Neardup("clusters -q --threshold 0.5 " + Example());
    CommandResult cluster_table =
        Neardup("clusters -q --threshold 0.5 --format " + format + " " + Example());
    std::string expected = Row({"cluster", "id"}, sep);
    for (const std::string& line : Lines(clusters.out)) {
      const std::string ids = line.substr(line.find('[') + 1, line.find(']') - line.find('[') - 1);
      for (size_t at = 0; at < ids.size(); at = ids.find(',', at) + 1) {
        const size_t end = ids.find('"', at + 1);
        expected += Row({JsonField(line, "cluster"), ids.substr(at + 1, end - at - 1)}, sep);
        if (ids.find(',', at) == std::string::npos) break;
      }
    }
    EXPECT_GT(Lines(expected).size(), 3u);
    EXPECT_EQ(cluster_table.out, expected);

    CommandResult similar = Neardup("similar -q " + archive);
    CommandResult similar_table = Neardup("similar -q --format " + format + " " + archive);
    expected = Row({"a", "b", "a_in_b", "b_in_a"}, sep);
    for (const std::string& line : Lines(similar.out)) {
      expected += Row({JsonField(line, "a"), JsonField(line, "b"), JsonField(line, "a_in_b"),
                       JsonField(line, "b_in_a")},
                      sep);
    }
    EXPECT_EQ(similar_table.out, expected);

    CommandResult query = Neardup("query -q --passages 1 " + archive + " " + Example());
    CommandResult query_table =
        Neardup("query -q --passages 1 --format " + format + " " + archive + " " + Example());
    ASSERT_EQ(query_table.exit_code, 0) << query_table.err;
    expected = Row({"query", "chunks", "b", "a_in_b", "b_in_a", "passages"}, sep);
    for (const std::string& line : Lines(query.out)) {
      const std::string id = JsonField(line, "query"), chunks = JsonField(line, "chunks");
      size_t at = line.find("{\"b\":");
      if (at == std::string::npos) expected += Row({id, chunks, "", "", "", ""}, sep);
      for (bool first = true; at != std::string::npos; first = false) {
        const size_t next = line.find("{\"b\":", at + 1);
        const std::string match = line.substr(at, next == std::string::npos ? next : next - at);
        std::string passages;
        for (size_t p = match.find("{\"query\":["); first && p != std::string::npos;
             p = match.find("{\"query\":[", p + 1)) {
          unsigned qb, qe, mb, me;
          ASSERT_EQ(std::sscanf(match.c_str() + p, "{\"query\":[%u,%u],\"match\":[%u,%u]}", &qb,
                                &qe, &mb, &me),
                    4);
          passages += (passages.empty() ? "" : " ") + std::to_string(qb) + "-" +
                      std::to_string(qe) + ":" + std::to_string(mb) + "-" + std::to_string(me);
        }
        expected += Row({id, chunks, JsonField(match, "b"), JsonField(match, "a_in_b"),
                         JsonField(match, "b_in_a"), passages},
                        sep);
        at = next;
      }
    }
    EXPECT_THAT(expected, HasSubstr(":"));  // some passages were compared
    EXPECT_EQ(query_table.out, expected);
  }
  // Dedup writes the corpus: it has no --format.
  EXPECT_EQ(Neardup("dedup -q --format csv " + Example()).exit_code, 2);
}

}  // namespace
