// TokenHasher: the text stages of a recipe up to token hashes:
//   normalize -> tokenize -> stopword filter -> feature hash of each token.
// Shingling (hash/shingle_hasher.h) and sketches come after it.
//
// Stopwords are filtered for kWord and kWhitespace tokens only; with kChar
// the recipe's stopwords are ignored (a code point is not a word).
// Frozen with kRecipeFormatVersion: the hashes for a recipe never change.
//
// Cost: O(bytes) per text; no allocation per token (tokens are views into
// the caller's scratch string). Thread safety: const; ForEachTokenHash may
// run concurrently on one TokenHasher, each caller with its own scratch.
#ifndef NEARDUP_TEXT_TOKEN_HASHER_H_
#define NEARDUP_TEXT_TOKEN_HASHER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hash/feature_hash.h"
#include "neardup/recipe.h"
#include "neardup/status.h"
#include "text/normalizer.h"
#include "text/stopwords.h"
#include "text/tokenizer.h"

namespace neardup::internal {

// Counters added to (never reset) by ForEachTokenHash.
struct TextStats {
  uint64_t bytes = 0;                   // input bytes
  uint64_t invalid_utf8_sequences = 0;  // replaced by U+FFFD
  uint64_t tokens = 0;                  // produced by the tokenizer, before filtering
  uint64_t stopwords_removed = 0;       // tokens dropped as stopwords
};

class TokenHasher {
 public:
  // Uses recipe.normalization, tokenizer, stopwords (with custom_stopwords),
  // hash and seed. InvalidArgument if stopwords == kCustom and
  // custom_stopwords is empty (or normalizes to nothing).
  static Result<TokenHasher> Create(const Recipe& recipe);

  // Calls on_hash(uint64_t) for each surviving token of `text`, in order.
  // *scratch receives the normalized text (its capacity is reused). `stats`
  // may be null.
  template <class OnHash>
  void ForEachTokenHash(std::string_view text, std::string* scratch, OnHash&& on_hash,
                        TextStats* stats) const;

  // The stopwords in force (empty for kNone and for kChar tokens).
  const StopwordSet* stopwords() const { return filter_stopwords_ ? &stopwords_ : nullptr; }

 private:
  TokenHasher() = default;

  template <class Hash, class OnHash>
  void Run(std::string_view normalized, Hash hash, OnHash& on_hash, TextStats* stats) const;

  NormalizationOptions normalization_;
  TokenizerKind tokenizer_ = TokenizerKind::kWord;
  FeatureHashKind hash_ = FeatureHashKind::kXxh3;
  uint64_t seed_ = 0;
  bool filter_stopwords_ = false;
  StopwordSet stopwords_;
};

template <class Hash, class OnHash>
void TokenHasher::Run(std::string_view normalized, Hash hash, OnHash& on_hash,
                      TextStats* stats) const {
  uint64_t tokens = 0;
  uint64_t removed = 0;
  if (filter_stopwords_) {
    ForEachToken(tokenizer_, normalized, [&](std::string_view token) {
      ++tokens;
      if (stopwords_.Contains(token)) {
        ++removed;
        return;
      }
      on_hash(hash(token, seed_));
    });
  } else {
    ForEachToken(tokenizer_, normalized, [&](std::string_view token) {
      ++tokens;
      on_hash(hash(token, seed_));
    });
  }
  if (stats != nullptr) {
    stats->tokens += tokens;
    stats->stopwords_removed += removed;
  }
}

template <class OnHash>
void TokenHasher::ForEachTokenHash(std::string_view text, std::string* scratch, OnHash&& on_hash,
                                   TextStats* stats) const {
  NormalizeStats normalize_stats;
  Normalize(text, normalization_, scratch, &normalize_stats);
  if (stats != nullptr) {
    stats->bytes += text.size();
    stats->invalid_utf8_sequences += normalize_stats.invalid_utf8_sequences;
  }
  // One switch per text, not per token.
  switch (hash_) {
    case FeatureHashKind::kXxh3:
      Run(
          *scratch, [](std::string_view t, uint64_t seed) { return Xxh3Hash(t, seed); }, on_hash,
          stats);
      return;
    case FeatureHashKind::kSdbm:
      Run(
          *scratch, [](std::string_view t, uint64_t seed) { return SdbmHash(t, seed); }, on_hash,
          stats);
      return;
    case FeatureHashKind::kFnv1a:
      Run(
          *scratch, [](std::string_view t, uint64_t seed) { return Fnv1aHash(t, seed); }, on_hash,
          stats);
      return;
  }
  NEARDUP_CHECK(false) << "unknown FeatureHashKind " << static_cast<int>(hash_);
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_HASHER_H_
