// The GPU path's UTF-8 normalisation and token marks (gpu/gpu_utf8.h, the
// very functions the CUDA kernels call), run on the host over whole packed
// batches exactly as the kernels run them (size pass, scan, write pass,
// document starts, segment cuts, then the token stage of gpu/gpu_token.h),
// against the CPU path's tokens and hashes (TokenHasher) and invalid-UTF-8
// counts: golden texts, a seeded fuzz in many scripts with invalid UTF-8,
// and the real corpora when scripts/fetch_corpora.sh has fetched them.
// Every document the tables cover must give exactly the CPU's token hashes;
// the others must be flagged for the CPU.
#include "gpu/gpu_utf8.h"
#include "support/corpus_texts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_tables.h"
#include "gpu/gpu_token.h"
#include "gpu/gpu_utf8_tables.h"
#include "gpu/gpu_utf8_test_util.h"
#include "neardup/document_reader.h"
#include "text/normalizer_tables.h"
#include "text/token_hasher.h"
#include "text/utf8.h"
#include "util/mix.h"

namespace neardup::internal::gpu {
namespace {

const uint8_t* TextBytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

struct EmulatedDoc {
  bool for_cpu = false;
  uint32_t invalid = 0;
  std::vector<uint64_t> hashes;
};

// The GPU path on the host: the kernels' passes, each a loop over its
// threads' indices calling the kernel's own function.
std::vector<EmulatedDoc> EmulateBatch(const GpuRecipeTables& tables, const GpuUtf8Tables& utf8,
                                      const std::vector<std::string>& docs) {
  std::string text;
  std::vector<uint32_t> offsets = {0};
  for (const std::string& doc : docs) {
    text += doc;
    offsets.push_back(static_cast<uint32_t>(text.size()));
  }
  const auto n = static_cast<uint32_t>(text.size());
  const auto num_docs = static_cast<uint32_t>(docs.size());
  const Utf8TablesView view = utf8.View(tables);
  const uint32_t num_chunks = (n + kUtf8ChunkBytes - 1) / kUtf8ChunkBytes;
  std::vector<uint32_t> positions(num_chunks + 1, 0);
  std::vector<uint32_t> invalid(num_docs, 0);
  std::vector<uint8_t> uncovered(num_docs, 0);
  for (uint32_t v = 0; v < num_chunks; ++v) {
    positions[v] = Utf8ChunkSizeHd(TextBytes(text), offsets.data(), num_docs, n, v, view,
                                   invalid.data(), uncovered.data());
  }
  uint32_t total = 0;
  for (uint32_t& p : positions) total += std::exchange(p, total);
  const uint32_t size = positions[num_chunks];
  std::string normalized(size + kTokenPadding, 'q');
  std::string attrs(size + kTokenPadding, static_cast<char>(kAttrToken));
  std::string seg(size, '\0');
  auto* attr_bytes = reinterpret_cast<uint8_t*>(attrs.data());
  for (uint32_t v = 0; v < num_chunks; ++v) {
    Utf8ChunkWriteHd(TextBytes(text), offsets.data(), num_docs, n, v, view, positions.data(),
                     reinterpret_cast<uint8_t*>(normalized.data()), attr_bytes,
                     utf8.segments ? reinterpret_cast<uint8_t*>(seg.data()) : nullptr);
  }
  std::vector<uint32_t> norm_offsets(num_docs + 1);
  for (uint32_t d = 0; d <= num_docs; ++d) {
    norm_offsets[d] = Utf8NormalizedOffsetHd(TextBytes(text), offsets.data(), num_docs, n, d, view,
                                             positions.data(), size);
    if (d < num_docs && norm_offsets[d] < size) attr_bytes[norm_offsets[d]] |= kAttrDocStart;
  }
  if (utf8.segments) {
    std::string cut = attrs;  // the kernel writes a copy: no thread reads what another writes
    for (uint32_t p = 0; p < size; ++p) {
      if (SegmentCutHd(attr_bytes, TextBytes(seg), p))
        cut[p] = static_cast<char>(cut[p] | kAttrDocStart);
    }
    attrs = cut;
    attr_bytes = reinterpret_cast<uint8_t*>(attrs.data());
  }
  std::vector<EmulatedDoc> out(num_docs);
  const Xxh3ShortKeys keys = MakeXxh3ShortKeys(tables.xxh3_secret.data(), tables.seed);
  uint32_t d = 0;
  for (uint32_t s = 0; s < size; ++s) {
    const uint8_t a = attr_bytes[s];
    const bool start = (a & kAttrToken) != 0 && (s == 0 || (a & kAttrDocStart) != 0 ||
                                                 (attr_bytes[s - 1] & kAttrToken) == 0);
    if (!start) continue;
    while (norm_offsets[d + 1] <= s) ++d;
    const uint32_t len = TokenEndHd(attr_bytes, size, s) - s;
    const uint8_t* token = TextBytes(normalized) + s;
    if (StopwordContainsHd(TextBytes(tables.stopword_bytes), tables.stopword_offsets.data(),
                           tables.num_stopwords(), token, len)) {
      continue;
    }
    out[d].hashes.push_back(
        IsShortTokenHd(tables.hash, len)
            ? ShortTokenHashHd(tables.hash, token, len, keys)
            : TokenHashHd(tables.hash, token, len, tables.seed, tables.xxh3_secret.data()));
  }
  for (uint32_t i = 0; i < num_docs; ++i) {
    out[i].for_cpu = uncovered[i] != 0;
    out[i].invalid = invalid[i];
  }
  return out;
}

std::vector<Recipe> Utf8RecipesUnderTest() {
  std::vector<Recipe> recipes;
  recipes.push_back(PresetRecipe("default").value());  // word, NFKC, fold, segmentation
  recipes.push_back(PresetRecipe("paper").value());    // whitespace, punctuation removed
  Recipe r = PresetRecipe("default").value();
  r.name = "words-no-segments-nopunct-english-fnv";
  r.segment_scripts = ScriptSegmentation::kNone;
  r.normalization.remove_punctuation = true;
  r.stopwords = StopwordsKind::kEnglish;
  r.hash = FeatureHashKind::kFnv1a;
  r.seed = 77;
  recipes.push_back(r);
  r = PresetRecipe("default").value();
  r.name = "nfkc-only-custom-stopwords";
  r.normalization.case_fold = false;
  r.stopwords = StopwordsKind::kCustom;
  r.custom_stopwords = {"The", "caf\xc3\xa9", "\xe6\x9d\xb1"};
  recipes.push_back(r);
  r = PresetRecipe("default").value();
  r.name = "fold-only-whitespace";
  r.normalization.nfkc = false;
  r.tokenizer = TokenizerKind::kWhitespace;
  r.hash = FeatureHashKind::kSdbm;
  recipes.push_back(r);
  r = PresetRecipe("default").value();
  r.name = "no-unicode-nopunct";
  r.normalization.nfkc = false;
  r.normalization.case_fold = false;
  r.normalization.remove_punctuation = true;
  recipes.push_back(r);
  return recipes;
}

struct Coverage {
  size_t docs = 0;
  size_t non_ascii_docs = 0;
  size_t gpu_non_ascii_docs = 0;  // non-ASCII documents the tables cover
  size_t bytes = 0;
  size_t cpu_bytes = 0;  // bytes of the documents left to the CPU
};

// A recipe with its tables and the CPU's TokenHasher, built once.
struct Prepared {
  explicit Prepared(const Recipe& r)
      : recipe(r),
        tables(BuildGpuRecipeTables(r).value()),
        utf8(BuildGpuUtf8Tables(r).value()),
        hasher(TokenHasher::Create(r).value()) {}
  Recipe recipe;
  GpuRecipeTables tables;
  GpuUtf8Tables utf8;
  TokenHasher hasher;
};

// Emulates `docs` as one batch and checks every covered document against
// TokenHasher; returns the coverage.
Coverage ExpectCoveredDocsEqualCpu(const Prepared& prepared, const std::vector<std::string>& docs) {
  const Recipe& recipe = prepared.recipe;
  const TokenHasher& hasher = prepared.hasher;
  const std::vector<EmulatedDoc> emulated = EmulateBatch(prepared.tables, prepared.utf8, docs);
  Coverage coverage;
  std::string scratch;
  for (size_t i = 0; i < docs.size(); ++i) {
    const bool ascii = IsAscii(docs[i]);
    ++coverage.docs;
    coverage.bytes += docs[i].size();
    coverage.non_ascii_docs += ascii ? 0 : 1;
    if (emulated[i].for_cpu) {
      EXPECT_FALSE(ascii) << "an ASCII document was left to the CPU: " << docs[i];
      coverage.cpu_bytes += docs[i].size();
      continue;
    }
    coverage.gpu_non_ascii_docs += ascii ? 0 : 1;
    std::vector<uint64_t> expected;
    TextStats stats;
    hasher.ForEachTokenHash(
        docs[i], &scratch, [&](uint64_t h) { expected.push_back(h); }, &stats);
    EXPECT_EQ(emulated[i].invalid, stats.invalid_utf8_sequences) << recipe.name << " doc " << i;
    EXPECT_EQ(emulated[i].hashes, expected) << recipe.name << " doc " << i << ": " << docs[i];
    if (emulated[i].hashes != expected) break;  // one message per recipe is enough
  }
  return coverage;
}

std::string Describe(const Coverage& c) {
  char line[200];
  std::snprintf(line, sizeof(line),
                "%zu docs, %zu with bytes >= 0x80 of which %zu (%.1f%%) on the GPU; "
                "bytes left to the CPU %.2f%%",
                c.docs, c.non_ascii_docs, c.gpu_non_ascii_docs,
                c.non_ascii_docs ? 100.0 * c.gpu_non_ascii_docs / c.non_ascii_docs : 0.0,
                c.bytes ? 100.0 * c.cpu_bytes / c.bytes : 0.0);
  return line;
}

// Off by default: the recipe tables carry the UTF-8 tables only when
// NEARDUP_GPU_UTF8=1 (until the path has been verified on a GPU).
TEST(GpuUtf8Test, PathIsOffUnlessAskedFor) {
  const char* old = std::getenv("NEARDUP_GPU_UTF8");
  const std::string saved = old != nullptr ? old : "";
  const Recipe recipe = PresetRecipe("default").value();
  unsetenv("NEARDUP_GPU_UTF8");
  EXPECT_FALSE(GpuUtf8PathEnabled());
  EXPECT_EQ(BuildGpuRecipeTables(recipe).value().utf8, nullptr);
  setenv("NEARDUP_GPU_UTF8", "0", 1);
  EXPECT_FALSE(GpuUtf8PathEnabled());
  setenv("NEARDUP_GPU_UTF8", "1", 1);
  EXPECT_TRUE(GpuUtf8PathEnabled());
  const GpuRecipeTables tables = BuildGpuRecipeTables(recipe).value();
  ASSERT_NE(tables.utf8, nullptr);
  EXPECT_TRUE(tables.utf8->segments);
  EXPECT_GT(tables.utf8->num_covered, 60000u);
  if (old != nullptr) {
    setenv("NEARDUP_GPU_UTF8", saved.c_str(), 1);
  } else {
    unsetenv("NEARDUP_GPU_UTF8");
  }
}

TEST(GpuUtf8Test, DecoderEqualsTheCpuDecoder) {
  // Every one- and two-byte input at every available length, then random
  // inputs of three and four bytes biased to lead and continuation bytes.
  auto check = [](const uint8_t* s, uint32_t available) {
    const DecodedCodePoint cpu =
        DecodeUtf8(reinterpret_cast<const char*>(s), reinterpret_cast<const char*>(s) + available);
    const Utf8DecodedHd gpu = DecodeUtf8Hd(s, available);
    ASSERT_EQ(gpu.valid, cpu.valid);
    ASSERT_EQ(gpu.length, cpu.length);
    if (cpu.valid) {
      ASSERT_EQ(gpu.code_point, cpu.code_point);
    }
  };
  uint8_t s[4] = {0, 0, 0, 0};
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      s[0] = static_cast<uint8_t>(a);
      s[1] = static_cast<uint8_t>(b);
      check(s, 1);
      check(s, 2);
    }
  }
  SplitMix64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    for (uint8_t& c : s) {
      const uint64_t r = rng.Next();
      c = static_cast<uint8_t>(r % 3 == 0 ? 0x80 + (r >> 8) % 0x40
                                          : (r % 3 == 1 ? 0xC0 + (r >> 8) % 0x40 : r >> 8));
    }
    check(s, 1 + static_cast<uint32_t>(rng.Next() % 4));
  }
}

TEST(GpuUtf8Test, TablesCoverExactlyTheCpuContextFreeCodePoints) {
  for (const Recipe& recipe : Utf8RecipesUnderTest()) {
    const GpuUtf8Tables utf8 = BuildGpuUtf8Tables(recipe).value();
    const GpuRecipeTables tables = BuildGpuRecipeTables(recipe).value();
    const Utf8TablesView view = utf8.View(tables);
    const NormalizationOptions& options = recipe.normalization;
    const bool unicode = options.nfkc || options.case_fold;
    uint32_t expected = 0;
    for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const bool covered =
          !unicode || (ContextFreeTableFor(options).entries[cp] & kContextFree) != 0;
      expected += covered ? 1 : 0;
      ASSERT_EQ((Utf8EntryHd(view, cp) & kUtf8Covered) != 0, covered)
          << recipe.name << " " << static_cast<uint32_t>(cp);
    }
    EXPECT_EQ(utf8.num_covered, expected);
    EXPECT_EQ(Utf8EntryHd(view, 0x1F600), 0u) << "supplementary planes stay on the CPU";
    EXPECT_LT(utf8.bytes(), size_t{512} << 10) << recipe.name;
    std::printf("[ tables   ] %s: %u BMP code points covered, %zu bytes of tables\n",
                recipe.name.c_str(), utf8.num_covered, utf8.bytes());
  }
}

TEST(GpuUtf8Test, GoldenTextsGiveTheCpuTokenHashes) {
  const std::vector<std::string> texts = Utf8GoldenAndEdgeTexts();
  for (const Recipe& recipe : Utf8RecipesUnderTest()) {
    const Prepared prepared(recipe);
    const Coverage c = ExpectCoveredDocsEqualCpu(prepared, texts);
    // The Latin, Greek, Chinese, Japanese and Thai texts are covered.
    EXPECT_GE(c.gpu_non_ascii_docs, 8u) << recipe.name << ": " << Describe(c);
    // Each text alone too: no document boundary helps or hides anything.
    for (const std::string& text : texts) ExpectCoveredDocsEqualCpu(prepared, {text});
  }
}

TEST(GpuUtf8Test, SeededUnicodeFuzzGivesTheCpuTokenHashes) {
  SplitMix64 rng(20261126);
  std::vector<std::string> docs;
  for (int i = 0; i < 3000; ++i) docs.push_back(MultiScriptDocument(&rng, i % 3 == 0));
  for (const Recipe& recipe : Utf8RecipesUnderTest()) {
    const Coverage c = ExpectCoveredDocsEqualCpu(Prepared(recipe), docs);
    std::printf("[ fuzz     ] %s: %s\n", recipe.name.c_str(), Describe(c).c_str());
    // At least the plain third of the documents runs on the GPU.
    EXPECT_GE(c.gpu_non_ascii_docs, c.non_ascii_docs / 4) << recipe.name << ": " << Describe(c);
    EXPECT_LT(c.gpu_non_ascii_docs, c.non_ascii_docs) << "the fuzz must reach the CPU fallback";
  }
}

std::vector<std::string> LoadCorpus(const std::string& name, size_t max_bytes) {
  std::vector<std::string> texts;
  size_t bytes = 0;
  test_support::ForEachCorpusText(name, [&](std::string&& text) {
    bytes += text.size();
    texts.push_back(std::move(text));
    return bytes < max_bytes;
  });
  return texts;
}

// The real corpora (scripts/fetch_corpora.sh; the translated manual pages of
// scripts/make_i18n_corpus.sh, in eleven languages), under the default and paper
// recipes; prints how much of each the GPU path covers. Skipped without them
// (CI). Under the sanitizers only their first megabytes.
TEST(GpuUtf8Test, RealCorporaGiveTheCpuTokenHashes) {
#if defined(__SANITIZE_ADDRESS__)
  const size_t max_bytes = size_t{2} << 20;
#else
  const size_t max_bytes = size_t{64} << 20;
#endif
  bool any = false;
  for (const char* name : {"spamassassin.jsonl", "brown.jsonl", "manpages_i18n.jsonl"}) {
    const std::vector<std::string> docs = LoadCorpus(name, max_bytes);
    if (docs.empty()) continue;
    any = true;
    for (const char* preset : {"default", "paper"}) {
      const Coverage c = ExpectCoveredDocsEqualCpu(Prepared(PresetRecipe(preset).value()), docs);
      std::printf("[ corpus   ] %s, %s: %s\n", name, preset, Describe(c).c_str());
    }
  }
  if (!any) GTEST_SKIP() << "no cache/corpora (scripts/fetch_corpora.sh): nothing to compare";
}

}  // namespace
}  // namespace neardup::internal::gpu
