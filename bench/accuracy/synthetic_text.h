// Seeded synthetic near-duplicates of real text, shared by the accuracy
// harness (bench/accuracy/accuracy_harness.cc) and near_duplicates_bench.
//
// A copy is made by walking the source's white-space-separated words and, at
// each word with probability `rate`, applying one edit chosen uniformly among
// deletion (the word is dropped), insertion (a vocabulary word is written
// before it) and substitution (a vocabulary word replaces it). Words of the
// copy are joined by single spaces. The rate is nominal: the word tokenizer of
// a recipe may split one white-space word into several tokens (punctuation),
// which is why the ground truth is always measured on the texts themselves.
// Deterministic: a SplitMix64 stream (src/util/mix.h), never the clock.
#ifndef NEARDUP_BENCH_ACCURACY_SYNTHETIC_TEXT_H_
#define NEARDUP_BENCH_ACCURACY_SYNTHETIC_TEXT_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/document_reader.h"
#include "neardup/status.h"
#include "util/mix.h"

namespace neardup::accuracy {

// A uniform double in [0, 1) from the top 53 bits of the next value.
inline double Uniform01(internal::SplitMix64& rng) {
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
}

// A uniform integer in [0, bound). REQUIRES: bound > 0. The modulo bias is
// below 2^-40 for the bounds used here (< 2^24).
inline uint64_t UniformBelow(internal::SplitMix64& rng, uint64_t bound) {
  return rng.Next() % bound;
}

inline bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'; }

// The white-space-separated words of `text`, as views into it.
inline std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// An edited copy of `words` (see the file comment).
// REQUIRES: !vocabulary.empty(), 0 <= rate <= 1.
inline std::string EditWords(std::span<const std::string_view> words, double rate,
                             std::span<const std::string_view> vocabulary,
                             internal::SplitMix64& rng) {
  std::string out;
  auto append = [&out](std::string_view word) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  };
  for (std::string_view word : words) {
    if (Uniform01(rng) >= rate) {
      append(word);
      continue;
    }
    switch (rng.Next() % 3) {
      case 0:  // deletion
        break;
      case 1:  // insertion
        append(vocabulary[UniformBelow(rng, vocabulary.size())]);
        append(word);
        break;
      default:  // substitution
        append(vocabulary[UniformBelow(rng, vocabulary.size())]);
        break;
    }
  }
  return out;
}

struct LoadedCorpus {
  std::vector<std::string> ids;
  std::vector<std::string> texts;
};

// Every document of one JSONL file, in file order; exits with a message
// naming the file and scripts/fetch_corpora.sh when it cannot be read.
inline LoadedCorpus LoadJsonlOrDie(const std::string& path) {
  LoadedCorpus corpus;
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) {
    std::fprintf(stderr, "%s (run scripts/fetch_corpora.sh)\n", reader.status().ToString().c_str());
    std::exit(1);
  }
  Document doc;
  while (true) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), next.status().ToString().c_str());
      std::exit(1);
    }
    if (!*next) break;
    corpus.ids.push_back(std::move(doc.id));
    corpus.texts.push_back(std::move(doc.text));
  }
  return corpus;
}

}  // namespace neardup::accuracy

#endif  // NEARDUP_BENCH_ACCURACY_SYNTHETIC_TEXT_H_
