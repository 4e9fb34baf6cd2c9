// TokenHasher: the text stages of a recipe up to token hashes:
//   normalize -> tokenize -> stopword filter -> feature hash of each token.
// Shingling (hash/shingle_hasher.h) and sketches come after it.
//
// Stopwords are filtered for kWord and kWhitespace tokens only; with kChar
// the recipe's stopwords are ignored (a code point is not a word).
// Frozen with kRecipeFormatVersion: the hashes for a recipe never change.
//
// Two implementations with identical output (hash/cpu_path.h): the reference
// (ForEachToken and one hash call per token) and, for kWord and kWhitespace,
// the block scanner (text/token_scan.h) feeding a hash loop over token spans.
// The path is chosen at Create; kChar always takes the reference. Script
// segmentation (text/script_segments.h) is the same code on both: the
// reference cuts each word token, the scanner path cuts the spans of the
// batches whose blocks hold a segment lead byte (so ASCII, Latin and Cyrillic
// text never look).
//
// Cost: O(bytes) per text; no allocation per token (tokens are views into
// the caller's scratch string). Thread safety: const; ForEachTokenHash may
// run concurrently on one TokenHasher, each caller with its own scratch.
#ifndef NEARDUP_TEXT_TOKEN_HASHER_H_
#define NEARDUP_TEXT_TOKEN_HASHER_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_path.h"
#include "hash/feature_hash.h"
#include "neardup/recipe.h"
#include "neardup/status.h"
#include "text/normalizer.h"
#include "text/stopwords.h"
#include "text/text_kernels.h"
#include "text/token_scan.h"
#include "text/tokenizer.h"

namespace neardup::internal {

// sdbm is h = h * kSdbmMultiplier + c per byte (c + (h << 6) + (h << 16) - h),
// so for a token of n bytes h = seed * P^n + sum_i c_i * P^(n-1-i) mod 2^64.
inline constexpr uint64_t kSdbmMultiplier = 65599;

// kSdbmPowers[n][i] = P^(n-1-i) for i < n, 0 for i >= n (masks the bytes
// past the token), and kSdbmPowers[n][8] = P^n (the seed's factor).
// Rows 0..8: tokens of up to 8 bytes.
constexpr std::array<std::array<uint64_t, 9>, 9> MakeSdbmPowers() {
  std::array<std::array<uint64_t, 9>, 9> t{};
  for (size_t n = 0; n <= 8; ++n) {
    uint64_t p = 1;
    for (size_t i = n; i-- > 0;) {
      t[n][i] = p;
      p *= kSdbmMultiplier;
    }
    t[n][8] = p;
  }
  return t;
}
inline constexpr std::array<std::array<uint64_t, 9>, 9> kSdbmPowers = MakeSdbmPowers();

// SdbmHash(token, seed) without the byte loop for tokens of up to 8 bytes
// with 8 readable bytes from token.data(): eight independent multiplies
// instead of a loop whose exit depends on the token's length (a branch
// mispredicted on most tokens of running text). Longer tokens, and tokens
// near the text's end, take SdbmHash.
inline uint64_t SdbmHashInText(std::string_view token, uint64_t seed, const char* text_end) {
  const size_t n = token.size();
  if (n > 8 || text_end - token.data() < 8) return SdbmHash(token, seed);
  uint64_t w;
  std::memcpy(&w, token.data(), 8);
  const std::array<uint64_t, 9>& p = kSdbmPowers[n];
  uint64_t h = seed * p[8];
  for (size_t i = 0; i < 8; ++i) h += ((w >> (8 * i)) & 0xFF) * p[i];
  return h;
}

// This thread's room for TokenHasher's FormTokenBits words, kept between
// texts (not after a text of over 64 MiB). ForEachTokenHashBatch takes the
// words out for its call and puts them back at its end, so an on_batch that
// hashes another text on this thread uses room of its own.
std::vector<uint64_t>& ThreadTokenBitWords();
inline constexpr size_t kMaxRetainedTokenBitWords = (size_t{64} << 20) / 64;  // 64 MiB of text

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
  // The path is DetectCpuPath().
  static Result<TokenHasher> Create(const Recipe& recipe);
  // REQUIRES: CpuSupports(path).
  static Result<TokenHasher> Create(const Recipe& recipe, CpuPath path);

  // The most token hashes passed to one on_batch call.
  static constexpr size_t kBatchCapacity = 256;

  // Calls on_hash(uint64_t) for each surviving token of `text`, in order.
  // *scratch receives the normalized text (its capacity is reused). `stats`
  // may be null.
  template <class OnHash>
  void ForEachTokenHash(std::string_view text, std::string* scratch, OnHash&& on_hash,
                        TextStats* stats) const;

  // The same hashes as ForEachTokenHash, passed in order as
  // on_batch(std::span<const uint64_t>) calls of 1 to kBatchCapacity hashes.
  // Returns the normalized text's size n: it is (*scratch)[0, n), and
  // *scratch keeps its room for the next text (NormalizeKeepingRoom).
  template <class OnBatch>
  size_t ForEachTokenHashBatch(std::string_view text, std::string* scratch, OnBatch&& on_batch,
                               TextStats* stats) const;

  CpuPath path() const { return path_; }

  // Whether the scanner takes the normalizer's token bits for all-ASCII
  // texts (FormTokenBits; tests check that the bits path is taken).
  bool uses_form_token_bits() const { return form_token_bits_; }

  // The stopwords in force (empty for kNone and for kChar tokens).
  const StopwordSet* stopwords() const { return filter_stopwords_ ? &stopwords_ : nullptr; }

 private:
  TokenHasher() = default;

  template <class Hash, class OnHash>
  void Run(std::string_view normalized, Hash hash, OnHash& on_hash, TextStats* stats) const;

  // The reference path after normalization.
  template <class OnHash>
  void RunReference(std::string_view normalized, OnHash& on_hash, TextStats* stats) const;

  // Whether the block scanner handles this recipe.
  bool UsesScanner() const {
    return path_ != CpuPath::kReference && tokenizer_ != TokenizerKind::kChar;
  }

  // Hashes the tokens spans[0, num_spans) of `normalized` that are not
  // stopwords into out[], returning their number; counts into *tokens and
  // *removed.
  size_t HashSpans(std::string_view normalized, const TokenSpan* spans, size_t num_spans,
                   uint64_t* out, uint64_t* tokens, uint64_t* removed) const;

  // HashSpans over the segments (ForEachScriptSegment) of spans[0,
  // num_spans), passed to on_batch in batches of up to kBatchCapacity.
  template <class OnBatch>
  void HashSegmentedSpans(std::string_view normalized, const TokenSpan* spans, size_t num_spans,
                          uint64_t* hashes, uint64_t* tokens, uint64_t* removed,
                          OnBatch& on_batch) const;

  CpuPath path_ = CpuPath::kReference;
  const TextKernels* kernels_ = nullptr;  // TextKernelsFor(path_)
  // The scanner takes the normalizer's token bits for all-ASCII texts
  // (FormTokenBits: the AVX-512 ASCII copy, VBMI's with span emission by
  // VBMI2 or BW's; no remove_punctuation).
  bool form_token_bits_ = false;
  NormalizationOptions normalization_;
  TokenizerKind tokenizer_ = TokenizerKind::kWord;
  ScriptSegmentation segmentation_ = ScriptSegmentation::kNone;  // kNone unless kWord
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
    ForEachToken(tokenizer_, segmentation_, normalized, [&](std::string_view token) {
      ++tokens;
      if (stopwords_.Contains(token)) {
        ++removed;
        return;
      }
      on_hash(hash(token, seed_));
    });
  } else {
    ForEachToken(tokenizer_, segmentation_, normalized, [&](std::string_view token) {
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
void TokenHasher::RunReference(std::string_view normalized, OnHash& on_hash,
                               TextStats* stats) const {
  // One switch per text, not per token.
  switch (hash_) {
    case FeatureHashKind::kXxh3:
      Run(
          normalized, [](std::string_view t, uint64_t seed) { return Xxh3Hash(t, seed); }, on_hash,
          stats);
      return;
    case FeatureHashKind::kSdbm:
      Run(
          normalized, [](std::string_view t, uint64_t seed) { return SdbmHash(t, seed); }, on_hash,
          stats);
      return;
    case FeatureHashKind::kFnv1a:
      Run(
          normalized, [](std::string_view t, uint64_t seed) { return Fnv1aHash(t, seed); }, on_hash,
          stats);
      return;
    case FeatureHashKind::kMd5:
    case FeatureHashKind::kSha1:
    case FeatureHashKind::kSha256:
      break;  // rejected by Create
  }
  NEARDUP_CHECK(false) << "unknown FeatureHashKind " << static_cast<int>(hash_);
}

template <class OnBatch>
void TokenHasher::HashSegmentedSpans(std::string_view normalized, const TokenSpan* spans,
                                     size_t num_spans, uint64_t* hashes, uint64_t* tokens,
                                     uint64_t* removed, OnBatch& on_batch) const {
  TokenSpan segments[kBatchCapacity];
  size_t num_segments = 0;
  auto flush = [&] {
    const size_t n = HashSpans(normalized, segments, num_segments, hashes, tokens, removed);
    if (n > 0) on_batch(std::span<const uint64_t>(hashes, n));
    num_segments = 0;
  };
  for (size_t i = 0; i < num_spans; ++i) {
    // Not substr: its bounds check kept it out of line in this loop.
    const std::string_view token(normalized.data() + spans[i].begin, spans[i].length);
    ForEachScriptSegment(token, [&](std::string_view segment) {
      segments[num_segments++] =
          TokenSpan{static_cast<size_t>(segment.data() - normalized.data()), segment.size()};
      if (num_segments == kBatchCapacity) flush();
    });
  }
  if (num_segments > 0) flush();
}

template <class OnBatch>
size_t TokenHasher::ForEachTokenHashBatch(std::string_view text, std::string* scratch,
                                          OnBatch&& on_batch, TextStats* stats) const {
  NormalizeStats normalize_stats;
  // The thread's words, taken out for this call (ThreadTokenBitWords).
  std::vector<uint64_t>* const room = form_token_bits_ ? &ThreadTokenBitWords() : nullptr;
  FormTokenBits form_bits;
  FormTokenBits* const bits = room != nullptr ? &form_bits : nullptr;
  if (bits != nullptr) bits->words.swap(*room);
  // The size first: the order of a call's arguments is unspecified, and
  // NormalizeKeepingRoom may reallocate *scratch, so data() is read after it.
  if (bits != nullptr) bits->kind = tokenizer_;
  const size_t normalized_size =
      NormalizeKeepingRoom(text, normalization_, scratch, &normalize_stats, path_, bits);
  const std::string_view normalized(scratch->data(), normalized_size);
  if (stats != nullptr) {
    stats->bytes += text.size();
    stats->invalid_utf8_sequences += normalize_stats.invalid_utf8_sequences;
  }
  uint64_t hashes[kBatchCapacity];
  if (!UsesScanner()) {
    size_t n = 0;
    auto on_hash = [&](uint64_t hash) {
      hashes[n++] = hash;
      if (n == kBatchCapacity) {
        on_batch(std::span<const uint64_t>(hashes, n));
        n = 0;
      }
    };
    RunReference(normalized, on_hash, stats);
    if (n > 0) on_batch(std::span<const uint64_t>(hashes, n));
    return normalized.size();
  }
  TokenScanner scanner = bits != nullptr && bits->valid
                             ? TokenScanner(tokenizer_, path_, normalized, bits->words.data())
                             : TokenScanner(tokenizer_, path_, normalized);
  TokenSpan spans[kBatchCapacity];
  uint64_t tokens = 0;
  uint64_t removed = 0;
  const bool segment = segmentation_ == ScriptSegmentation::kCharacters;
  while (const size_t num_spans = scanner.Next(spans, kBatchCapacity)) {
    if (segment && scanner.MayHoldSegmentLeads()) {
      HashSegmentedSpans(normalized, spans, num_spans, hashes, &tokens, &removed, on_batch);
      continue;
    }
    const size_t n = HashSpans(normalized, spans, num_spans, hashes, &tokens, &removed);
    if (n > 0) on_batch(std::span<const uint64_t>(hashes, n));
  }
  if (stats != nullptr) {
    stats->tokens += tokens;
    stats->stopwords_removed += removed;
  }
  // Back into the thread's room (a nested call's words there are released
  // with form_bits), unless a text of over 64 MiB made them large.
  if (bits != nullptr && bits->words.size() <= kMaxRetainedTokenBitWords) {
    bits->words.swap(*room);
  }
  return normalized.size();
}

template <class OnHash>
void TokenHasher::ForEachTokenHash(std::string_view text, std::string* scratch, OnHash&& on_hash,
                                   TextStats* stats) const {
  if (UsesScanner()) {
    const size_t normalized_size = ForEachTokenHashBatch(
        text, scratch,
        [&](std::span<const uint64_t> hashes) {
          for (uint64_t hash : hashes) on_hash(hash);
        },
        stats);
    scratch->resize(normalized_size);  // shrinks: no fill
    return;
  }
  NormalizeStats normalize_stats;
  Normalize(text, normalization_, scratch, &normalize_stats);
  if (stats != nullptr) {
    stats->bytes += text.size();
    stats->invalid_utf8_sequences += normalize_stats.invalid_utf8_sequences;
  }
  RunReference(*scratch, on_hash, stats);
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_HASHER_H_
