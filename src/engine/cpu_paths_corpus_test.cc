// Every CPU path against the reference on real text: the SpamAssassin bodies
// (mostly ASCII, 8% of documents with bytes >= 0x80, some invalid UTF-8) and
// the translated manual pages (UTF-8 in nine languages), when
// scripts/fetch_corpora.sh and scripts/make_i18n_corpus.sh have made them;
// skipped otherwise. Every preset, every sketch, both shingle widths the
// bench measures. A seeded synthetic corpus in many scripts runs everywhere
// (CI has no cache/corpora), so the UTF-8 paths are compared end to end on
// every build.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hash/cpu_path.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprinter.h"
#include "support/corpus_texts.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::SplitMix64;

// Per corpus: the first kFirstDocuments documents and the first
// kNonAsciiDocuments further ones with a byte >= 0x80 (every code path,
// quick under the sanitizers).
constexpr size_t kFirstDocuments = 200;
constexpr size_t kNonAsciiDocuments = 250;

std::vector<std::string> LoadCorpus(const std::string& name) {
  std::vector<std::string> texts;
  size_t non_ascii = 0;
  test_support::ForEachCorpusText(name, [&](std::string&& text) {
    if (texts.size() >= kFirstDocuments) {
      bool ascii = true;
      for (char c : text) ascii &= static_cast<unsigned char>(c) < 0x80;
      if (ascii) return true;
      ++non_ascii;
    }
    texts.push_back(std::move(text));
    return non_ascii < kNonAsciiDocuments;
  });
  return texts;
}

// Fingerprints of `texts` with the fingerprinter NEARDUP_CPU_PATH=path picks.
std::vector<Fingerprint> Compute(const Recipe& recipe, internal::CpuPath path,
                                 const std::vector<std::string>& texts) {
  const char* saved = std::getenv("NEARDUP_CPU_PATH");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("NEARDUP_CPU_PATH", std::string(internal::CpuPathName(path)).c_str(), 1);
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  std::unique_ptr<Fingerprinter> fingerprinter =
      std::move(CreateCpuFingerprinter(recipe, all)).value();
  std::vector<Fingerprint> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    // Compute builds the thread's workspace (and its kernels) on first use,
    // so the variable stays set until the last call.
    EXPECT_TRUE(fingerprinter->Compute(texts[i], &out[i]).ok());
  }
  if (saved != nullptr) {
    setenv("NEARDUP_CPU_PATH", saved_value.c_str(), 1);
  } else {
    unsetenv("NEARDUP_CPU_PATH");
  }
  return out;
}

void ExpectEveryPathEqualsReference(const std::string& corpus,
                                    const std::vector<std::string>& texts) {
  // Every preset at both widths, and a sampled chunk recipe (every preset
  // keeps all chunks): the paper preset (sdbm unigrams, remixed) at width 3
  // with sample_modulus 7, so the fingerprinter's sampled AddMany is
  // compared with the reference path's Add.
  std::vector<std::pair<std::string, Recipe>> recipes;
  for (const std::string& preset : PresetNames()) {
    for (int minhash_width : {0, 3}) {
      Recipe recipe = *PresetRecipe(preset);
      if (minhash_width != 0) recipe.minhash.shingle_width = minhash_width;
      recipes.emplace_back(preset, recipe);
    }
  }
  Recipe sampled = *PresetRecipe("paper");
  sampled.minhash.shingle_width = 3;
  sampled.chunks.sample_modulus = 7;
  recipes.emplace_back("paper, chunks sampled 1 in 7", sampled);
  for (const auto& [preset, recipe] : recipes) {
    {
      const std::vector<Fingerprint> want = Compute(recipe, internal::CpuPath::kReference, texts);
      for (internal::CpuPath path : internal::SupportedCpuPaths()) {
        if (path == internal::CpuPath::kReference) continue;
        const std::vector<Fingerprint> got = Compute(recipe, path, texts);
        for (size_t i = 0; i < texts.size(); ++i) {
          const std::string where = corpus + " document " + std::to_string(i) + " preset " +
                                    preset + " path " + std::string(internal::CpuPathName(path));
          ASSERT_EQ(got[i].simhash, want[i].simhash) << where;
          ASSERT_EQ(got[i].minhash, want[i].minhash) << where;
          ASSERT_EQ(got[i].kvalue_minhash, want[i].kvalue_minhash) << where;
          ASSERT_EQ(got[i].chunks, want[i].chunks) << where;
          ASSERT_EQ(got[i].num_tokens, want[i].num_tokens) << where;
          ASSERT_EQ(got[i].invalid_utf8_sequences, want[i].invalid_utf8_sequences) << where;
        }
      }
    }
  }
}

void ExpectEveryPathEqualsReferenceOn(const std::string& corpus) {
  const std::vector<std::string> texts = LoadCorpus(corpus);
  if (texts.empty()) GTEST_SKIP() << corpus << " not found (scripts/fetch_corpora.sh)";
  ExpectEveryPathEqualsReference(corpus, texts);
}

TEST(CpuPathsCorpusTest, SpamAssassinEveryPathEqualsReference) {
  ExpectEveryPathEqualsReferenceOn("spamassassin.jsonl");
}

TEST(CpuPathsCorpusTest, TranslatedManPagesEveryPathEqualsReference) {
  ExpectEveryPathEqualsReferenceOn("manpages_i18n.jsonl");
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The letters of one writing system, as code point ranges, with the marks
// that may follow a letter (combining or spacing) and the code points that
// normalization changes (compatibility forms, case, composition).
struct Script {
  std::vector<std::pair<char32_t, char32_t>> letters;
  std::vector<std::pair<char32_t, char32_t>> marks;
};

const std::vector<Script>& Scripts() {
  static const std::vector<Script> scripts = {
      {{{'a', 'z'}, {'A', 'Z'}}, {}},                            // ASCII English
      {{{'a', 'z'}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0xFF}},   // Latin-1 (German, French)
       {{0x300, 0x36F}}},                                        // + combining diacritics
      {{{0x100, 0x17F}, {0x1C4, 0x1CC}, {0x1E00, 0x1EFF}}, {}},  // Latin Extended, titlecase
      {{{0x391, 0x3A9}, {0x3B1, 0x3C9}, {0x386, 0x38F}}, {{0x301, 0x301}}},  // Greek
      {{{0x400, 0x45F}}, {{0x306, 0x306}}},                                  // Cyrillic
      {{{0x5D0, 0x5EA}}, {{0x5B0, 0x5BD}}},                                  // Hebrew, points
      {{{0x627, 0x64A}}, {{0x64B, 0x652}}},                                  // Arabic, harakat
      {{{0x905, 0x939}}, {{0x93E, 0x94D}}},                                  // Devanagari
      {{{0xE01, 0xE2E}}, {{0xE31, 0xE3A}}},                                  // Thai
      {{{0x3041, 0x3096}, {0x30A1, 0x30FA}}, {{0x3099, 0x309A}}},            // kana, voicing marks
      {{{0xFF66, 0xFF9D}}, {{0xFF9E, 0xFF9F}}},                              // halfwidth katakana
      {{{0x4E00, 0x9FFF}}, {}},                                              // CJK
      {{{0x20000, 0x2A6DF}}, {}},                                    // CJK extension B (4 bytes)
      {{{0xAC00, 0xD7A3}}, {}},                                      // Hangul syllables
      {{{0x1100, 0x1112}, {0x1161, 0x1175}, {0x11A8, 0x11C2}}, {}},  // conjoining jamo
      {{{0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0xFF10, 0xFF19}}, {}},  // fullwidth Latin, digits
      {{{0xFB00, 0xFB06}, {0x2160, 0x217F}, {0x2460, 0x2473}, {0x2122, 0x2126}, {0x212A, 0x212B}},
       {}},                                                              // compatibility letters
      {{{0x1F600, 0x1F64F}, {0x1F300, 0x1F3FF}}, {{0x1F3FB, 0x1F3FF}}},  // emoji, skin tones
      {{{0x10400, 0x1044F}}, {}},  // Deseret (supplementary, cased)
  };
  return scripts;
}

char32_t Pick(const std::vector<std::pair<char32_t, char32_t>>& ranges, SplitMix64* rng) {
  const auto& [first, last] = ranges[rng->Next() % ranges.size()];
  return first + static_cast<char32_t>(rng->Next() % (last - first + 1));
}

// Separators and punctuation between words, ASCII and not.
constexpr char32_t kSeparators[] = {' ',    ' ',    ' ',    ' ',    '\n',   '\t',   ',',
                                    '.',    '-',    '\'',   '"',    '(',    ')',    0xA0,
                                    0x2003, 0x3000, 0x2014, 0x201C, 0x201D, 0x3001, 0x3002,
                                    0xBF,   0xA1,   0x200B, 0xAD,   0x2028, 0xFEFF, 0x85};

// A document of about `bytes` bytes: sentences whose words mostly come from
// one script (as text in one language does), some ASCII words between them,
// digits, mixed case, and now and then an invalid or truncated sequence.
std::string SyntheticDocument(SplitMix64* rng, size_t bytes) {
  const std::vector<Script>& scripts = Scripts();
  std::string text;
  const Script* script = &scripts[rng->Next() % scripts.size()];
  while (text.size() < bytes) {
    const uint64_t r = rng->Next() % 1000;
    if (r < 30) script = &scripts[rng->Next() % scripts.size()];  // a new sentence
    const Script& word_script = r % 7 == 0 ? scripts[0] : *script;
    const int letters = 1 + static_cast<int>(rng->Next() % (rng->Next() % 4 == 0 ? 30 : 9));
    for (int i = 0; i < letters; ++i) {
      AppendUtf8(Pick(word_script.letters, rng), &text);
      if (!word_script.marks.empty() && rng->Next() % 5 == 0) {
        AppendUtf8(Pick(word_script.marks, rng), &text);
      }
    }
    if (r < 2) {
      static const char* const kInvalid[] = {
          "\x80",         "\xFF",         "\xC3",     "\xE4\xB8",
          "\xED\xA0\x80", "\xF0\x9F\x98", "\xC0\xAF", "\xF4\x90\x80\x80"};
      text.append(kInvalid[rng->Next() % std::size(kInvalid)]);
    }
    AppendUtf8(kSeparators[rng->Next() % std::size(kSeparators)], &text);
  }
  return text;
}

// Runs on every machine: 160 seeded documents of 0 to ~8 KB in 19 scripts.
TEST(CpuPathsCorpusTest, SyntheticMultilingualEveryPathEqualsReference) {
  SplitMix64 rng(20261123);
  std::vector<std::string> texts = {""};
  for (int i = 0; i < 160; ++i) {
    texts.push_back(SyntheticDocument(&rng, rng.Next() % (i % 8 == 0 ? 8192 : 1500)));
  }
  ExpectEveryPathEqualsReference("synthetic multilingual", texts);
}

}  // namespace
}  // namespace neardup
