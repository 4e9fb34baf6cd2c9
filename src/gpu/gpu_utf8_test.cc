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

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_tables.h"
#include "gpu/gpu_token.h"
#include "gpu/gpu_utf8_tables.h"
#include "neardup/document_reader.h"
#include "text/normalizer_tables.h"
#include "text/token_hasher.h"
#include "text/utf8.h"
#include "util/mix.h"

namespace neardup::internal::gpu {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

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
    positions[v] = Utf8ChunkSizeHd(Bytes(text), offsets.data(), num_docs, n, v, view,
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
    Utf8ChunkWriteHd(Bytes(text), offsets.data(), num_docs, n, v, view, positions.data(),
                     reinterpret_cast<uint8_t*>(normalized.data()), attr_bytes,
                     utf8.segments ? reinterpret_cast<uint8_t*>(seg.data()) : nullptr);
  }
  std::vector<uint32_t> norm_offsets(num_docs + 1);
  for (uint32_t d = 0; d <= num_docs; ++d) {
    norm_offsets[d] = Utf8NormalizedOffsetHd(Bytes(text), offsets.data(), num_docs, n, d, view,
                                             positions.data(), size);
    if (d < num_docs && norm_offsets[d] < size) attr_bytes[norm_offsets[d]] |= kAttrDocStart;
  }
  if (utf8.segments) {
    std::string cut = attrs;  // the kernel writes a copy: no thread reads what another writes
    for (uint32_t p = 0; p < size; ++p) {
      if (SegmentCutHd(attr_bytes, Bytes(seg), p))
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
    const uint8_t* token = Bytes(normalized) + s;
    if (StopwordContainsHd(Bytes(tables.stopword_bytes), tables.stopword_offsets.data(),
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

// The golden texts of tests/golden_test.cc (every script the recipes treat
// differently), and edge cases of units, documents and segments.
std::vector<std::string> GoldenAndEdgeTexts() {
  return {
      "The quick brown fox jumps over the lazy dog. The dog sleeps in the sun.",
      "\xc3\x87\xc3\xa0 et l\xc3\xa0, les \xc3\xa9l\xc3\xa8ves d\xc3\xa9j\xc3\xa0 partis; "
      "Stra\xc3\x9f"
      "e, na\xc3\xafve fa\xc3\xa7"
      "ade, cr\xc3\xa8me br\xc3\xbbl\xc3\xa9"
      "e.",
      "\xce\x97 \xce\xb3\xcf\x81\xce\xae\xce\xb3\xce\xbf\xcf\x81\xce\xb7 \xce\xb1\xce\xbb\xce\xb5"
      "\xcf\x80\xce\xbf\xcf\x8d \xcf\x80\xce\xb7\xce\xb4\xce\xac. "
      "\xce\x9f\xce\x94\xce\x9f\xce\xa3 "
      "\xce\xbf\xce\xb4\xcf\x8c\xcf\x82",
      "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe9\xa6\x96\xe9"
      "\x83\xbd\xe3\x81\xa7\xe3\x81\x99\xe3\x80\x82 \xea\xb0\x80\xeb\x82\x98\xeb\x8b\xa4 "
      "\xe5\x8c\x97\xe4\xba\xac",
      "I love pizza \xf0\x9f\x8d\x95\xf0\x9f\x8d\x95 and sushi \xf0\x9f\x8d\xa3! "
      "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd family \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9",
      "R\xc3\xa9sum\xc3\xa9: na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac caf\xc3\xa9 "
      "\xce\x91\xce\x92\xce\x93 123 \xef\xac\x81nance \xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3",
      "bad \xff\xfe bytes \xc3 and \xed\xa0\x80 surrogate \xf4\x90\x80\x80 end",
      "",
      "Hello",
      "東京は日本の首都です。コンピュータのプログラムはneardupで重複を検出します。"
      "ひらがなとカタカナと漢字が混ざった文章、第3章。",
      "我们的近似重复检测工具可以处理中文文本，不需要空格。这是第二句话。",
      "ภาษาไทยเขียนโดยไม่มีช่องว่างระหว่างคำ ພາສາລາວ ភាសាខ្មែរ မြန်မာဘာသာ",
      "\xe3\x90\x80\xe4\xb6\xb5 \xf0\xa0\x80\x80\xf0\xaa\x9a\xb2 \xef\xa4\x80 "
      "\xef\xbd\xb6\xef\xbe\x80\xef\xbd\xb6\xef\xbe\x85 \xe3\x80\x85 "
      "\xe3\x81\x8b\xe3\x82\x99",
      "漢\xe6\x97字\xe3\x81 か\xff な\xed\xa0\x80カナ\xf0\xa0\x80",
      // Units across documents: a sequence cut at a document's end, a
      // document that starts with continuation bytes, lone continuations.
      "ends in a cut sequence \xe6\x9d",
      "\xb1\xe4\xba\xac starts with continuation bytes",
      "\x80\x80\x80\x80\x80 five \xbf",
      "\xe2\x82",
      "\xac",
      "カタカナ漢字ｶﾀｶﾅかな ａｂｃ ＡＢＣ ﬁﬂ ½ ™ Ⅻ ㌀ 　 \xc2\xa0 x\xe2\x80\x83y",
      "Ωmega ΣΑΣ ς Straße İstanbul ǅ ﬀ",
      // Segments never look back across a document: this one ends in a
      // kSingle, the next starts with marks (combining class 0, so covered)
      // before a letter, which the CPU does not cut from them.
      "ends in 漢",
      "\xe0\xb8\xb1\xe0\xa4\xbe"
      "abc \xe0\xb8\xb1漢\xe0\xb8\xb1"
      "a",
  };
}

TEST(GpuUtf8Test, GoldenTextsGiveTheCpuTokenHashes) {
  const std::vector<std::string> texts = GoldenAndEdgeTexts();
  for (const Recipe& recipe : Utf8RecipesUnderTest()) {
    const Prepared prepared(recipe);
    const Coverage c = ExpectCoveredDocsEqualCpu(prepared, texts);
    // The Latin, Greek, Chinese, Japanese and Thai texts are covered.
    EXPECT_GE(c.gpu_non_ascii_docs, 8u) << recipe.name << ": " << Describe(c);
    // Each text alone too: no document boundary helps or hides anything.
    for (const std::string& text : texts) ExpectCoveredDocsEqualCpu(prepared, {text});
  }
}

// A seeded document from pieces of many scripts: precomposed and
// decomposed accents, Greek, Cyrillic, Arabic and Hebrew with marks,
// Devanagari, Thai, CJK, kana (full and half width), compatibility forms,
// white space and ignorable code points, emoji, random BMP code points, and
// invalid UTF-8 of every kind. `plain` documents leave out the pieces that
// send a document to the CPU, so that coverage is not left to chance.
std::string FuzzDocument(SplitMix64* rng, bool plain) {
  static const char* const kCovered[] = {"word",
                                         "The",
                                         " ",
                                         ", ",
                                         ". ",
                                         "\n",
                                         "caf\xc3\xa9",
                                         "STRASSE",
                                         "Stra\xc3\x9f"
                                         "e",
                                         "\xce\xa3\xce\xbf\xcf\x86\xce\xaf\xce\xb1",
                                         "\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
                                         "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d",
                                         "\xd8\xb3\xd9\x84\xd8\xa7\xd9\x85",
                                         "東京",
                                         "漢字",
                                         "ひらがな",
                                         "カタカナー",
                                         "ｶﾀｶﾅ",
                                         "ＡＢＣ",
                                         "ﬁ",
                                         "½",
                                         "™",
                                         "　",
                                         "\xc2\xa0",
                                         "ภาษาไทย",
                                         "한국어",
                                         "Ⅻ",
                                         "…",
                                         "«»",
                                         "—",
                                         "\xef\xbf\xbd",
                                         "İ",
                                         "ǅ",
                                         "ς",
                                         "ẞ",
                                         "\xe0\xb8\xb1",
                                         "\xe0\xa4\xbe"};  // marks of combining class 0
  static const char* const kOther[] = {
      "e\xcc\x81",  // e + combining acute: composes
      "\xcc\x81",   // a lone combining mark
      "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\x82\xe0\xa4\xa6\xe0\xa5\x80",  // Devanagari
      "\xc2\xad",                                                      // soft hyphen (ignorable)
      "\xe2\x80\x8b",                                                  // zero-width space
      "\xf0\x9f\x98\x80",                                              // emoji (supplementary)
      "\xf0\xa0\x80\x80",                                              // CJK extension B
      "\xea\xb0\x80\xe1\x86\xa8",  // Hangul syllable + trailing jamo
      "\xe3\x81\x8b\xe3\x82\x99",  // か + voiced mark
      "\xff",
      "\xc0\x80",
      "\xed\xa0\x80",
      "\xe6\x9d",
      "\xf4\x90\x80\x80",
      "\x80",
      "\xf0\x9f\x98"};
  std::string doc;
  const size_t pieces = rng->Next() % 40;
  for (size_t i = 0; i < pieces; ++i) {
    const uint64_t r = rng->Next() % 100;
    if (r < 55 || (plain && r < 90)) {
      doc += kCovered[rng->Next() % std::size(kCovered)];
    } else if (r < 75 && !plain) {
      doc += kOther[rng->Next() % std::size(kOther)];
    } else if (r < 90 && !plain) {
      // A random BMP code point (many unassigned, some marks).
      auto cp = static_cast<char32_t>(0x80 + rng->Next() % (0x10000 - 0x80));
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0x4E00;
      AppendUtf8(cp, &doc);
    } else {
      doc.push_back(" -'\t"[rng->Next() % 4]);
    }
  }
  return doc;
}

TEST(GpuUtf8Test, SeededUnicodeFuzzGivesTheCpuTokenHashes) {
  SplitMix64 rng(20261126);
  std::vector<std::string> docs;
  for (int i = 0; i < 3000; ++i) docs.push_back(FuzzDocument(&rng, i % 3 == 0));
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
  const std::string path = std::string(NEARDUP_SOURCE_DIR) + "/cache/corpora/" + name;
  if (!std::filesystem::exists(path)) return texts;
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) return texts;
  Document doc;
  size_t bytes = 0;
  while (bytes < max_bytes) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok() || !*next) break;
    bytes += doc.text.size();
    texts.push_back(std::move(doc.text));
  }
  return texts;
}

// The real corpora (scripts/fetch_corpora.sh), under the default and paper
// recipes; prints how much of each the GPU path covers. Skipped without them
// (CI). Under the sanitizers only their first megabytes.
TEST(GpuUtf8Test, RealCorporaGiveTheCpuTokenHashes) {
#if defined(__SANITIZE_ADDRESS__)
  const size_t max_bytes = size_t{2} << 20;
#else
  const size_t max_bytes = size_t{64} << 20;
#endif
  bool any = false;
  for (const char* name : {"spamassassin.jsonl", "brown.jsonl"}) {
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
