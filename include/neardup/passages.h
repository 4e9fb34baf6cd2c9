// Matching passages: where two texts share chunks (shingles of the recipe's
// chunk width), as runs of byte ranges in both. What `neardup query` shows
// for a match in an archive, what the HTML report highlights, and what a
// stream that keeps texts shows between a near-duplicate and its kept
// document (neardup/stream.h).
//
// How (the same code for every caller; engine/containment_passages.h): both
// texts are cut into chunk occurrences with their token and byte positions
// (exactly the chunk IDs the Fingerprinter computes for the recipe); an
// occurrence of the query pairs with an occurrence of the same chunk in the
// match; pairs are chained into runs in text order: a pair extends a run when
// it moves forward in both texts and its window overlaps or touches the run's
// last window in both (gap of at most shingle_width * (sample_modulus - 1)
// tokens, so sampled recipes still give whole passages). A passage is the
// union of its windows' byte ranges. A chunk repeated more than 64 times in
// the match pairs with its first 64 occurrences only.
//
// Cost: a position-aware chunking of both texts (a few times the
// fingerprinting cost, text/token_offsets.h) plus O(q log m) for q and m
// chunk occurrences. Thread safety: pure functions of their inputs.
#ifndef NEARDUP_PASSAGES_H_
#define NEARDUP_PASSAGES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup {

// A matching passage: bytes [query_begin, query_end) of the query text and
// bytes [match_begin, match_end) of the match's text (BYTE offsets into the
// original UTF-8, half-open; slice the original texts with them).
struct Passage {
  uint32_t query_begin = 0;
  uint32_t query_end = 0;
  uint32_t match_begin = 0;
  uint32_t match_end = 0;
  uint32_t chunks = 0;  // shared chunk occurrences merged into this passage
  friend bool operator==(const Passage&, const Passage&) = default;
};

// The passages of `query_text` found in `match_text` under `recipe`'s
// normalization, tokenizer, stopwords, hash, seed and chunk settings; every
// shared chunk counts (a collection's MatchingPassages, in
// neardup/containment_engine.h, also leaves out chunks over its boilerplate
// cap). Sorted by query_begin, then match_begin. InvalidArgument for a
// recipe whose chunk settings are out of range or a text of 4 GiB or more.
Result<std::vector<Passage>> MatchingPassages(const Recipe& recipe, std::string_view query_text,
                                              std::string_view match_text);

// The recipe whose chunks are the shingle sets that exact MinHash
// verification compares (RecipeForNearDuplicates with method minhash and
// verify_exact, neardup/near_duplicates.h): the passages of a near-duplicate
// pair, whichever method found it (SimHash keeps no positions), as the report
// and a stream show them.
Recipe NearDuplicatePassageRecipe(Recipe recipe);

}  // namespace neardup

#endif  // NEARDUP_PASSAGES_H_
