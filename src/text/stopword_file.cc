// The public entry for reading a user's stopword file (neardup/stopwords.h).
#include "neardup/stopwords.h"

#include "text/stopwords.h"

namespace neardup {

Result<std::vector<std::string>> ReadStopwordFile(const std::string& path,
                                                  const NormalizationOptions& normalization) {
  NEARDUP_ASSIGN_OR_RETURN(internal::StopwordSet set,
                           internal::StopwordSet::FromFile(path, normalization));
  if (set.words().empty()) {
    return InvalidArgumentError("stopword file " + path + " holds no words");
  }
  return set.words();
}

}  // namespace neardup
