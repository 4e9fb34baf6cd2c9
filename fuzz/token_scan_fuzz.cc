// Fuzz target: arbitrary bytes -> the block tokenizer (TokenScanner, every
// supported CPU path, kWord and kWhitespace) against ForEachToken, on the raw
// bytes (invalid UTF-8 included: the AVX-512 block kernel must decline or
// agree) and on their normalized form (valid UTF-8, what the fingerprinter
// feeds it). Checks token for token equality, and for kWord the script
// segmentation of recipe version 2: cutting only the spans of the calls whose
// MayHoldSegmentLeads is true gives the reference's segmented tokens.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_path.h"
#include "neardup/check.h"
#include "neardup/recipe.h"
#include "text/normalizer.h"
#include "text/token_scan.h"
#include "text/tokenizer.h"

namespace {

using neardup::TokenizerKind;
namespace internal = neardup::internal;

void CheckScanner(std::string_view text) {
  for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace}) {
    std::vector<std::string_view> want;
    internal::ForEachToken(kind, text, [&](std::string_view t) { want.push_back(t); });
    for (internal::CpuPath path : internal::SupportedCpuPaths()) {
      if (path == internal::CpuPath::kReference) continue;
      internal::TokenScanner scanner(kind, path, text);
      internal::TokenSpan spans[internal::TokenScanner::kMaxTokensPerBlock];
      size_t next = 0;
      while (const size_t n = scanner.Next(spans, internal::TokenScanner::kMaxTokensPerBlock)) {
        for (size_t i = 0; i < n; ++i, ++next) {
          NEARDUP_CHECK(next < want.size() &&
                        text.substr(spans[i].begin, spans[i].length) == want[next])
              << "token " << next << " differs, path " << internal::CpuPathName(path)
              << ", tokenizer " << static_cast<int>(kind);
        }
      }
      NEARDUP_CHECK(next == want.size())
          << next << " tokens instead of " << want.size() << ", path "
          << internal::CpuPathName(path) << ", tokenizer " << static_cast<int>(kind);
    }
  }
  std::vector<std::string_view> want;
  internal::ForEachToken(TokenizerKind::kWord, neardup::ScriptSegmentation::kCharacters, text,
                         [&](std::string_view t) { want.push_back(t); });
  for (internal::CpuPath path : internal::SupportedCpuPaths()) {
    if (path == internal::CpuPath::kReference) continue;
    internal::TokenScanner scanner(TokenizerKind::kWord, path, text);
    internal::TokenSpan spans[internal::TokenScanner::kMaxTokensPerBlock];
    std::vector<std::string_view> got;
    while (const size_t n = scanner.Next(spans, internal::TokenScanner::kMaxTokensPerBlock)) {
      for (size_t i = 0; i < n; ++i) {
        const std::string_view token = text.substr(spans[i].begin, spans[i].length);
        if (scanner.MayHoldSegmentLeads()) {
          internal::ForEachScriptSegment(token, [&](std::string_view t) { got.push_back(t); });
        } else {
          got.push_back(token);
        }
      }
    }
    NEARDUP_CHECK(got == want) << "segmented tokens differ, path " << internal::CpuPathName(path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckScanner(input);
  neardup::NormalizationOptions options;  // nfkc and case folding
  std::string normalized;
  internal::Normalize(input, options, &normalized, nullptr);
  CheckScanner(normalized);
  return 0;
}
