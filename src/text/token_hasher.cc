#include "text/token_hasher.h"

#include <utility>

#include "hash/xxh3_inline.h"
#include "text/text_kernels.h"

namespace neardup::internal {
namespace {

// The hash loop of the scanner path (never the reference path, which keeps
// StopwordSet::Contains), one instantiation per hash kind so the hash is
// inlined.
template <bool kFilter, class Hash>
size_t HashSpansWith(std::string_view text, const TokenSpan* spans, size_t num_spans,
                     const StopwordSet& stopwords, uint64_t seed, Hash hash, uint64_t* out) {
  const char* const text_end = text.data() + text.size();
  size_t n = 0;
  for (size_t i = 0; i < num_spans; ++i) {
    const std::string_view token(text.data() + spans[i].begin, spans[i].length);
    if (kFilter && stopwords.ContainsInText(token, text_end)) continue;
    out[n++] = hash(token, seed, text_end);
  }
  return n;
}

template <class Hash>
size_t HashSpansFiltered(bool filter, std::string_view text, const TokenSpan* spans,
                         size_t num_spans, const StopwordSet& stopwords, uint64_t seed, Hash hash,
                         uint64_t* out) {
  return filter ? HashSpansWith<true>(text, spans, num_spans, stopwords, seed, hash, out)
                : HashSpansWith<false>(text, spans, num_spans, stopwords, seed, hash, out);
}

}  // namespace

size_t TokenHasher::HashSpans(std::string_view normalized, const TokenSpan* spans, size_t num_spans,
                              uint64_t* out, uint64_t* tokens, uint64_t* removed) const {
  size_t n = 0;
  if (hash_ == FeatureHashKind::kXxh3 && kernels_->xxh3_spans != nullptr) {
    // Drop the stopwords first, then hash eight (AVX-512) or four (AVX2)
    // tokens per vector.
    const Xxh3SpansFn hash_spans = kernels_->xxh3_spans;
    if (filter_stopwords_) {
      const char* const text_end = normalized.data() + normalized.size();
      TokenSpan kept[kBatchCapacity];
      NEARDUP_DCHECK(num_spans <= kBatchCapacity);
      for (size_t i = 0; i < num_spans; ++i) {
        kept[n] = spans[i];
        n += !stopwords_.ContainsInText(normalized.substr(spans[i].begin, spans[i].length),
                                        text_end);
      }
      hash_spans(normalized, kept, n, seed_, out);
    } else {
      n = num_spans;
      hash_spans(normalized, spans, n, seed_, out);
    }
    *tokens += num_spans;
    *removed += num_spans - n;
    return n;
  }
  if (hash_ == FeatureHashKind::kSdbm && kernels_->sdbm_spans != nullptr &&
      (!filter_stopwords_ || stopwords_.probe_table() != nullptr)) {
    // sdbm and the stopword probe, eight tokens per vector (text/sdbm_avx512.h).
    n = kernels_->sdbm_spans(normalized, spans, num_spans, seed_,
                             filter_stopwords_ ? &stopwords_ : nullptr, out);
    *tokens += num_spans;
    *removed += num_spans - n;
    return n;
  }
  switch (hash_) {
    case FeatureHashKind::kXxh3:
      n = HashSpansFiltered(
          filter_stopwords_, normalized, spans, num_spans, stopwords_, seed_,
          [](std::string_view t, uint64_t seed, const char*) { return Xxh3HashInline(t, seed); },
          out);
      break;
    case FeatureHashKind::kSdbm:
      n = HashSpansFiltered(
          filter_stopwords_, normalized, spans, num_spans, stopwords_, seed_,
          [](std::string_view t, uint64_t seed, const char* text_end) {
            return SdbmHashInText(t, seed, text_end);
          },
          out);
      break;
    case FeatureHashKind::kFnv1a:
      n = HashSpansFiltered(
          filter_stopwords_, normalized, spans, num_spans, stopwords_, seed_,
          [](std::string_view t, uint64_t seed, const char*) { return Fnv1aHash(t, seed); }, out);
      break;
    case FeatureHashKind::kMd5:
    case FeatureHashKind::kSha1:
    case FeatureHashKind::kSha256:
      NEARDUP_CHECK(false) << "TokenHasher::Create rejects digest hashes";
      break;
  }
  *tokens += num_spans;
  *removed += num_spans - n;
  return n;
}

std::vector<uint64_t>& ThreadTokenBitWords() {
  thread_local std::vector<uint64_t> words;
  return words;
}

Result<TokenHasher> TokenHasher::Create(const Recipe& recipe) {
  return Create(recipe, DetectCpuPath());
}

Result<TokenHasher> TokenHasher::Create(const Recipe& recipe, CpuPath path) {
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  // (text/ does not link recipe/, so IsDigestRecipe is spelled out.)
  if (recipe.hash == FeatureHashKind::kMd5 || recipe.hash == FeatureHashKind::kSha1 ||
      recipe.hash == FeatureHashKind::kSha256 || recipe.tokenizer == TokenizerKind::kGrapheme ||
      recipe.normalization.kind != NormalizerKind::kUnicode) {
    return InvalidArgumentError(
        "digest hashes, grapheme tokens and the ascii_word normalizer take the digest route "
        "(engine/digest_fingerprinter.h), not 64-bit token hashes");
  }
  TokenHasher hasher;
  hasher.path_ = path;
  hasher.kernels_ = &TextKernelsFor(path);
  hasher.normalization_ = recipe.normalization;
  hasher.tokenizer_ = recipe.tokenizer;
  hasher.segmentation_ =
      recipe.tokenizer == TokenizerKind::kWord ? recipe.segment_scripts : ScriptSegmentation::kNone;
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
  const bool bits_kernel =
      (hasher.kernels_->ascii_normalizer_avx512 && hasher.kernels_->compress_tokens) ||
      hasher.kernels_->ascii_copy_avx512bw;
  hasher.form_token_bits_ =
      hasher.UsesScanner() && bits_kernel && !recipe.normalization.remove_punctuation;
  return hasher;
}

}  // namespace neardup::internal
