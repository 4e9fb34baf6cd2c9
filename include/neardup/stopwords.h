// Stopword lists for recipes: reading a user's file into the normalised,
// sorted, unique list a Recipe stores (Recipe::custom_stopwords).
// Thread safety: pure function.
#ifndef NEARDUP_STOPWORDS_H_
#define NEARDUP_STOPWORDS_H_

#include <string>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup {

// Reads one word per line ('#' starts a comment; blank lines are ignored),
// normalises each with `normalization`, and returns them sorted and unique.
// NotFound or IoError name the path; an empty list is InvalidArgument.
Result<std::vector<std::string>> ReadStopwordFile(const std::string& path,
                                                  const NormalizationOptions& normalization);

}  // namespace neardup

#endif  // NEARDUP_STOPWORDS_H_
