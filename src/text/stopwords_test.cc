#include "text/stopwords.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "hash/feature_hash.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ContainsInText must answer Contains for every token wherever it lies in its
// text: the token is placed before 0..20 bytes of random filler (so the probe
// table path, which reads 16 bytes, and the Contains fallback near the end
// both run, and ASan sees every load).
void ExpectContainsInTextMatches(const StopwordSet& set, std::string_view token, SplitMix64* rng) {
  for (size_t after = 0; after <= 20; ++after) {
    std::string text(token);
    for (size_t i = 0; i < after; ++i) text.push_back(static_cast<char>(rng->Next()));
    // An exact-size copy so that reading past text_end would be a heap overflow.
    std::vector<char> buffer(text.begin(), text.end());
    const std::string_view in_text(buffer.data(), token.size());
    ASSERT_EQ(set.ContainsInText(in_text, buffer.data() + buffer.size()), set.Contains(token))
        << "token of " << token.size() << " bytes, " << after << " bytes after it";
  }
}

// Every word, and near misses: a byte less at either end, a byte more (letters,
// NUL, 0xFF), one byte changed; then random tokens and NUL-byte tokens.
void ExpectContainsInTextMatchesAll(const StopwordSet& set, uint64_t seed) {
  SplitMix64 rng(seed);
  for (const std::string& w : set.words()) {
    ExpectContainsInTextMatches(set, w, &rng);
    ExpectContainsInTextMatches(set, std::string_view(w).substr(1), &rng);
    ExpectContainsInTextMatches(set, std::string_view(w).substr(0, w.size() - 1), &rng);
    for (char extra : {'s', 'a', '\0', '\xFF'}) {
      ExpectContainsInTextMatches(set, w + extra, &rng);
      ExpectContainsInTextMatches(set, extra + w, &rng);
    }
    std::string changed = w;
    changed[rng.Next() % changed.size()] ^= static_cast<char>(1 + rng.Next() % 255);
    ExpectContainsInTextMatches(set, changed, &rng);
  }
  for (const char* token : {"", "t", "th", "the", "them", "themselves", "yourselves"}) {
    ExpectContainsInTextMatches(set, token, &rng);
  }
  for (std::string_view token :
       {std::string_view("\0", 1), std::string_view("a\0", 2), std::string_view("the\0", 4),
        std::string_view("\0the", 4), std::string_view("\0\0\0\0\0\0\0\0\0", 9)}) {
    ExpectContainsInTextMatches(set, token, &rng);
  }
  for (int i = 0; i < 2000; ++i) {
    std::string token(rng.Next() % 20, '\0');
    for (char& c : token) c = static_cast<char>(rng.Next() % 4 == 0 ? 0 : 'a' + rng.Next() % 26);
    ExpectContainsInTextMatches(set, token, &rng);
  }
}

NormalizationOptions RawOptions() {
  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  return raw;
}

TEST(StopwordSetTest, ContainsInTextMatchesContainsForEnglish) {
  const StopwordSet english = StopwordSet::English();
  ASSERT_NE(english.probe_table(), nullptr);
  ExpectContainsInTextMatchesAll(english, 1);
}

TEST(StopwordSetTest, ContainsInTextMatchesContainsForCustomSets) {
  SplitMix64 rng(7);
  for (int round = 0; round < 8; ++round) {
    // Words of 1..40 bytes (those over 15 are not in the probe table), with
    // NUL bytes and bytes >= 0x80.
    std::vector<std::string> words;
    const size_t count = 1 + rng.Next() % 200;
    for (size_t i = 0; i < count; ++i) {
      std::string w(1 + rng.Next() % 40, '\0');
      for (char& c : w) {
        const uint64_t r = rng.Next();
        c = static_cast<char>(r % 5 == 0 ? 0 : r % 5 == 1 ? 0x80 | (r >> 8) : 'a' + (r >> 8) % 26);
      }
      words.push_back(std::move(w));
    }
    words.push_back(std::string("n\0l", 3));
    const StopwordSet set = StopwordSet::FromWords(words, RawOptions());
    ASSERT_NE(set.probe_table(), nullptr);
    ExpectContainsInTextMatchesAll(set, rng.Next());
  }
}

TEST(StopwordSetTest, ContainsInTextWithoutProbeTable) {
  std::vector<std::string> words;
  for (size_t i = 0; i <= StopwordSet::kMaxProbeWords; ++i)
    words.push_back("w" + std::to_string(i));
  const StopwordSet many = StopwordSet::FromWords(words, RawOptions());
  ASSERT_EQ(many.probe_table(), nullptr);
  ExpectContainsInTextMatchesAll(many, 3);
  const StopwordSet long_words =
      StopwordSet::FromWords({std::string(16, 'z'), std::string(30, 'y')}, RawOptions());
  ASSERT_EQ(long_words.probe_table(), nullptr);
  ExpectContainsInTextMatchesAll(long_words, 4);
  const StopwordSet empty;
  ExpectContainsInTextMatchesAll(empty, 5);
}

TEST(StopwordSetTest, EnglishListShape) {
  const StopwordSet english = StopwordSet::English();
  for (const char* word : {"a", "is", "if", "it", "has", "and", "the", "of", "to", "with"}) {
    EXPECT_TRUE(english.Contains(word)) << word;
  }
  // The SimHash FPGA paper's content words must survive.
  for (const char* word : {"school", "students", "teachers", "", "The", "A", "an "}) {
    EXPECT_FALSE(english.Contains(word)) << word;
  }
  EXPECT_GE(english.words().size(), 150u);
  EXPECT_LE(english.words().size(), 180u);
  EXPECT_TRUE(std::is_sorted(english.words().begin(), english.words().end()));
  EXPECT_EQ(std::adjacent_find(english.words().begin(), english.words().end()),
            english.words().end());
  for (const std::string& word : english.words()) {
    EXPECT_FALSE(word.empty());
    EXPECT_TRUE(std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
        << word;
  }
}

// Frozen with kRecipeFormatVersion: a change to the list must be deliberate.
TEST(StopwordSetTest, EnglishListIsFrozen) {
  const std::vector<std::string> words = StopwordSet::English().words();
  ASSERT_EQ(words.size(), 164u);
  EXPECT_EQ(words.front(), "a");
  EXPECT_EQ(words.back(), "yourselves");
  std::string joined;
  for (const std::string& w : words) joined += w + "\n";
  EXPECT_EQ(joined.size(), 855u);
  EXPECT_EQ(Xxh3Hash(joined, 0), 0x3e7c7d6793767136ULL) << std::hex << Xxh3Hash(joined, 0);
}

TEST(StopwordSetTest, FromWordsNormalizesSortsAndDedups) {
  NormalizationOptions options;  // nfkc + case_fold
  StopwordSet set = StopwordSet::FromWords({"The",
                                            "\xC3\x89"
                                            "COLE",
                                            "", "the",
                                            "E\xCC\x81"
                                            "COLE",
                                            "\xEF\xAC\x81n"},
                                           options);
  EXPECT_THAT(set.words(), ElementsAre("fin", "the",
                                       "\xC3\xA9"
                                       "cole"));  // byte order
  EXPECT_TRUE(set.Contains("the"));
  EXPECT_TRUE(
      set.Contains("\xC3\xA9"
                   "cole"));
  EXPECT_FALSE(set.Contains("The"));  // Contains takes normalized tokens

  options.remove_punctuation = true;
  EXPECT_THAT(StopwordSet::FromWords({"don't", "!!!"}, options).words(), ElementsAre("dont"));

  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  EXPECT_THAT(StopwordSet::FromWords({"The", "the"}, raw).words(), ElementsAre("The", "the"));
}

TEST(StopwordSetTest, EmptySetContainsNothing) {
  StopwordSet empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(empty.Contains(""));
  EXPECT_FALSE(empty.Contains("a"));
  EXPECT_TRUE(StopwordSet::FromWords({"", ""}, NormalizationOptions()).empty());
}

TEST(StopwordSetTest, ContainsMatchesSetOracle) {
  SplitMix64 rng(3);
  std::vector<std::string> words;
  for (int i = 0; i < 2000; ++i) {
    std::string w(1 + rng.Next() % 6, 'a');
    for (char& c : w) c = static_cast<char>('a' + rng.Next() % 5);
    words.push_back(w);
  }
  std::set<std::string> oracle(words.begin(), words.end());
  StopwordSet set = StopwordSet::FromWords(words, NormalizationOptions());
  EXPECT_EQ(set.words(), std::vector<std::string>(oracle.begin(), oracle.end()));
  for (int i = 0; i < 20000; ++i) {
    std::string probe(rng.Next() % 8, 'a');
    for (char& c : probe) c = static_cast<char>('a' + rng.Next() % 5);
    ASSERT_EQ(set.Contains(probe), oracle.count(probe) == 1) << probe;
  }
}

class StopwordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("stopwords_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(StopwordFileTest, ParsesWordsCommentsAndBlankLines) {
  std::string path = Write("list.txt",
                           "# English-ish\r\n"
                           "The\r\n"
                           "\n"
                           "   of  \n"
                           "  # indented comment\n"
                           "\t\n"
                           "\xC3\x89"
                           "cole\n"
                           "and");  // no final newline
  Result<StopwordSet> set = StopwordSet::FromFile(path, NormalizationOptions());
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(set->words(), ElementsAre("and", "of", "the",
                                        "\xC3\xA9"
                                        "cole"));
}

TEST_F(StopwordFileTest, EmptyFileGivesEmptySet) {
  Result<StopwordSet> set = StopwordSet::FromFile(Write("empty.txt", ""), NormalizationOptions());
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(set->empty());
}

TEST_F(StopwordFileTest, MissingFileIsNotFound) {
  std::string path = (dir_ / "missing.txt").string();
  Result<StopwordSet> set = StopwordSet::FromFile(path, NormalizationOptions());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(set.status().message(), HasSubstr(path));
}

TEST_F(StopwordFileTest, DirectoryIsIoError) {
  Result<StopwordSet> set = StopwordSet::FromFile(dir_.string(), NormalizationOptions());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kIoError);
  EXPECT_THAT(set.status().message(), HasSubstr(dir_.string()));
}

}  // namespace
}  // namespace neardup::internal
