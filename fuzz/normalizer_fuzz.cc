// Fuzz target: arbitrary bytes -> Normalize under every NormalizationOptions
// combination -> ForEachToken for every TokenizerKind. Checks that the
// normalized text is valid UTF-8, that invalid input is counted (and valid
// input is not), and that every token is non-empty and lies within the
// normalized text, in order and without overlap (or is the kChar space token).
// Every CPU path this machine runs (the AVX-512 block kernel, the code point
// loop) must give the reference path's bytes and invalid count. The
// ASCII-word normalizer (digest route) must give only [a-z0-9_] and single
// spaces, and grapheme tokens must cover the text exactly.
// NormalizeKeepingRoom, into a buffer kept across inputs, must give the
// same form as a prefix followed by a zero byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hash/cpu_path.h"
#include "neardup/check.h"
#include "neardup/recipe.h"
#include "text/ascii_word_normalizer.h"
#include "text/normalizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace {

using neardup::NormalizationOptions;
using neardup::TokenizerKind;
namespace internal = neardup::internal;

void CheckTokens(TokenizerKind kind, std::string_view text) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* previous_end = begin;
  internal::ForEachToken(kind, text, [&](std::string_view token) {
    NEARDUP_CHECK(!token.empty()) << "empty token, tokenizer " << static_cast<int>(kind);
    if (kind == TokenizerKind::kChar && token.data() == internal::kCharSpaceToken.data()) {
      return;
    }
    NEARDUP_CHECK(token.data() >= previous_end && token.data() + token.size() <= end)
        << "token outside the text or out of order, tokenizer " << static_cast<int>(kind);
    previous_end = token.data() + token.size();
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool input_valid = internal::IsValidUtf8(input);
  std::string normalized;
  for (int bits = 0; bits < 8; ++bits) {
    NormalizationOptions options;
    options.nfkc = (bits & 1) != 0;
    options.case_fold = (bits & 2) != 0;
    options.remove_punctuation = (bits & 4) != 0;
    internal::NormalizeStats stats;
    internal::Normalize(input, options, &normalized, &stats);
    NEARDUP_CHECK(internal::IsValidUtf8(normalized)) << "normalized text is not valid UTF-8";
    NEARDUP_CHECK((stats.invalid_utf8_sequences == 0) == input_valid)
        << "invalid_utf8_sequences " << stats.invalid_utf8_sequences << " for input that is "
        << (input_valid ? "valid" : "invalid");
    for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace,
                               TokenizerKind::kChar, TokenizerKind::kGrapheme}) {
      CheckTokens(kind, normalized);
    }
    for (internal::CpuPath path : internal::SupportedCpuPaths()) {
      internal::NormalizeStats path_stats;
      std::string path_normalized = "left over";
      internal::Normalize(input, options, &path_normalized, &path_stats, path);
      NEARDUP_CHECK(path_normalized == normalized)
          << "path " << internal::CpuPathName(path) << " differs from the reference";
      NEARDUP_CHECK(path_stats.invalid_utf8_sequences == stats.invalid_utf8_sequences)
          << "path " << internal::CpuPathName(path) << " counts "
          << path_stats.invalid_utf8_sequences << " invalid subparts, the reference "
          << stats.invalid_utf8_sequences;
      // NormalizeKeepingRoom into one buffer reused across inputs (the
      // token hasher's way): the same form as a prefix, then a zero byte.
      static std::string room[8];
      const size_t n =
          internal::NormalizeKeepingRoom(input, options, &room[bits], &path_stats, path);
      NEARDUP_CHECK(n <= room[bits].size() && std::string_view(room[bits].data(), n) == normalized)
          << "path " << internal::CpuPathName(path) << ": NormalizeKeepingRoom differs";
      NEARDUP_CHECK(room[bits].c_str()[n] == '\0')
          << "path " << internal::CpuPathName(path) << ": no zero byte after the form";
    }
  }
  {
    internal::NormalizeStats stats;
    internal::NormalizeAsciiWord(input, &normalized, &stats);
    NEARDUP_CHECK((stats.invalid_utf8_sequences == 0) == input_valid)
        << "ascii_word: invalid_utf8_sequences " << stats.invalid_utf8_sequences;
    for (size_t i = 0; i < normalized.size(); ++i) {
      const char c = normalized[i];
      const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      NEARDUP_CHECK(word || (c == ' ' && (i == 0 || normalized[i - 1] != ' ')))
          << "ascii_word: byte " << static_cast<int>(static_cast<unsigned char>(c)) << " at " << i;
    }
  }
  // The tokenizers must also be safe on raw, possibly invalid, bytes.
  for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace, TokenizerKind::kChar,
                             TokenizerKind::kGrapheme}) {
    CheckTokens(kind, input);
  }
  size_t covered = 0;
  internal::ForEachToken(TokenizerKind::kGrapheme, input, [&](std::string_view token) {
    NEARDUP_CHECK(token.data() == input.data() + covered) << "grapheme tokens leave a gap";
    covered += token.size();
  });
  NEARDUP_CHECK(covered == input.size()) << "grapheme tokens do not cover the text";
  return 0;
}
