// StopwordSet: tokens to drop before hashing (frequent function words that
// carry little about a document's content). Membership is by exact bytes of
// the normalized token, so a set is built by normalizing its words with the
// recipe's NormalizationOptions.
//
// The built-in English list (English()) is frozen with kRecipeFormatVersion:
// changing it changes every fingerprint of a recipe using it. It holds only
// lower-case ASCII letters, so every NormalizationOptions leaves it unchanged.
//
// Cost: Contains is one cheap hash of the token and usually one comparison (an
// open-addressing table at most half full); tokens longer than the longest
// word are rejected before hashing. Memory: the words plus 4 bytes per slot.
// Thread safety: const methods may run concurrently.
#ifndef NEARDUP_TEXT_STOPWORDS_H_
#define NEARDUP_TEXT_STOPWORDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal {

class StopwordSet {
 public:
  // The empty set.
  StopwordSet() : StopwordSet(std::vector<std::string>()) {}

  // The built-in English list (about 170 articles, pronouns, auxiliaries,
  // prepositions, conjunctions and common adverbs).
  static StopwordSet English();

  // Normalizes each word with `options` (invalid UTF-8 repaired), drops empty
  // results, sorts and removes duplicates. A word containing a separator of
  // the recipe's tokenizer can never match a token.
  static StopwordSet FromWords(std::vector<std::string> words, const NormalizationOptions& options);

  // One word per line (surrounding white space trimmed, CR LF accepted);
  // lines that are blank or whose first non-blank character is '#' are
  // ignored. NotFound if `path` does not exist; IoError if it cannot be read.
  static Result<StopwordSet> FromFile(const std::string& path, const NormalizationOptions& options);

  bool Contains(std::string_view token) const;

  // Sorted, unique, non-empty.
  const std::vector<std::string>& words() const { return words_; }
  bool empty() const { return words_.empty(); }

 private:
  // REQUIRES: `words` sorted, unique, non-empty strings.
  explicit StopwordSet(std::vector<std::string> words);

  static constexpr uint32_t kEmptySlot = UINT32_MAX;

  std::vector<std::string> words_;
  // Open addressing with linear probing: slots_[SlotHash(w) & mask_] onwards
  // holds the index of w in words_. Invariant: at most half the slots used.
  std::vector<uint32_t> slots_;
  uint64_t mask_ = 0;
  size_t max_length_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_STOPWORDS_H_
