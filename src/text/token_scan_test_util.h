// The differential check of the block tokenizer, shared by its tests
// (token_hasher_test.cc, non_ascii_class_test.cc): every scanner path must
// cut `text` into exactly the tokens of the reference ForEachToken. Also
// the text kernels for AVX-512 without VBMI on any AVX-512 CPU (tests of
// the normalizer's BW ASCII copy).
#ifndef NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_
#define NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"
#include "text/text_kernels.h"
#include "text/token_scan.h"
#include "text/tokenizer.h"

namespace neardup::internal::testing {

// The token bits of an ASCII text as FormTokenBits (text/normalizer.h)
// defines them, one byte at a time: text.size() / 64 + 1 words.
inline std::vector<uint64_t> ScalarTokenBits(TokenizerKind kind, std::string_view text) {
  std::vector<uint64_t> words(text.size() / 64 + 1, 0);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool token = kind == TokenizerKind::kWord
                           ? ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9')
                           : !(c == ' ' || (c >= 9 && c <= 13));
    words[i / 64] |= static_cast<uint64_t>(token) << (i % 64);
  }
  return words;
}

// The avx512 path's text kernels for CPUs without VBMI and VBMI2 (the BW
// ASCII copy, ascii_copy_avx512bw), runnable on this CPU whether it has
// VBMI or not (its own table picks them only where it has not): the
// host's AVX-512 features without the VBMI pair. nullopt where the CPU
// lacks the avx512 path.
inline std::optional<TextKernels> Avx512BwTextKernels() {
  if (!CpuSupports(CpuPath::kAvx512)) return std::nullopt;
  CpuFeatures features = FeaturesAt(CpuPath::kAvx512);
  features.avx512vbmi = false;
  features.avx512vbmi2 = false;
  return ChooseTextKernels(CpuPath::kAvx512, features);
}

// The scanners ExpectSameTokens runs: every non-reference CPU path as
// chosen, and on the avx512 path also the kernels for CPUs without VBMI2
// (TokenScanner::UseAvx512BwForTesting), so that a CPU with VBMI2 runs
// them too ("avx512bw" in the failure message).
struct ScannerPathForTest {
  CpuPath path;
  bool force_avx512bw;
};
inline std::vector<ScannerPathForTest> ScannerPathsForTest() {
  std::vector<ScannerPathForTest> paths;
  for (CpuPath path : SupportedCpuPaths()) {
    if (path == CpuPath::kReference) continue;
    paths.push_back({path, false});
    if (path == CpuPath::kAvx512) paths.push_back({path, true});
  }
  return paths;
}
inline std::string_view ScannerPathName(const ScannerPathForTest& p) {
  return p.force_avx512bw ? std::string_view("avx512bw") : CpuPathName(p.path);
}

// Asserts, for both tokenizers and every scanner path (above), that the
// scanner's spans (read at the smallest capacity Next accepts) equal
// ForEachToken's tokens; `what` names the input in the failure message.
// For an ASCII text, the scanner given the text's token bits too.
inline void ExpectSameTokens(std::string_view text, const std::string& what) {
  bool ascii = true;
  for (char c : text) ascii &= static_cast<unsigned char>(c) < 0x80;
  const std::vector<ScannerPathForTest> paths = ScannerPathsForTest();
  for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace}) {
    std::vector<std::string_view> want;
    ForEachToken(kind, text, [&](std::string_view t) { want.push_back(t); });
    const std::vector<uint64_t> bits =
        ascii ? ScalarTokenBits(kind, text) : std::vector<uint64_t>();
    for (const ScannerPathForTest& p : paths) {
      const CpuPath path = p.path;
      for (bool with_bits : {false, true}) {
        if (with_bits && !ascii) continue;
        TokenScanner scanner = with_bits ? TokenScanner(kind, path, text, bits.data())
                                         : TokenScanner(kind, path, text);
        if (p.force_avx512bw) scanner.UseAvx512BwForTesting();
        std::vector<std::string_view> got;
        TokenSpan spans[TokenScanner::kMaxTokensPerBlock];
        while (const size_t n = scanner.Next(spans, TokenScanner::kMaxTokensPerBlock)) {
          for (size_t i = 0; i < n; ++i) {
            got.push_back(text.substr(spans[i].begin, spans[i].length));
          }
          if (with_bits) {
            ASSERT_FALSE(scanner.MayHoldSegmentLeads());
          }
        }
        ASSERT_EQ(got, want) << what << " " << ScannerPathName(p) << " kind "
                             << static_cast<int>(kind) << (with_bits ? " token bits" : "");
      }
    }
  }
  // Script segmentation as TokenHasher does it: only the spans of the calls
  // whose MayHoldSegmentLeads is true are cut; the result must equal the
  // reference's segments (so a false answer never hides a lead byte).
  std::vector<std::string_view> want;
  ForEachToken(TokenizerKind::kWord, ScriptSegmentation::kCharacters, text,
               [&](std::string_view t) { want.push_back(t); });
  for (const ScannerPathForTest& p : paths) {
    TokenScanner scanner(TokenizerKind::kWord, p.path, text);
    if (p.force_avx512bw) scanner.UseAvx512BwForTesting();
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
    ASSERT_EQ(got, want) << what << " " << ScannerPathName(p) << " segmented";
  }
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_TEXT_TOKEN_SCAN_TEST_UTIL_H_
