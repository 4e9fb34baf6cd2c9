// The digest route against ExLSH (the Elixir library): its documented known
// answers bit for bit, its own test properties, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <string>
#include <vector>

#include "hash/feature_hash.h"
#include "neardup/fingerprinter.h"
#include "sketch/digest_simhash.h"
#include "util/base64.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;

SketchSelection SimHashOnly() {
  SketchSelection selection;
  selection.simhash = true;
  return selection;
}

std::unique_ptr<Fingerprinter> MakeDigestFingerprinter(const Recipe& recipe) {
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      CreateCpuFingerprinter(recipe, SimHashOnly());
  NEARDUP_CHECK(fingerprinter.ok()) << fingerprinter.status();
  return std::move(fingerprinter).value();
}

Fingerprint Compute(const Recipe& recipe, std::string_view text) {
  Fingerprint out;
  Status status = MakeDigestFingerprinter(recipe)->Compute(text, &out);
  NEARDUP_CHECK(status.ok()) << status;
  return out;
}

std::string Base64(const WideSimHash& simhash) {
  std::string out;
  internal::AppendBase64(&out, internal::WideSimHashBytes(simhash));
  return out;
}

// ExLSH.lsh(text, width, hasher, normalize, tokenizer) as a recipe.
Recipe ExLsh(TokenizerKind tokenizer, int width, FeatureHashKind hash) {
  Recipe recipe = *PresetRecipe("exlsh");
  recipe.tokenizer = tokenizer;
  recipe.simhash.shingle_width = width;
  recipe.hash = hash;
  recipe.simhash.bits = DigestBits(hash);
  return recipe;
}

std::string ExLshHash(std::string_view text, TokenizerKind tokenizer, int width,
                      FeatureHashKind hash) {
  return Base64(Compute(ExLsh(tokenizer, width, hash), text).simhash_wide);
}

constexpr TokenizerKind kWords = TokenizerKind::kWhitespace;
constexpr TokenizerKind kGraphemes = TokenizerKind::kGrapheme;

// The six known answers of ExLSH's documentation (issue 18), every one.
TEST(DigestFingerprinterTest, ExLshKnownAnswers) {
  EXPECT_EQ(ExLshHash("Lorem ipsum dolor sit amet", kWords, 3, FeatureHashKind::kMd5),
            "uX05itKaghA0gQHCwDCIFg==");
  EXPECT_EQ(ExLshHash("Lorem ipsum dolor sit amet", kWords, 2, FeatureHashKind::kSha1),
            "VhW06EEJyWQA1gKIAAlQgI4NHUE=");
  EXPECT_EQ(ExLshHash("lorem ipsum dolor sit", kWords, 4, FeatureHashKind::kMd5),
            "X2Vs9ee9Uk38p6pkUIhlZQ==");
  EXPECT_EQ(ExLshHash("lorem ipsum dolor sit", kWords, 1, FeatureHashKind::kSha256),
            "BABBQURRDEiogqAAISKIKAWAQEQZAAgrUtTgXD5FDaA=");
  EXPECT_EQ(ExLshHash("lorem ipsum dolor sit", kWords, 3, FeatureHashKind::kMd5),
            "OEAhAhKSgBAwgQEAgCCAEg==");
  EXPECT_EQ(ExLshHash("username", kGraphemes, 3, FeatureHashKind::kMd5),
            "FPIBaaBQGlKKARlqA9lb1g==");
}

TEST(DigestFingerprinterTest, PresetsAreTheKnownAnswersDefaults) {
  EXPECT_EQ(Base64(Compute(*PresetRecipe("exlsh"), "Lorem ipsum dolor sit amet").simhash_wide),
            "uX05itKaghA0gQHCwDCIFg==");
  EXPECT_EQ(Base64(Compute(*PresetRecipe("exlsh-chars"), "username").simhash_wide),
            "FPIBaaBQGlKKARlqA9lb1g==");
}

TEST(DigestFingerprinterTest, FingerprintFieldsAgree) {
  Fingerprint fp = Compute(*PresetRecipe("exlsh"), "Lorem ipsum dolor sit amet");
  EXPECT_EQ(fp.simhash_wide.bits, 128);
  EXPECT_EQ(fp.num_shingles, 3u);
  EXPECT_EQ(fp.num_tokens, 5u);
  EXPECT_EQ(fp.simhash, fp.simhash_wide.words[0]);
  EXPECT_EQ(fp.simhash128.high, fp.simhash_wide.words[0]);
  EXPECT_EQ(fp.simhash128.low, fp.simhash_wide.words[1]);
  EXPECT_EQ(fp.simhash_wide.words[2], 0u);
  // Punctuation and case do not matter to the ASCII-word normalizer.
  EXPECT_EQ(Compute(*PresetRecipe("exlsh"), "  LOREM, ipsum -- dolor; sit amet!").simhash_wide,
            fp.simhash_wide);
}

// ExLSH's test suite: "Bag of words is independent of word order".
TEST(DigestFingerprinterTest, BagOfWordsIgnoresWordOrder) {
  for (FeatureHashKind hash :
       {FeatureHashKind::kMd5, FeatureHashKind::kSha1, FeatureHashKind::kSha256}) {
    const Recipe recipe = ExLsh(kWords, 1, hash);
    EXPECT_EQ(Compute(recipe, "foo bar baz").simhash_wide,
              Compute(recipe, "foo baz bar").simhash_wide);
    EXPECT_NE(Compute(recipe, "foo bar baz").simhash_wide,
              Compute(recipe, "foo bar qux").simhash_wide);
  }
  // Wider shingles see the order.
  const Recipe trigrams = ExLsh(kWords, 3, FeatureHashKind::kMd5);
  EXPECT_NE(Compute(trigrams, "foo bar baz").simhash_wide,
            Compute(trigrams, "foo baz bar").simhash_wide);
}

std::string Repeat(std::string_view phrase, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) {
    if (i > 0) out += " ";
    out += phrase;
  }
  return out;
}

// ExLSH's test suite: "Repeating the phrase doesn't affect the hash".
TEST(DigestFingerprinterTest, RepeatingAPhraseKeepsTheHash) {
  const Recipe recipe = *PresetRecipe("exlsh");
  const Fingerprint hundred = Compute(recipe, Repeat("foo bar baz", 100));
  const Fingerprint two_hundred = Compute(recipe, Repeat("foo bar baz", 200));
  EXPECT_EQ(hundred.simhash_wide, two_hundred.simhash_wide);
  EXPECT_EQ(hundred.num_shingles, 298u);
  EXPECT_EQ(two_hundred.num_shingles, 598u);
}

TEST(DigestFingerprinterTest, FewerTokensThanTheWidthGiveNoShingle) {
  const Recipe recipe = *PresetRecipe("exlsh");
  for (const std::string_view text : {"", "   ", "one", "one two", "!!! ???"}) {
    const Fingerprint fp = Compute(recipe, text);
    EXPECT_EQ(fp.num_shingles, 0u) << text;
    // The strict tie rule: all sums are 0, so every bit is 0 (ExLSH's
    // <<0::128>>).
    EXPECT_EQ(Base64(fp.simhash_wide), "AAAAAAAAAAAAAAAAAAAAAA==") << text;
  }
  EXPECT_EQ(Compute(recipe, "one two").num_tokens, 2u);
  // The paper's rule gives all ones instead.
  Recipe ones = recipe;
  ones.simhash.tie = SimHashTieRule::kOne;
  EXPECT_EQ(Base64(Compute(ones, "").simhash_wide), "/////////////////////w==");
  // Graphemes: "ab" has two (fewer than 3).
  EXPECT_EQ(Compute(*PresetRecipe("exlsh-chars"), "ab").num_shingles, 0u);
  EXPECT_EQ(Compute(*PresetRecipe("exlsh-chars"), "ab!").num_shingles, 1u);
}

TEST(DigestFingerprinterTest, InvalidUtf8IsRepairedAndCountedNotFatal) {
  const Recipe recipe = *PresetRecipe("exlsh");
  const Fingerprint bad = Compute(recipe, "lorem \xff ipsum\xc3 dolor\xed\xa0\x80 sit");
  EXPECT_EQ(bad.invalid_utf8_sequences, 5u);
  // U+FFFD is not an ASCII word character, so it is a separator like any.
  EXPECT_EQ(bad.simhash_wide, Compute(recipe, "lorem ipsum dolor sit").simhash_wide);
}

TEST(DigestFingerprinterTest, GraphemeShinglesKeepSpaces) {
  // Graphemes of "a b" are a, " ", b: one 3-shingle; "a b!" normalizes to
  // "a b " (the trailing space stays), two.
  const Recipe recipe = *PresetRecipe("exlsh-chars");
  EXPECT_EQ(Compute(recipe, "a b").num_shingles, 1u);
  EXPECT_EQ(Compute(recipe, "a b!").num_shingles, 2u);
  EXPECT_EQ(Compute(recipe, "Ab").simhash_wide, Compute(recipe, "ab").simhash_wide);
}

// A shingle's bytes are its tokens with no separator (ExLSH hashes the token
// list as an iolist): "ab c" and "a bc" both have the one 2-shingle "abc",
// which is also the one 1-shingle of "abc".
TEST(DigestFingerprinterTest, ShingleBytesHaveNoSeparator) {
  const Recipe pairs = ExLsh(kWords, 2, FeatureHashKind::kMd5);
  const Recipe unigrams = ExLsh(kWords, 1, FeatureHashKind::kMd5);
  EXPECT_EQ(Compute(pairs, "ab c").simhash_wide, Compute(pairs, "a bc").simhash_wide);
  EXPECT_EQ(Compute(pairs, "ab c").simhash_wide, Compute(unigrams, "abc").simhash_wide);
}

TEST(DigestFingerprinterTest, BatchEqualsOneByOneForAnyThreadCount) {
  const Recipe recipe = *PresetRecipe("exlsh");
  std::vector<std::string> texts;
  for (int i = 0; i < 300; ++i) texts.push_back(Repeat("w" + std::to_string(i % 37), i % 9));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  auto fingerprinter = MakeDigestFingerprinter(recipe);
  std::vector<Fingerprint> batch;
  {
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
    ASSERT_TRUE(fingerprinter->ComputeBatch(views, &batch).ok());
  }
  ASSERT_EQ(batch.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(batch[i].simhash_wide, Compute(recipe, texts[i]).simhash_wide) << i;
  }
}

TEST(DigestFingerprinterTest, StopwordsAreFilteredFromWordTokens) {
  Recipe recipe = *PresetRecipe("exlsh");
  recipe.stopwords = StopwordsKind::kCustom;
  recipe.custom_stopwords = {"Dolor"};
  EXPECT_EQ(Compute(recipe, "lorem ipsum dolor sit amet").simhash_wide,
            Compute(*PresetRecipe("exlsh"), "lorem ipsum sit amet").simhash_wide);
}

TEST(DigestFingerprinterTest, OtherSketchesAreRefusedClearly) {
  SketchSelection selection = SimHashOnly();
  selection.minhash = true;
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      CreateCpuFingerprinter(*PresetRecipe("exlsh"), selection);
  ASSERT_FALSE(fingerprinter.ok());
  EXPECT_THAT(fingerprinter.status().message(), HasSubstr("computes SimHash only"));
}

// The strict tie rule also works on the 64-bit route: with two unigram
// features f and g, a bit's sum is +2 (both 1), -2 (both 0) or 0 (they
// differ), so the paper's rule gives f | g and the strict rule f & g.
TEST(DigestFingerprinterTest, StrictTieRuleOnTheSixtyFourBitRoute) {
  Recipe recipe = *PresetRecipe("default");
  recipe.simhash.shingle_width = 1;
  const uint64_t f = internal::Xxh3Hash("alpha", 0);
  const uint64_t g = internal::Xxh3Hash("beta", 0);
  EXPECT_EQ(Compute(recipe, "alpha beta").simhash, f | g);
  recipe.simhash.tie = SimHashTieRule::kZero;
  EXPECT_EQ(Compute(recipe, "alpha beta").simhash, f & g);
  EXPECT_EQ(Compute(recipe, "").simhash, 0u);
  recipe.simhash.bits = 128;
  const Fingerprint wide = Compute(recipe, "alpha beta");
  EXPECT_EQ(wide.simhash128.high, f & g);
  EXPECT_EQ(wide.simhash, f & g);
}

}  // namespace
}  // namespace neardup
