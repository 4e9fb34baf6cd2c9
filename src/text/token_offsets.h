// Token offsets: the recipe's text stages (normalize -> tokenize -> stopword
// filter -> feature hash) with, for each surviving token, the byte range of
// the ORIGINAL text it came from. Used to show matching passages: a user
// slices the original UTF-8 with these offsets.
//
// Offsets are BYTE offsets into the original text, half-open [begin, end).
// Normalization changes lengths (NFKC, case folding, dropped punctuation and
// ignorable characters, U+FFFD for invalid bytes), so each normalized byte
// carries the original range it was produced from. The mapping is exact per
// ASCII byte, and per code point where normalizing the code points of a
// non-ASCII run one by one gives the same bytes as normalizing the run;
// otherwise (a base letter with combining marks that compose, for example)
// the whole run (with the ASCII character before it) is the unit: offsets
// may widen to that run, never cut inside a code point.
// Exactness: the pieces are the ones Normalize itself splits at (see
// text/normalizer.h), and NormalizeWithOffsets checks that their
// concatenation equals Normalize(text); tokens are then cut and hashed by the
// same tokenizer, stopword set and feature hash as TokenHasher
// (token_offsets_test.cc compares the hash sequences; chunk_spans_test.cc
// compares chunk sets with the Fingerprinter).
//
// Cost: O(bytes) plus one Normalize call per non-ASCII code point (several
// times slower than TokenHasher: meant for the few texts whose passages are
// shown). Memory: 8 bytes per normalized byte. Texts are limited to
// 4 GiB - 1 bytes. Thread safety: pure functions; a TokenSpanner is const
// after Create and may be shared.
#ifndef NEARDUP_TEXT_TOKEN_OFFSETS_H_
#define NEARDUP_TEXT_TOKEN_OFFSETS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"
#include "text/token_hasher.h"

namespace neardup::internal {

// Normalized text plus, for normalized byte i, the original byte range
// [source_begin[i], source_end[i]) that produced it.
// Invariant: text == Normalize(original); both vectors have text.size()
// entries; source_begin is non-decreasing.
struct NormalizedText {
  std::string text;
  std::vector<uint32_t> source_begin;
  std::vector<uint32_t> source_end;
};

// InvalidArgument when text.size() >= 2^32 - 1; Internal when the piecewise
// normalization does not equal Normalize(text) (a bug; never silently wrong
// offsets).
Status NormalizeWithOffsets(std::string_view text, const NormalizationOptions& options,
                            NormalizedText* out);

// A surviving token: its feature hash (as TokenHasher gives it) and its
// range in the original text. A kChar white-space token has the empty range
// at the end of the token before it.
struct SourceTokenSpan {
  uint64_t hash = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
};

class TokenSpanner {
 public:
  // Uses the recipe's normalization, tokenizer, stopwords, hash and seed.
  // The errors of TokenHasher::Create.
  static Result<TokenSpanner> Create(const Recipe& recipe);

  // The surviving tokens of `text`, in order (the sequence TokenHasher's
  // ForEachTokenHash calls on_hash with). Errors of NormalizeWithOffsets.
  Result<std::vector<SourceTokenSpan>> Tokens(std::string_view text) const;

 private:
  TokenSpanner(const Recipe& recipe, TokenHasher hasher)
      : normalization_(recipe.normalization),
        tokenizer_(recipe.tokenizer),
        segmentation_(recipe.segment_scripts),
        hash_(recipe.hash),
        seed_(recipe.seed),
        hasher_(std::move(hasher)) {}

  NormalizationOptions normalization_;
  TokenizerKind tokenizer_;
  ScriptSegmentation segmentation_;
  FeatureHashKind hash_;
  uint64_t seed_;
  TokenHasher hasher_;  // for its stopword set (the same filter)
};

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_OFFSETS_H_
