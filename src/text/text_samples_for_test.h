// Test helper: seeded random texts that exercise every normalization path
// (ASCII, NFKC expansions, case folding, combining marks that compose,
// default-ignorable characters, punctuation, non-Latin scripts, Unicode white
// space and invalid UTF-8). Deterministic for a seed. And the eight
// combinations of the normalization switches, to run each text under.
#ifndef NEARDUP_TEXT_TEXT_SAMPLES_FOR_TEST_H_
#define NEARDUP_TEXT_TEXT_SAMPLES_FOR_TEST_H_

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/recipe.h"

namespace neardup::internal {

// Every combination of nfkc, case_fold and remove_punctuation (bit 0, 1, 2 of
// the index).
inline std::vector<NormalizationOptions> AllNormalizationOptions() {
  std::vector<NormalizationOptions> all;
  for (int bits = 0; bits < 8; ++bits) {
    NormalizationOptions options;
    options.nfkc = (bits & 1) != 0;
    options.case_fold = (bits & 2) != 0;
    options.remove_punctuation = (bits & 4) != 0;
    all.push_back(options);
  }
  return all;
}

inline std::string RandomMixedText(uint32_t seed, size_t pieces) {
  static constexpr std::array<std::string_view, 34> kPieces = {
      "the",
      "Quick",
      "brown",
      "FOX",
      "jumps",
      "over",
      "lazy",
      "dog",
      "42",
      "Stra\xC3\x9F"
      "e",
      "caf\xC3\xA9",
      "cafe\xCC\x81",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
      "\xE4\xB8\xAD\xE6\x96\x87",
      "\xEF\xB7\xBA",
      "co\xC2\xADoperate",
      "\xEF\xBC\xA1\xEF\xBC\xA2",
      "\xCE\xA3\xCE\x99\xCE\xA3",
      "\xEF\xAC\x81"
      "le",
      "e\xCC\x81\xCC\xA3",
      "\xF0\x9F\x98\x80",
      "\xFF",
      "\xE2\x82",
      "\xC0\xAF",
      "don't",
      "U.S.A.",
      "\xE2\x80\x94",
      "\xC2\xAB"
      "quote"
      "\xC2\xBB",
      "a\xE2\x80\x8B"
      "b",
      "\xE3\x80\x80",
      "\xC2\xA0",
      "x\xCC\x88",
      "\xE2\x84\xAB",
      "the"};
  static constexpr std::array<std::string_view, 6> kSeparators = {" ", " ", ", ", ".\n", "\t", "-"};
  std::mt19937 rng(seed);
  std::string text;
  for (size_t i = 0; i < pieces; ++i) {
    text += kPieces[rng() % kPieces.size()];
    if (rng() % 5 != 0) text += kSeparators[rng() % kSeparators.size()];
  }
  return text;
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TEXT_SAMPLES_FOR_TEST_H_
