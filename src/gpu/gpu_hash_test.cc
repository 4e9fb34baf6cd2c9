// The GPU path's arithmetic (gpu/gpu_hash.h) and tables (gpu/gpu_tables.h)
// against the CPU definitions, on the host: runs everywhere, GPU or not.
#include "gpu/gpu_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/gpu_bottomk.h"
#include "gpu/gpu_tables.h"
#include "gpu/gpu_token.h"
#include "hash/feature_hash.h"
#include "hash/shingle_hasher.h"
#include "neardup/minhash.h"
#include "neardup/simhash.h"
#include "text/token_hasher.h"
#include "util/mix.h"

namespace neardup::internal::gpu {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string RandomBytes(SplitMix64* rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng->Next());
  return s;
}

TEST(GpuHashTest, ConstantsEqualTheCpuOnes) {
  EXPECT_EQ(kGoldenGammaHd, kGoldenGamma);
  EXPECT_EQ(kShingleMultiplierHd, kShingleMultiplier);
  EXPECT_EQ(kSimHash128LowSaltHd, kSimHash128LowSalt);
  SplitMix64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = rng.Next();
    ASSERT_EQ(Mix64Hd(x), Mix64(x));
    ASSERT_EQ(LeadingCoefficientHd(x), ShingleHasher::LeadingCoefficient(x));
  }
}

// Every length class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, and the
// long path over one and several 1 KiB blocks), several seeds.
TEST(GpuHashTest, Xxh3EqualsXxHashAtEveryLength) {
  const GpuRecipeTables tables = BuildGpuRecipeTables(Recipe{}).value();
  SplitMix64 rng(2);
  const std::string text = RandomBytes(&rng, 4200);
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}, ~uint64_t{0}}) {
    for (size_t len = 0; len <= 4100; len += (len < 300 ? 1 : 37)) {
      const size_t start = rng.Next() % (text.size() - len + 1);
      ASSERT_EQ(Xxh3Hd(Bytes(text) + start, len, seed, tables.xxh3_secret.data()),
                Xxh3Hash(std::string_view(text).substr(start, len), seed))
          << "len " << len << " seed " << seed;
    }
  }
}

TEST(GpuHashTest, SdbmAndFnv1aEqualTheCpuLoops) {
  SplitMix64 rng(3);
  for (size_t len = 0; len < 200; ++len) {
    const std::string s = RandomBytes(&rng, len);
    const uint64_t seed = rng.Next();
    ASSERT_EQ(SdbmHd(Bytes(s), len, seed), SdbmHash(s, seed));
    ASSERT_EQ(Fnv1aHd(Bytes(s), len, seed), Fnv1aHash(s, seed));
  }
}

TEST(GpuHashTest, CombineEqualsShingleHasher) {
  SplitMix64 rng(4);
  std::vector<uint64_t> tokens(70);
  for (uint64_t& t : tokens) t = rng.Next() % 5 == 0 ? 0 : rng.Next();
  for (uint32_t n = 1; n <= 64; ++n) {
    const uint64_t seed = rng.Next();
    ASSERT_EQ(CombineHd(tokens.data(), n, LeadingCoefficientHd(seed)),
              ShingleHasher::Combine(std::span(tokens).first(n), seed))
        << n;
  }
}

// KValueBuilder rebuilt from KValueBin and DensifySource, for sparse and
// dense documents (few features leave most bins to densification).
TEST(GpuHashTest, KValueBinsAndDensificationEqualKValueBuilder) {
  SplitMix64 rng(5);
  for (int k : {1, 7, 64, 128}) {
    for (int features : {1, 2, 5, 40, 1000}) {
      const uint64_t seed = rng.Next();
      KValueBuilder builder(k, seed);
      std::vector<uint64_t> mins(k, UINT64_MAX);
      std::vector<uint8_t> filled(k, 0);
      for (int i = 0; i < features; ++i) {
        const uint64_t h = rng.Next();
        builder.Add(h);
        const uint32_t bin = KValueBin(h, static_cast<uint64_t>(k));
        mins[bin] = std::min(mins[bin], h);
        filled[bin] = 1;
      }
      const KValueSketch expected = builder.Finish();
      for (int i = 0; i < k; ++i) {
        const uint32_t source =
            filled[i] ? i : DensifySource(filled.data(), static_cast<uint64_t>(k), seed, i);
        ASSERT_EQ(mins[source], expected.values[i]) << "k " << k << " bin " << i;
      }
    }
  }
}

// The GPU's token stage, emulated on the host from the tables alone and
// with the kernels' own per-token functions (gpu/gpu_token.h): normalise by
// byte table into attribute bytes, find token starts, each token's end by
// word loads, drop stopwords, hash (short tokens by the slim path, the rest
// by Xxh3Hd). The padding past the buffers holds token-looking bytes, so an
// end that is not clamped, or a hash that reads past its token, shows.
std::vector<uint64_t> TokenHashesFromTables(const GpuRecipeTables& tables,
                                            const std::string& text) {
  std::string normalized;
  std::string attrs;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((tables.byte_class[c] & kByteKept) == 0) continue;
    normalized.push_back(static_cast<char>(tables.mapped[c]));
    attrs.push_back(static_cast<char>((tables.byte_class[c] & kByteToken) ? kAttrToken : 0));
  }
  const auto size = static_cast<uint32_t>(normalized.size());
  if (size > 0) attrs[0] = static_cast<char>(attrs[0] | kAttrDocStart);
  normalized.append(kTokenPadding, 'q');
  attrs.append(kTokenPadding, static_cast<char>(kAttrToken));
  const Xxh3ShortKeys keys = MakeXxh3ShortKeys(tables.xxh3_secret.data(), tables.seed);
  std::vector<uint64_t> hashes;
  for (uint32_t s = 0; s < size; ++s) {
    const auto a = static_cast<uint8_t>(attrs[s]);
    const bool start = (a & kAttrToken) != 0 &&
                       (s == 0 || (a & kAttrDocStart) != 0 || (attrs[s - 1] & kAttrToken) == 0);
    if (!start) continue;
    const uint32_t len = TokenEndHd(Bytes(attrs), size, s) - s;
    const uint8_t* token = Bytes(normalized) + s;
    if (StopwordContainsHd(Bytes(tables.stopword_bytes), tables.stopword_offsets.data(),
                           tables.num_stopwords(), token, len)) {
      continue;
    }
    hashes.push_back(
        IsShortTokenHd(tables.hash, len)
            ? ShortTokenHashHd(tables.hash, token, len, keys)
            : TokenHashHd(tables.hash, token, len, tables.seed, tables.xxh3_secret.data()));
  }
  return hashes;
}

// The slim kernel's XXH3 (precomputed keys, word loads) equals Xxh3Hd at
// every length it takes, every alignment and several seeds; LoadLe64 equals
// Read64.
TEST(GpuHashTest, ShortXxh3FromWordLoadsEqualsXxh3) {
  const GpuRecipeTables tables = BuildGpuRecipeTables(Recipe{}).value();
  SplitMix64 rng(7);
  alignas(8) uint8_t buffer[64];
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}, ~uint64_t{0}}) {
    const Xxh3ShortKeys keys = MakeXxh3ShortKeys(tables.xxh3_secret.data(), seed);
    for (int round = 0; round < 50; ++round) {
      for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng.Next());
      for (uint32_t offset = 0; offset < 8; ++offset) {
        ASSERT_EQ(LoadLe64(buffer + offset), Read64(buffer + offset));
        for (uint32_t len = 0; len <= 16; ++len) {
          ASSERT_TRUE(IsShortTokenHd(FeatureHashKind::kXxh3, len));
          ASSERT_EQ(Xxh3ShortHd(buffer + offset, len, keys),
                    Xxh3Hd(buffer + offset, len, seed, tables.xxh3_secret.data()))
              << "len " << len << " offset " << offset << " seed " << seed;
        }
      }
    }
  }
  EXPECT_FALSE(IsShortTokenHd(FeatureHashKind::kXxh3, 17));
  EXPECT_TRUE(IsShortTokenHd(FeatureHashKind::kFnv1a, 5000));
}

// TokenEndHd against the byte loop it replaces, on random attribute runs
// (token bytes, others, document starts) with token-looking padding.
TEST(GpuHashTest, TokenEndFromWordLoadsEqualsByteLoop) {
  SplitMix64 rng(8);
  for (int round = 0; round < 300; ++round) {
    const auto size = static_cast<uint32_t>(1 + rng.Next() % 100);
    std::vector<uint8_t> attrs(size + kTokenPadding, kAttrToken);
    for (uint32_t i = 0; i < size; ++i) {
      const uint64_t r = rng.Next() % 10;
      attrs[i] = r < 7 ? kAttrToken : (r < 9 ? 0 : kAttrToken | kAttrDocStart);
    }
    for (uint32_t start = 0; start < size; ++start) {
      uint32_t expected = start + 1;
      while (expected < size && attrs[expected] == kAttrToken) ++expected;
      ASSERT_EQ(TokenEndHd(attrs.data(), size, start), expected) << "start " << start;
    }
  }
}

std::vector<Recipe> RecipesUnderTest() {
  std::vector<Recipe> recipes = {PresetRecipe("default").value(), PresetRecipe("paper").value()};
  Recipe fnv_words = recipes[0];
  fnv_words.hash = FeatureHashKind::kFnv1a;
  fnv_words.seed = 77;
  fnv_words.normalization.remove_punctuation = true;
  fnv_words.stopwords = StopwordsKind::kEnglish;
  recipes.push_back(fnv_words);
  Recipe custom = recipes[1];
  custom.hash = FeatureHashKind::kXxh3;
  custom.seed = 5;
  custom.normalization.remove_punctuation = false;
  custom.normalization.case_fold = false;
  custom.stopwords = StopwordsKind::kCustom;
  custom.custom_stopwords = {"The", "a", "and", "of,", "zz"};
  recipes.push_back(custom);
  return recipes;
}

// The bitonic network of BottomKSelectKernel, run stage by stage on an array
// with the kernel's loops (exponents) and its rule, sorts any values.
void BitonicSortOnHost(std::vector<uint64_t>* values) {
  const uint32_t m = static_cast<uint32_t>(values->size());
  std::vector<uint64_t> next(m);
  for (uint32_t size = 2; size <= m; size *= 2) {
    for (uint32_t stride = size / 2; stride > 0; stride /= 2) {
      for (uint32_t i = 0; i < m; ++i) {
        const uint64_t a = (*values)[i];
        const uint64_t b = (*values)[i ^ stride];
        next[i] = BitonicKeepsMin(i, size, stride) ? std::min(a, b) : std::max(a, b);
      }
      values->swap(next);
    }
  }
}

TEST(GpuBottomKTest, BitonicNetworkSortsEveryRegisterCount) {
  SplitMix64 rng(7);
  for (uint32_t registers = 1; registers <= 16; registers *= 2) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<uint64_t> values(32 * registers);
      // Repeats, extremes and padding-like UINT64_MAX as well as hashes.
      for (uint64_t& v : values) {
        const uint64_t r = rng.Next();
        v = r % 4 == 0 ? r % 5 : r % 4 == 1 ? UINT64_MAX - r % 3 : r;
      }
      std::vector<uint64_t> expected = values;
      std::sort(expected.begin(), expected.end());
      BitonicSortOnHost(&values);
      ASSERT_EQ(values, expected) << registers << " registers, trial " << trial;
    }
  }
}

TEST(GpuBottomKTest, RegistersHoldTheCandidates) {
  EXPECT_EQ(BottomKRegisters(0), 1u);
  EXPECT_EQ(BottomKRegisters(32), 1u);
  EXPECT_EQ(BottomKRegisters(33), 2u);
  EXPECT_EQ(BottomKRegisters(256), 8u);
  EXPECT_EQ(BottomKRegisters(257), 16u);
  EXPECT_EQ(BottomKRegisters(kBottomKCandidates), 16u);
}

// The kernel's selection emulated with std::sort for the network: the
// threshold, the first k distinct, the retry with every feature and the
// flag. Returns false when the document would be flagged.
bool SelectLikeTheKernel(const std::vector<uint64_t>& features, uint32_t k,
                         std::vector<uint64_t>* out, uint32_t* registers) {
  const uint32_t n = static_cast<uint32_t>(features.size());
  uint64_t threshold = BottomKThreshold(n, k);
  while (true) {
    std::vector<uint64_t> candidates;
    for (uint64_t f : features) {
      if (f <= threshold) candidates.push_back(f);
    }
    if (candidates.size() > kBottomKCandidates) return false;
    *registers = BottomKRegisters(static_cast<uint32_t>(candidates.size()));
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    if (candidates.size() > k) candidates.resize(k);
    *out = candidates;
    if (out->size() >= k || threshold == UINT64_MAX) return true;
    if (n > kBottomKCandidates) return false;
    threshold = UINT64_MAX;
  }
}

TEST(GpuBottomKTest, ThresholdedSelectionIsExactAndUsesSmallerNetworks) {
  SplitMix64 rng(11);
  for (uint32_t k : {1u, 4u, 64u, 128u, 200u, 400u}) {
    int flagged = 0;
    int smaller = 0;
    int large = 0;
    for (uint32_t n = 0; n <= 1400; n += 7) {
      // Distinct hashes, or a few repeated shingles (fewer than k distinct).
      const uint64_t repeats = n % 5 == 0 ? 3 : 0;
      std::vector<uint64_t> features(n);
      for (uint64_t& f : features) f = repeats != 0 ? rng.Next() % repeats * 0x9e37 : rng.Next();
      std::vector<uint64_t> expected = features;
      std::sort(expected.begin(), expected.end());
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      if (expected.size() > k) expected.resize(k);
      std::vector<uint64_t> got;
      uint32_t registers = 0;
      if (!SelectLikeTheKernel(features, k, &got, &registers)) {
        // Only what cannot fit: too many candidates, or too few distinct
        // under the threshold of a document over the candidate limit.
        EXPECT_TRUE(n > kBottomKCandidates) << k << " " << n;
        ++flagged;
        continue;
      }
      ASSERT_EQ(got, expected) << "k " << k << ", n " << n;
      if (repeats == 0 && n > 256 && n <= kBottomKCandidates) {
        ++large;
        smaller += registers < 16;
      }
    }
    if (k <= 128) {
      // Hashes alone: every document between 257 and 512 features ran a
      // smaller network than its features need, and the only flagged ones
      // repeat shingles (a fifth of the sizes, over 512 features).
      EXPECT_EQ(smaller, large) << k;
      EXPECT_LE(flagged, 1400 / 7 / 5) << k;
    }
  }
}

TEST(GpuTablesTest, TableTokenStageEqualsTokenHasherOnAscii) {
  SplitMix64 rng(6);
  const std::string words[] = {"The", "the", "a", "and",  "of,",    "don't", "x-ray", "zz",  "Zz",
                               "42",  "(a)", "",  "U.S.", "e-mail", "ALL",   "is",    "it's"};
  std::vector<std::string> texts = {"", " ", "a", "The quick brown fox, the lazy dog."};
  for (int t = 0; t < 300; ++t) {
    std::string text;
    const size_t n = rng.Next() % 200;
    for (size_t i = 0; i < n; ++i) {
      if (rng.Next() % 4 == 0) {
        text.push_back(static_cast<char>(rng.Next() % 128));  // any ASCII byte, controls too
      } else {
        text += words[rng.Next() % std::size(words)];
      }
      if (rng.Next() % 3 != 0) text.push_back(" \n\t.,;"[rng.Next() % 6]);
    }
    texts.push_back(text);
  }
  texts.push_back(std::string(5000, 'q'));  // a token on XXH3's long path
  for (const Recipe& recipe : RecipesUnderTest()) {
    const GpuRecipeTables tables = BuildGpuRecipeTables(recipe).value();
    const TokenHasher hasher = TokenHasher::Create(recipe).value();
    std::string scratch;
    for (const std::string& text : texts) {
      std::vector<uint64_t> expected;
      hasher.ForEachTokenHash(
          text, &scratch, [&](uint64_t h) { expected.push_back(h); }, nullptr);
      ASSERT_EQ(TokenHashesFromTables(tables, text), expected) << CanonicalJson(recipe) << "\n"
                                                               << text;
    }
  }
}

TEST(GpuTablesTest, RecipesTheGpuDoesNotComputeAreNotCovered) {
  std::string why;
  EXPECT_FALSE(GpuCoversRecipe(PresetRecipe("short").value(), &why));
  EXPECT_NE(why.find("tokenizer"), std::string::npos) << why;
  // The digest route (ExLSH) and the strict tie rule stay on the CPU.
  EXPECT_FALSE(GpuCoversRecipe(PresetRecipe("exlsh").value(), &why));
  EXPECT_NE(why.find("digest"), std::string::npos) << why;
  Recipe strict_tie = PresetRecipe("default").value();
  strict_tie.simhash.tie = SimHashTieRule::kZero;
  EXPECT_FALSE(GpuCoversRecipe(strict_tie, &why));
  EXPECT_NE(why.find("tie rule"), std::string::npos) << why;
  EXPECT_TRUE(GpuCoversRecipe(PresetRecipe("paper").value(), nullptr));
  EXPECT_TRUE(GpuCoversRecipe(PresetRecipe("default").value(), nullptr));
}

}  // namespace
}  // namespace neardup::internal::gpu
