// What the GPU tests and the GPU benchmark share: a seeded corpus and the
// comparison of two backends' fingerprints.
#ifndef NEARDUP_GPU_GPU_TEST_UTIL_H_
#define NEARDUP_GPU_GPU_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "util/mix.h"

namespace neardup::internal::gpu {

// A seeded corpus of `num_docs` documents of mostly English-like ASCII (a
// 3000-word vocabulary with mixed case, punctuation, digits, stopwords, every
// ASCII control byte now and then, and tokens of up to 5 KB for XXH3's long
// paths), sizes 0 to ~`max_bytes`; every `non_ascii_every`-th document (0:
// none) has UTF-8 (Latin-1, Greek, CJK) or an invalid byte, so it goes to the
// CPU.
// With `long_tokens` false, no token is longer than 40 bytes (running text:
// the throughput corpus).
inline std::vector<std::string> SyntheticCorpus(uint64_t seed, size_t num_docs, size_t max_bytes,
                                                size_t non_ascii_every, bool long_tokens = true) {
  SplitMix64 rng(seed);
  static const char* const kStop[] = {"the", "The", "a",   "of", "and", "is",   "it", "to",  "in",
                                      "THE", "was", "for", "on", "are", "with", "he", "they"};
  static const char* const kNonAscii[] = {"caf\xc3\xa9", "\xce\xb1\xce\xb2\xce\xb3",
                                          "\xe6\x9d\xb1\xe4\xba\xac", "bad\xff", "na\xc3\xafve"};
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 3000; ++i) {
    std::string word;
    const size_t len = 1 + rng.Next() % (rng.Next() % 8 == 0 ? 20 : 9);
    for (size_t j = 0; j < len; ++j) word.push_back(static_cast<char>('a' + rng.Next() % 26));
    if (i % 11 == 0) word[0] = static_cast<char>(word[0] - 32);
    if (i % 29 == 0) word += std::to_string(i);
    vocabulary.push_back(word);
  }
  std::vector<std::string> docs;
  docs.reserve(num_docs);
  for (size_t d = 0; d < num_docs; ++d) {
    std::string text;
    const size_t target = rng.Next() % (d % 16 == 0 ? max_bytes + 1 : max_bytes / 8 + 1);
    while (text.size() < target) {
      const uint64_t r = rng.Next() % 1000;
      if (r < 250) {
        text += kStop[rng.Next() % std::size(kStop)];
      } else if (r < 252 && long_tokens) {
        text += std::string(1 + rng.Next() % 5000, static_cast<char>('a' + rng.Next() % 26));
      } else if (r < 262) {
        text.push_back(static_cast<char>(rng.Next() % 128));  // any ASCII byte
      } else {
        text += vocabulary[rng.Next() % vocabulary.size()];
      }
      const uint64_t s = rng.Next() % 100;
      text += s < 70   ? " "
              : s < 80 ? ", "
              : s < 88 ? ". "
              : s < 92 ? "\n"
              : s < 95 ? "-"
              : s < 97 ? "'"
                       : "\t";
    }
    if (non_ascii_every != 0 && d % non_ascii_every == non_ascii_every - 1) {
      text.insert(text.size() / 2,
                  std::string(" ") + kNonAscii[rng.Next() % std::size(kNonAscii)] + " ");
    }
    docs.push_back(std::move(text));
  }
  return docs;
}

// Empty when equal; else the first difference, named.
inline std::string FingerprintDifference(const Fingerprint& a, const Fingerprint& b,
                                         const SketchSelection& selection, const Recipe& recipe) {
  if (a.num_tokens != b.num_tokens) {
    return "num_tokens " + std::to_string(a.num_tokens) + " != " + std::to_string(b.num_tokens);
  }
  if (a.invalid_utf8_sequences != b.invalid_utf8_sequences) return "invalid_utf8_sequences";
  if (selection.simhash) {
    if (a.simhash != b.simhash) return "simhash";
    if (recipe.simhash.bits == 128 && !(a.simhash128 == b.simhash128)) return "simhash128";
  }
  if (selection.minhash && !(a.minhash == b.minhash)) {
    return "minhash (" + std::to_string(a.minhash.values.size()) + " vs " +
           std::to_string(b.minhash.values.size()) + " values)";
  }
  if (selection.kvalue_minhash && !(a.kvalue_minhash == b.kvalue_minhash)) return "kvalue_minhash";
  if (selection.chunks && a.chunks != b.chunks) {
    return "chunks (" + std::to_string(a.chunks.size()) + " vs " + std::to_string(b.chunks.size()) +
           ")";
  }
  return "";
}

// The recipes the GPU tests cover: the presets and variants that reach every
// branch of the GPU path (each hash, seeds, 128 bits, remixed unigrams,
// sampled chunks, custom stopwords, punctuation removal with word tokens, no
// case folding) and the char preset (all on the CPU).
inline std::vector<Recipe> GpuTestRecipes() {
  std::vector<Recipe> recipes;
  for (const std::string& name : PresetNames()) recipes.push_back(PresetRecipe(name).value());
  Recipe r = PresetRecipe("default").value();
  r.name = "default-128-fnv-seed";
  r.simhash.bits = 128;
  r.hash = FeatureHashKind::kFnv1a;
  r.seed = 12345;
  r.chunks.sample_modulus = 3;
  recipes.push_back(r);
  r = PresetRecipe("paper").value();
  r.name = "paper-unigram-minhash";
  r.minhash.shingle_width = 1;
  r.chunks.shingle_width = 1;
  r.minhash.num_hashes = 64;
  recipes.push_back(r);
  r = PresetRecipe("default").value();
  r.name = "words-nopunct-stop-nofold";
  r.normalization.remove_punctuation = true;
  r.normalization.case_fold = false;
  r.stopwords = StopwordsKind::kCustom;
  r.custom_stopwords = {"The", "and", "of", "zz"};
  r.simhash.shingle_width = 2;
  r.minhash.shingle_width = 7;
  r.minhash.num_hashes = 200;
  r.seed = 99;
  recipes.push_back(r);
  return recipes;
}

inline SketchSelection AllSketches() {
  SketchSelection s;
  s.simhash = s.minhash = s.kvalue_minhash = s.chunks = true;
  return s;
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_TEST_UTIL_H_
