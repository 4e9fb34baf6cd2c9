#include "text/token_hasher.h"

#include <utility>

namespace neardup::internal {

Result<TokenHasher> TokenHasher::Create(const Recipe& recipe) {
  TokenHasher hasher;
  hasher.normalization_ = recipe.normalization;
  hasher.tokenizer_ = recipe.tokenizer;
  hasher.hash_ = recipe.hash;
  hasher.seed_ = recipe.seed;
  switch (recipe.stopwords) {
    case StopwordsKind::kNone:
      break;
    case StopwordsKind::kEnglish:
      hasher.stopwords_ = StopwordSet::English();
      break;
    case StopwordsKind::kCustom:
      if (recipe.custom_stopwords.empty()) {
        return InvalidArgumentError(
            "stopwords is \"custom\" but custom_stopwords is empty (use \"none\" for no "
            "stopwords)");
      }
      hasher.stopwords_ = StopwordSet::FromWords(recipe.custom_stopwords, recipe.normalization);
      if (hasher.stopwords_.empty()) {
        return InvalidArgumentError("custom_stopwords (" +
                                    std::to_string(recipe.custom_stopwords.size()) +
                                    " words) are all empty after normalization");
      }
      break;
  }
  // Stopwords are words; a kChar token is a code point.
  hasher.filter_stopwords_ = recipe.tokenizer != TokenizerKind::kChar && !hasher.stopwords_.empty();
  return hasher;
}

}  // namespace neardup::internal
