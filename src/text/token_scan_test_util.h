// The differential check of the block tokenizer, shared by its tests
// (token_hasher_test.cc, non_ascii_class_test.cc): every scanner path must
// cut `text` into exactly the tokens of the reference ForEachToken.
#ifndef NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_
#define NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_path.h"
#include "text/token_scan.h"
#include "text/tokenizer.h"

namespace neardup::internal::testing {

// Asserts, for both tokenizers and every non-reference CPU path, that the
// scanner's spans (read at the smallest capacity Next accepts) equal
// ForEachToken's tokens; `what` names the input in the failure message.
inline void ExpectSameTokens(std::string_view text, const std::string& what) {
  for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace}) {
    std::vector<std::string_view> want;
    ForEachToken(kind, text, [&](std::string_view t) { want.push_back(t); });
    for (CpuPath path : SupportedCpuPaths()) {
      if (path == CpuPath::kReference) continue;
      TokenScanner scanner(kind, path, text);
      std::vector<std::string_view> got;
      TokenSpan spans[TokenScanner::kMaxTokensPerBlock];
      while (const size_t n = scanner.Next(spans, TokenScanner::kMaxTokensPerBlock)) {
        for (size_t i = 0; i < n; ++i) got.push_back(text.substr(spans[i].begin, spans[i].length));
      }
      ASSERT_EQ(got, want) << what << " " << CpuPathName(path) << " kind "
                           << static_cast<int>(kind);
    }
  }
  // Script segmentation as TokenHasher does it: only the spans of the calls
  // whose MayHoldSegmentLeads is true are cut; the result must equal the
  // reference's segments (so a false answer never hides a lead byte).
  std::vector<std::string_view> want;
  ForEachToken(TokenizerKind::kWord, ScriptSegmentation::kCharacters, text,
               [&](std::string_view t) { want.push_back(t); });
  for (CpuPath path : SupportedCpuPaths()) {
    if (path == CpuPath::kReference) continue;
    TokenScanner scanner(TokenizerKind::kWord, path, text);
    std::vector<std::string_view> got;
    TokenSpan spans[TokenScanner::kMaxTokensPerBlock];
    while (const size_t n = scanner.Next(spans, TokenScanner::kMaxTokensPerBlock)) {
      for (size_t i = 0; i < n; ++i) {
        const std::string_view token = text.substr(spans[i].begin, spans[i].length);
        if (scanner.MayHoldSegmentLeads()) {
          ForEachScriptSegment(token, [&](std::string_view t) { got.push_back(t); });
        } else {
          got.push_back(token);
        }
      }
    }
    ASSERT_EQ(got, want) << what << " " << CpuPathName(path) << " segmented";
  }
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_
