#include "engine/digest_fingerprinter.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hash/digest.h"
#include "sketch/digest_simhash.h"
#include "text/ascii_word_normalizer.h"
#include "text/normalizer.h"
#include "text/stopwords.h"
#include "text/tokenizer.h"

namespace neardup::internal {
namespace {

// Stopwords as the recipe's normalizer leaves them, so they compare with its
// tokens byte for byte.
Result<StopwordSet> BuildStopwords(const Recipe& recipe) {
  if (recipe.stopwords == StopwordsKind::kNone) return StopwordSet();
  if (recipe.stopwords == StopwordsKind::kEnglish) return StopwordSet::English();
  if (recipe.normalization.kind == NormalizerKind::kUnicode) {
    return StopwordSet::FromWords(recipe.custom_stopwords, recipe.normalization);
  }
  // The ASCII-word normalizer's output ([a-z0-9_ ]) is left as it is by
  // every NormalizationOptions, so FromWords' own pass changes nothing.
  std::vector<std::string> words;
  for (const std::string& word : recipe.custom_stopwords) {
    std::string normalized;
    NormalizeAsciiWord(word, &normalized, nullptr);
    words.push_back(std::move(normalized));
  }
  return StopwordSet::FromWords(std::move(words), NormalizationOptions{});
}

struct Workspace {
  std::string normalized;
  std::vector<std::string_view> tokens;
  std::string shingle;
  DigestSimHashAccumulator simhash;

  explicit Workspace(int bits) : simhash(bits) {}
};

class DigestFingerprinter final : public Fingerprinter {
 public:
  DigestFingerprinter(Recipe recipe, SketchSelection selection, Digester digester,
                      StopwordSet stopwords)
      : recipe_(std::move(recipe)),
        selection_(selection),
        digester_(digester),
        stopwords_(std::move(stopwords)),
        // Stopwords are words; a char or grapheme token is not (as in
        // text/token_hasher.h).
        filter_stopwords_(!stopwords_.empty() && (recipe_.tokenizer == TokenizerKind::kWord ||
                                                  recipe_.tokenizer == TokenizerKind::kWhitespace)),
        layout_(FingerprintBatchLayout::For(recipe_, selection_)),
        workspaces_([this] { return Workspace(recipe_.simhash.bits); }) {}

  const Recipe& recipe() const override { return recipe_; }
  const SketchSelection& selection() const override { return selection_; }

  Status Compute(std::string_view text, Fingerprint* out) const override {
    ComputeWith(text, &workspaces_.local(), out);
    return Status::Ok();
  }

  Status ComputeBatch(std::span<const std::string_view> texts,
                      std::vector<Fingerprint>* out) const override {
    out->resize(texts.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, texts.size()),
                      [&](const tbb::blocked_range<size_t>& range) {
                        Workspace& workspace = workspaces_.local();
                        for (size_t i = range.begin(); i != range.end(); ++i) {
                          ComputeWith(texts[i], &workspace, &(*out)[i]);
                        }
                      });
    return Status::Ok();
  }

  Status ComputeBatch(std::span<const std::string_view> texts,
                      FingerprintBatch* out) const override {
    out->Reset(texts.size(), layout_);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, texts.size()),
                      [&](const tbb::blocked_range<size_t>& range) {
                        Workspace& workspace = workspaces_.local();
                        for (size_t i = range.begin(); i != range.end(); ++i) {
                          const DocumentSums sums = Accumulate(texts[i], &workspace);
                          const WideSimHash wide = workspace.simhash.Finish(recipe_.simhash.tie);
                          out->mutable_num_tokens()[i] = sums.num_tokens;
                          out->mutable_invalid_utf8_sequences()[i] = sums.invalid_utf8_sequences;
                          out->mutable_simhash()[i] = wide.words[0];
                          std::copy(wide.words.begin(), wide.words.end(),
                                    out->mutable_simhash_wide().begin() + 4 * i);
                          out->mutable_num_shingles()[i] = workspace.simhash.count();
                        }
                      });
    return Status::Ok();
  }

 private:
  struct DocumentSums {
    uint64_t num_tokens = 0;
    uint64_t invalid_utf8_sequences = 0;
  };

  void ComputeWith(std::string_view text, Workspace* ws, Fingerprint* out) const {
    const DocumentSums sums = Accumulate(text, ws);
    *out = Fingerprint();
    out->num_tokens = sums.num_tokens;
    out->invalid_utf8_sequences = sums.invalid_utf8_sequences;
    out->simhash_wide = ws->simhash.Finish(recipe_.simhash.tie);
    out->num_shingles = ws->simhash.count();
    out->simhash = out->simhash_wide.words[0];
    out->simhash128 = SimHash128{out->simhash_wide.words[0], out->simhash_wide.words[1]};
  }

  // Feeds the text's shingle digests into ws->simhash (reset first).
  DocumentSums Accumulate(std::string_view text, Workspace* ws) const {
    NormalizeStats stats;
    if (recipe_.normalization.kind == NormalizerKind::kAsciiWord) {
      NormalizeAsciiWord(text, &ws->normalized, &stats);
    } else {
      Normalize(text, recipe_.normalization, &ws->normalized, &stats);
    }
    ws->tokens.clear();
    ForEachToken(recipe_.tokenizer, ws->normalized, [&](std::string_view token) {
      if (filter_stopwords_ && stopwords_.Contains(token)) return;
      ws->tokens.push_back(token);
    });

    ws->simhash.Reset();
    const size_t width = static_cast<size_t>(recipe_.simhash.shingle_width);
    const std::vector<std::string_view>& tokens = ws->tokens;
    uint8_t digest[kMaxDigestBytes];
    // The one-shot digest takes contiguous bytes, so a wider window's tokens
    // are copied into one buffer (a few bytes; the digest costs far more).
    for (size_t start = 0; start + width <= tokens.size(); ++start) {
      if (width == 1) {
        digester_.Digest(tokens[start], digest);
      } else {
        ws->shingle.clear();
        for (size_t i = start; i < start + width; ++i) ws->shingle.append(tokens[i]);
        digester_.Digest(ws->shingle, digest);
      }
      ws->simhash.Add(digest);
    }
    return DocumentSums{tokens.size(), stats.invalid_utf8_sequences};
  }

  const Recipe recipe_;
  const SketchSelection selection_;
  const Digester digester_;
  const StopwordSet stopwords_;
  const bool filter_stopwords_;
  const FingerprintBatchLayout layout_;
  mutable tbb::enumerable_thread_specific<Workspace> workspaces_;
};

}  // namespace

Result<std::unique_ptr<Fingerprinter>> CreateDigestFingerprinter(const Recipe& recipe,
                                                                 const SketchSelection& selection) {
  if (selection.minhash || selection.kvalue_minhash || selection.chunks) {
    return InvalidArgumentError("hash \"" + std::string(FeatureHashName(recipe.hash)) +
                                "\" (a digest) computes SimHash only: MinHash and chunks need a "
                                "64-bit feature hash (xxh3, sdbm or fnv1a)");
  }
  if (!selection.simhash) {
    return InvalidArgumentError("no sketch selected: ask for simhash");
  }
  NEARDUP_ASSIGN_OR_RETURN(Digester digester, Digester::Create(recipe.hash));
  NEARDUP_ASSIGN_OR_RETURN(StopwordSet stopwords, BuildStopwords(recipe));
  return std::unique_ptr<Fingerprinter>(
      new DigestFingerprinter(recipe, selection, digester, std::move(stopwords)));
}

}  // namespace neardup::internal
