// The CPU Fingerprinter: one pass over the text. Tokens are hashed once; each
// sketch has its own shingle width (they may differ), fed from the same
// token-hash stream.
//
// Two implementations with identical output (hash/cpu_path.h): the reference
// path pushes each token hash through one ShingleHasher per sketch and each
// feature into the sketch; the batched path (every other CpuPath) takes the
// token hashes in batches from the block tokenizer, computes the features of
// each shingle width once per batch (ShingleBatch: Mix64 of a token shared by
// all widths, a sketch reusing another's features when their widths match)
// and hands each sketch an array (SimHash counts with AVX-512BW/AVX2).
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>

#include "engine/digest_fingerprinter.h"
#include "hash/cpu_path.h"
#include "hash/shingle_batch.h"
#include "hash/shingle_hasher.h"
#include "neardup/chunk_set.h"
#include "neardup/fingerprinter.h"
#include "text/token_hasher.h"
#include "util/mix.h"

namespace neardup {
namespace {

// sdbm and FNV-1a are in the recipe for compatibility with published SimHash
// implementations; their raw values are far from uniform (short tokens get
// small sdbm values), which would bias MinHash order statistics and chunk-id
// sampling. Unigram features of those hashes are therefore passed through the
// bijective Mix64 before MinHash and chunks. Wider shingles are already mixed
// by the shingle combiner, and SimHash keeps raw values so the paper's
// fingerprints are reproduced bit for bit.
bool NeedsRemix(const Recipe& recipe, int shingle_width) {
  return recipe.hash != FeatureHashKind::kXxh3 && shingle_width == 1;
}

// The per-thread working state: builders keep their buffers between documents.
struct Workspace {
  Workspace(const Recipe& recipe, internal::CpuPath path)
      : simhash_shingles(recipe.simhash.shingle_width, recipe.seed),
        minhash_shingles(recipe.minhash.shingle_width, recipe.seed),
        chunk_shingles(recipe.chunks.shingle_width, recipe.seed),
        simhash(recipe.simhash.bits),
        bottom_k(recipe.minhash.num_hashes),
        kvalue(recipe.minhash.num_hashes, recipe.seed),
        chunks(recipe.chunks.sample_modulus),
        shingles(recipe.seed, path) {}

  std::string normalized;
  internal::ShingleHasher simhash_shingles;
  internal::ShingleHasher minhash_shingles;
  internal::ShingleHasher chunk_shingles;
  SimHashAccumulator simhash;
  BottomKBuilder bottom_k;
  KValueBuilder kvalue;
  ChunkSetBuilder chunks;
  // The batched path's state.
  internal::ShingleBatch shingles;
  std::array<uint64_t, internal::ShingleBatch::kMaxBatch> simhash_features;
  std::array<uint64_t, internal::ShingleBatch::kMaxBatch> minhash_features;
  std::array<uint64_t, internal::ShingleBatch::kMaxBatch> chunk_features;
};

class CpuFingerprinter final : public Fingerprinter {
 public:
  CpuFingerprinter(Recipe recipe, SketchSelection selection, internal::TokenHasher token_hasher)
      : recipe_(std::move(recipe)),
        selection_(selection),
        token_hasher_(std::move(token_hasher)),
        remix_minhash_(NeedsRemix(recipe_, recipe_.minhash.shingle_width)),
        remix_chunks_(NeedsRemix(recipe_, recipe_.chunks.shingle_width)),
        unigrams_only_((!selection_.simhash || recipe_.simhash.shingle_width == 1) &&
                       (!(selection_.minhash || selection_.kvalue_minhash) ||
                        recipe_.minhash.shingle_width == 1) &&
                       (!selection_.chunks || recipe_.chunks.shingle_width == 1)),
        strict_ties_(recipe_.simhash.tie == SimHashTieRule::kZero),
        layout_(FingerprintBatchLayout::For(recipe_, selection_)),
        workspaces_([this] { return Workspace(recipe_, token_hasher_.path()); }) {}

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

  // Each block of kBlockDocuments documents is one chunk part of *out (one
  // thread writes it), so no document allocates: sketches go from the
  // workspace's builders straight into the batch's rows.
  Status ComputeBatch(std::span<const std::string_view> texts,
                      FingerprintBatch* out) const override {
    constexpr size_t kBlockDocuments = 128;
    // ResetForSetMinHash leaves the bottom-k and k-value rows unfilled:
    // ComputeInto writes every document's bottom-k row (SetMinHash) and,
    // with k-value selected, its whole k-value row and empty flag
    // (FinishInto: zeros and 1 for a document without features).
    out->ResetForSetMinHash(texts.size(), layout_);
    const size_t num_blocks = (texts.size() + kBlockDocuments - 1) / kBlockDocuments;
    if (selection_.chunks) out->StartChunks(num_blocks);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, num_blocks, 1),
                      [&](const tbb::blocked_range<size_t>& blocks) {
                        Workspace& workspace = workspaces_.local();
                        for (size_t b = blocks.begin(); b != blocks.end(); ++b) {
                          const size_t end = std::min(texts.size(), (b + 1) * kBlockDocuments);
                          for (size_t i = b * kBlockDocuments; i != end; ++i) {
                            ComputeInto(texts[i], &workspace, out, i, b);
                          }
                        }
                      });
    if (selection_.chunks) out->FinishChunks();
    return Status::Ok();
  }

 private:
  // The SimHash words of the accumulated document: the 64-bit value (or
  // the high word of 128) and the low word of 128.
  struct SimHashWords {
    uint64_t high = 0;
    uint64_t low = 0;
  };

  SimHashWords FinishSimHash(const Workspace& ws) const {
    SimHashWords words;
    if (recipe_.simhash.bits == 128) {
      const SimHash128 value = ws.simhash.Finish128();
      words = {value.high, value.low};
    } else {
      words.high = ws.simhash.Finish64();
    }
    if (strict_ties_) ClearTiedBits(ws.simhash, &words);
    return words;
  }

  // Resets the workspace's builders and feeds them the text's features.
  void Accumulate(std::string_view text, Workspace* ws, internal::TextStats* stats) const {
    ws->simhash.Reset();
    ws->bottom_k.Reset();
    // k-value MinHash is only added to when selected; its Reset fills
    // k values and k flags (1.1 KB a document at k = 128).
    if (selection_.kvalue_minhash) ws->kvalue.Reset();
    ws->chunks.Reset();
    if (token_hasher_.path() == internal::CpuPath::kReference) {
      AddFeaturesReference(text, ws, stats);
    } else {
      AddFeaturesBatched(text, ws, stats);
    }
  }

  void ComputeWith(std::string_view text, Workspace* ws, Fingerprint* out) const {
    internal::TextStats stats;
    Accumulate(text, ws, &stats);
    out->num_tokens = stats.tokens - stats.stopwords_removed;
    out->invalid_utf8_sequences = stats.invalid_utf8_sequences;
    if (selection_.simhash) {
      const SimHashWords words = FinishSimHash(*ws);
      out->simhash = words.high;
      if (recipe_.simhash.bits == 128) out->simhash128 = SimHash128{words.high, words.low};
    }
    if (selection_.minhash) ws->bottom_k.Finish(&out->minhash);
    if (selection_.kvalue_minhash) out->kvalue_minhash = ws->kvalue.Finish();
    if (selection_.chunks) out->chunks = ws->chunks.Finish();
  }

  // Document `doc` of *out, its chunks into part `part`.
  void ComputeInto(std::string_view text, Workspace* ws, FingerprintBatch* out, size_t doc,
                   size_t part) const {
    internal::TextStats stats;
    Accumulate(text, ws, &stats);
    out->mutable_num_tokens()[doc] = stats.tokens - stats.stopwords_removed;
    out->mutable_invalid_utf8_sequences()[doc] = stats.invalid_utf8_sequences;
    if (selection_.simhash) {
      const SimHashWords words = FinishSimHash(*ws);
      out->mutable_simhash()[doc] = words.high;
      if (recipe_.simhash.bits == 128) out->mutable_simhash_low()[doc] = words.low;
    }
    if (selection_.minhash) {
      // Straight into the row (one copy of the k values, not two).
      out->SetMinHash(doc, ws->bottom_k.FinishView());
    }
    if (selection_.kvalue_minhash) {
      const size_t k = out->num_hashes();
      out->mutable_kvalue_empty()[doc] =
          ws->kvalue.FinishInto(out->mutable_kvalue_minhash().subspan(doc * k, k)) ? 1 : 0;
    }
    if (selection_.chunks) out->SetChunks(part, doc, ws->chunks.FinishView());
  }

  // The strict tie rule (SimHashTieRule::kZero): a bit whose sum is 0 is 0,
  // where the accumulator's rule gave 1.
  static void ClearTiedBits(const SimHashAccumulator& simhash, SimHashWords* words) {
    std::span<const int64_t> sums = simhash.sums();
    auto cleared = [&](uint64_t word, size_t first_sum) {
      for (size_t i = 0; i < 64; ++i) {
        if (sums[first_sum + i] == 0) word &= ~(uint64_t{1} << i);
      }
      return word;
    };
    if (simhash.bits() == 128) {
      words->low = cleared(words->low, 0);
      words->high = cleared(words->high, 64);
    } else {
      words->high = cleared(words->high, 0);
    }
  }

  void AddMinHashFeatures(const uint64_t* features, size_t count, Workspace* ws) const {
    if (selection_.minhash) {
      ws->bottom_k.AddMany(std::span<const uint64_t>(features, count));
    }
    if (selection_.kvalue_minhash) {
      ws->kvalue.AddMany(std::span<const uint64_t>(features, count));
    }
  }

  void AddFeaturesBatched(std::string_view text, Workspace* ws, internal::TextStats* stats) const {
    const bool want_minhash = selection_.minhash || selection_.kvalue_minhash;
    const int simhash_width = recipe_.simhash.shingle_width;
    const int minhash_width = recipe_.minhash.shingle_width;
    const int chunk_width = recipe_.chunks.shingle_width;
    // The minhash features equal the SimHash ones when the widths match and
    // no remix applies.
    const bool minhash_reuses =
        selection_.simhash && minhash_width == simhash_width && !remix_minhash_;
    internal::ShingleBatch& shingles = ws->shingles;
    shingles.Reset();
    token_hasher_.ForEachTokenHashBatch(
        text, &ws->normalized,
        [&](std::span<const uint64_t> token_hashes) {
          // With unigrams only the features are the token hashes: no
          // ShingleBatch (whose Append mixes every token for wider windows).
          if (!unigrams_only_) shingles.Append(token_hashes);
          auto features_of = [&](int width, uint64_t* buffer) -> std::span<const uint64_t> {
            // Width 1: the features are the token hashes too (no copy).
            if (unigrams_only_ || width == 1) return token_hashes;
            return std::span<const uint64_t>(buffer, shingles.Features(width, buffer));
          };
          std::span<const uint64_t> simhash_features;
          if (selection_.simhash) {
            simhash_features = features_of(simhash_width, ws->simhash_features.data());
            ws->simhash.AddMany(simhash_features);
          }
          if (want_minhash) {
            std::span<const uint64_t> features = simhash_features;
            if (!minhash_reuses) {
              features = features_of(minhash_width, ws->minhash_features.data());
              if (remix_minhash_) {
                for (size_t i = 0; i < features.size(); ++i) {
                  ws->minhash_features[i] = internal::Mix64(features[i]);
                }
                features = std::span<const uint64_t>(ws->minhash_features.data(), features.size());
              }
            }
            AddMinHashFeatures(features.data(), features.size(), ws);
          }
          if (selection_.chunks) {
            std::span<const uint64_t> features =
                features_of(chunk_width, ws->chunk_features.data());
            if (remix_chunks_) {
              for (size_t i = 0; i < features.size(); ++i) {
                ws->chunk_features[i] = internal::Mix64(features[i]);
              }
              features = std::span<const uint64_t>(ws->chunk_features.data(), features.size());
            }
            ws->chunks.AddMany(features);
          }
        },
        stats);
    // A document shorter than a width still has one feature of that width.
    if (selection_.simhash) {
      if (std::optional<uint64_t> f = shingles.ShortDocumentFeature(simhash_width)) {
        ws->simhash.Add(*f);
      }
    }
    if (want_minhash) {
      if (std::optional<uint64_t> f = shingles.ShortDocumentFeature(minhash_width)) {
        const uint64_t feature = remix_minhash_ ? internal::Mix64(*f) : *f;
        AddMinHashFeatures(&feature, 1, ws);
      }
    }
    if (selection_.chunks) {
      if (std::optional<uint64_t> f = shingles.ShortDocumentFeature(chunk_width)) {
        ws->chunks.Add(remix_chunks_ ? internal::Mix64(*f) : *f);
      }
    }
  }

  void AddFeaturesReference(std::string_view text, Workspace* ws,
                            internal::TextStats* stats) const {
    const bool want_minhash = selection_.minhash || selection_.kvalue_minhash;

    auto add_simhash = [ws](uint64_t feature) { ws->simhash.Add(feature); };
    auto add_minhash = [this, ws](uint64_t feature) {
      if (remix_minhash_) feature = internal::Mix64(feature);
      if (selection_.minhash) ws->bottom_k.Add(feature);
      if (selection_.kvalue_minhash) ws->kvalue.Add(feature);
    };
    auto add_chunk = [this, ws](uint64_t feature) {
      ws->chunks.Add(remix_chunks_ ? internal::Mix64(feature) : feature);
    };

    token_hasher_.ForEachTokenHash(
        text, &ws->normalized,
        [&](uint64_t token_hash) {
          if (selection_.simhash) ws->simhash_shingles.Push(token_hash, add_simhash);
          if (want_minhash) ws->minhash_shingles.Push(token_hash, add_minhash);
          if (selection_.chunks) ws->chunk_shingles.Push(token_hash, add_chunk);
        },
        stats);
    // Finish also resets each window for the next document, so it runs
    // whether or not the sketch was selected.
    ws->simhash_shingles.Finish(add_simhash);
    ws->minhash_shingles.Finish(add_minhash);
    ws->chunk_shingles.Finish(add_chunk);
  }

  const Recipe recipe_;
  const SketchSelection selection_;
  const internal::TokenHasher token_hasher_;
  const bool remix_minhash_;
  const bool remix_chunks_;
  // Every selected sketch has shingle width 1 (a document then has no
  // short-document feature either: ShingleBatch::ShortDocumentFeature(1) is
  // always empty).
  const bool unigrams_only_;
  const bool strict_ties_;
  const FingerprintBatchLayout layout_;
  // Thread-local scratch; mutable because reusing buffers is not observable.
  mutable tbb::enumerable_thread_specific<Workspace> workspaces_;
};

}  // namespace

Result<std::unique_ptr<Fingerprinter>> CreateCpuFingerprinter(const Recipe& recipe,
                                                              const SketchSelection& selection) {
  NEARDUP_RETURN_IF_ERROR(ValidateRecipe(recipe));
  if (!selection.simhash && !selection.minhash && !selection.kvalue_minhash && !selection.chunks) {
    return InvalidArgumentError("no sketch selected: ask for simhash, minhash or chunks");
  }
  if (IsDigestRecipe(recipe)) return internal::CreateDigestFingerprinter(recipe, selection);
  NEARDUP_ASSIGN_OR_RETURN(internal::TokenHasher token_hasher,
                           internal::TokenHasher::Create(recipe));
  return std::unique_ptr<Fingerprinter>(
      new CpuFingerprinter(recipe, selection, std::move(token_hasher)));
}

}  // namespace neardup
