// The flat fingerprint batch against the per-document path: for every
// recipe family (feature hashes, 128 bits, strict ties, remixed unigrams,
// sampled chunks, char tokens, the digest route) and every sketch
// selection, ComputeBatch into a FingerprintBatch gives, document by
// document, exactly the Fingerprint that Compute gives; a batch reused for
// calls of other sizes and layouts holds only the last call's values; the
// fingerprint input lays texts back to back and submits them. (The golden
// vectors through the flat path: tests/golden_test.cc.)
#include "neardup/fingerprint_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "neardup/fingerprint_input.h"
#include "neardup/fingerprinter.h"
#include "util/mix.h"

namespace neardup {
namespace {

// A seeded corpus: words, punctuation, stopwords, repeated words (bottom-k
// rows shorter than k), UTF-8 in several scripts, invalid bytes, empty and
// one-word documents.
std::vector<std::string> SeededCorpus(uint64_t seed, size_t num_docs) {
  internal::SplitMix64 rng(seed);
  static const char* const kPieces[] = {"the",
                                        "The",
                                        "of",
                                        "and",
                                        "quick",
                                        "brown",
                                        "fox",
                                        "caf\xc3\xa9",
                                        "na\xc3\xafve",
                                        "\xce\xb1\xce\xb2\xce\xb3",
                                        "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf",
                                        "bad\xff",
                                        "x",
                                        "123",
                                        "dog.",
                                        "lazy,",
                                        "\xef\xac\x81nance",
                                        "sun!",
                                        "word"};
  std::vector<std::string> docs;
  for (size_t d = 0; d < num_docs; ++d) {
    std::string text;
    const size_t words = d % 7 == 0 ? d % 3 : rng.Next() % (d % 5 == 0 ? 400 : 40);
    for (size_t w = 0; w < words; ++w) {
      text += kPieces[rng.Next() % std::size(kPieces)];
      if (rng.Next() % 3 == 0) text += std::to_string(rng.Next() % 50);
      text += rng.Next() % 9 == 0 ? "\n" : " ";
    }
    docs.push_back(std::move(text));
  }
  return docs;
}

std::vector<Recipe> Recipes() {
  std::vector<Recipe> recipes;
  for (const std::string& name : PresetNames()) recipes.push_back(PresetRecipe(name).value());
  Recipe r = PresetRecipe("default").value();
  r.simhash.bits = 128;
  r.hash = FeatureHashKind::kFnv1a;
  r.seed = 12345;
  r.chunks.sample_modulus = 3;
  recipes.push_back(r);
  r = PresetRecipe("paper").value();
  r.minhash.shingle_width = 1;
  r.chunks.shingle_width = 1;
  r.minhash.num_hashes = 64;
  r.simhash.tie = SimHashTieRule::kZero;
  recipes.push_back(r);
  r = PresetRecipe("default").value();
  r.simhash.bits = 128;
  r.simhash.tie = SimHashTieRule::kZero;
  r.minhash.num_hashes = 200;
  recipes.push_back(r);
  return recipes;
}

std::vector<SketchSelection> Selections() {
  std::vector<SketchSelection> out(6);
  out[0].simhash = out[0].minhash = out[0].kvalue_minhash = out[0].chunks = true;
  out[1].simhash = true;
  out[2].minhash = true;
  out[3].kvalue_minhash = true;
  out[4].chunks = true;
  out[5].minhash = out[5].chunks = true;
  return out;
}

// Document d of `batch` equals `want` field by field, through CopyTo and
// through the view.
void ExpectDocumentEquals(const FingerprintBatch& batch, size_t d, const Fingerprint& want) {
  Fingerprint got;
  batch.CopyTo(d, &got);
  EXPECT_EQ(got.num_tokens, want.num_tokens);
  EXPECT_EQ(got.invalid_utf8_sequences, want.invalid_utf8_sequences);
  EXPECT_EQ(got.simhash, want.simhash);
  EXPECT_EQ(got.simhash128, want.simhash128);
  EXPECT_EQ(got.simhash_wide, want.simhash_wide);
  EXPECT_EQ(got.num_shingles, want.num_shingles);
  EXPECT_EQ(got.minhash, want.minhash);
  EXPECT_EQ(got.kvalue_minhash, want.kvalue_minhash);
  EXPECT_EQ(got.chunks, want.chunks);

  const SketchSelection& s = batch.layout().selection;
  const FingerprintView view = batch[d];
  EXPECT_EQ(view.num_tokens(), want.num_tokens);
  if (s.simhash) {
    EXPECT_EQ(view.simhash(), want.simhash);
  }
  if (s.minhash) {
    EXPECT_EQ(std::vector<uint64_t>(view.minhash().begin(), view.minhash().end()),
              want.minhash.values);
    // The row is padded past its values.
    const size_t k = batch.num_hashes();
    for (size_t i = want.minhash.values.size(); i < k; ++i) {
      EXPECT_EQ(batch.minhash()[d * k + i], kMinHashPadding);
    }
  }
  if (s.chunks) {
    EXPECT_EQ(std::vector<uint32_t>(view.chunks().begin(), view.chunks().end()), want.chunks);
  }
}

void ExpectBatchEqualsPerDocument(const Fingerprinter& fingerprinter,
                                  const std::vector<std::string>& texts, FingerprintBatch* batch) {
  std::vector<std::string_view> views(texts.begin(), texts.end());
  ASSERT_TRUE(fingerprinter.ComputeBatch(views, batch).ok());
  ASSERT_EQ(batch->size(), texts.size());
  EXPECT_EQ(batch->layout(),
            FingerprintBatchLayout::For(fingerprinter.recipe(), fingerprinter.selection()));
  const SketchSelection& s = fingerprinter.selection();
  const size_t k = static_cast<size_t>(fingerprinter.recipe().minhash.num_hashes);
  EXPECT_EQ(batch->simhash().size(), s.simhash ? texts.size() : 0);
  EXPECT_EQ(batch->minhash().size(), s.minhash ? texts.size() * k : 0);
  EXPECT_EQ(batch->kvalue_minhash().size(), s.kvalue_minhash ? texts.size() * k : 0);
  EXPECT_EQ(batch->chunk_offsets().size(), s.chunks ? texts.size() + 1 : 0);
  if (s.chunks) {
    EXPECT_EQ(batch->chunk_offsets().back(), batch->chunk_ids().size());
  }
  for (size_t d = 0; d < texts.size(); ++d) {
    Fingerprint want;
    ASSERT_TRUE(fingerprinter.Compute(texts[d], &want).ok());
    SCOPED_TRACE("document " + std::to_string(d));
    ExpectDocumentEquals(*batch, d, want);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FingerprintBatchTest, EqualsThePerDocumentPathForEveryRecipeAndSelection) {
  const std::vector<std::string> texts = SeededCorpus(20261126, 300);
  FingerprintBatch batch;  // one batch for every call: reuse is part of it
  for (const Recipe& recipe : Recipes()) {
    for (const SketchSelection& selection : Selections()) {
      SCOPED_TRACE(recipe.name + " selection " + std::to_string(selection.simhash) +
                   std::to_string(selection.minhash) + std::to_string(selection.kvalue_minhash) +
                   std::to_string(selection.chunks));
      auto fingerprinter = CreateCpuFingerprinter(recipe, selection).value();
      ExpectBatchEqualsPerDocument(*fingerprinter, texts, &batch);
      if (HasFailure()) return;
    }
  }
}

TEST(FingerprintBatchTest, DigestRouteEqualsThePerDocumentPath) {
  const std::vector<std::string> texts = SeededCorpus(7, 60);
  SketchSelection simhash;
  simhash.simhash = true;
  for (const std::string& name : DigestPresetNames()) {
    SCOPED_TRACE(name);
    auto fingerprinter = CreateCpuFingerprinter(PresetRecipe(name).value(), simhash).value();
    FingerprintBatch batch;
    ExpectBatchEqualsPerDocument(*fingerprinter, texts, &batch);
    EXPECT_TRUE(batch.layout().wide_simhash);
    EXPECT_EQ(batch.simhash_wide().size(), 4 * texts.size());
  }
}

TEST(FingerprintBatchTest, ReuseAcrossCallsOfOtherSizesKeepsCapacityAndOnlyTheLastValues) {
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  auto fingerprinter = CreateCpuFingerprinter(PresetRecipe("default").value(), all).value();
  const std::vector<std::string> big = SeededCorpus(1, 500);
  const std::vector<std::string> small = SeededCorpus(2, 5);
  FingerprintBatch batch;
  ExpectBatchEqualsPerDocument(*fingerprinter, big, &batch);
  const uint64_t* minhash_data = batch.minhash().data();
  const uint32_t* chunk_data = batch.chunk_ids().data();
  ExpectBatchEqualsPerDocument(*fingerprinter, small, &batch);
  // Smaller calls reuse the arrays (no allocation).
  EXPECT_EQ(batch.minhash().data(), minhash_data);
  EXPECT_EQ(batch.chunk_ids().data(), chunk_data);
  ExpectBatchEqualsPerDocument(*fingerprinter, {}, &batch);
  EXPECT_EQ(batch.size(), 0u);
  EXPECT_TRUE(batch.chunk_ids().empty());
  ExpectBatchEqualsPerDocument(*fingerprinter, big, &batch);
  EXPECT_EQ(batch.minhash().data(), minhash_data);

  // Another layout on the same batch: the sketches it does not select are
  // empty, not left over.
  SketchSelection simhash;
  simhash.simhash = true;
  auto simhash_only = CreateCpuFingerprinter(PresetRecipe("paper").value(), simhash).value();
  ExpectBatchEqualsPerDocument(*simhash_only, small, &batch);
  EXPECT_TRUE(batch.minhash().empty());
  EXPECT_TRUE(batch.kvalue_minhash().empty());
  EXPECT_TRUE(batch.chunk_offsets().empty());
  EXPECT_TRUE(batch.chunk_ids().empty());
}

// ResetForSetMinHash leaves the k-value rows as the last call wrote them:
// the CPU producer must write every row itself, the empty ones too (zeros,
// flag 1). A batch first filled with documents that have features, then
// reused for documents without (empty, one stopword, shorter than the
// shingle width) at the same places, holds only the second call's rows.
TEST(FingerprintBatchTest, ReuseWritesEveryKValueRowOverDocumentsWithoutFeatures) {
  SketchSelection kvalue;
  kvalue.kvalue_minhash = true;
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  Recipe width5 = PresetRecipe("paper").value();  // English stopwords
  ASSERT_EQ(width5.minhash.shingle_width, 5);
  width5.minhash.num_hashes = 32;
  const std::vector<std::string> full = SeededCorpus(3, 40);
  std::vector<std::string> with_features(40);
  std::vector<std::string> without = full;
  const std::vector<std::string> no_features = {"", "the", "the of and", "   \n "};
  for (size_t d = 0; d < with_features.size(); ++d) {
    with_features[d] = "quick brown fox " + std::to_string(d) + " jumps over lazy dogs again";
    if (d % 3 != 2) without[d] = no_features[d % no_features.size()];
  }
  for (const Recipe& recipe : {PresetRecipe("default").value(), width5}) {
    for (const SketchSelection& selection : {kvalue, all}) {
      SCOPED_TRACE(recipe.name + (selection.simhash ? " all" : " k-value"));
      auto fingerprinter = CreateCpuFingerprinter(recipe, selection).value();
      FingerprintBatch batch;
      ExpectBatchEqualsPerDocument(*fingerprinter, with_features, &batch);
      for (uint8_t empty : batch.kvalue_empty()) ASSERT_EQ(empty, 0u);
      ExpectBatchEqualsPerDocument(*fingerprinter, without, &batch);
      const size_t k = batch.num_hashes();
      // The empty text has no features, nor has a lone stopword where the
      // recipe removes stopwords: their rows are zeros with flag 1.
      for (size_t d = 0; d < without.size(); ++d) {
        const bool stopword = without[d] == "the" && recipe.stopwords != StopwordsKind::kNone;
        if (!without[d].empty() && !stopword) continue;
        SCOPED_TRACE("document " + std::to_string(d));
        EXPECT_EQ(batch.kvalue_empty()[d], 1u);
        for (size_t i = 0; i < k; ++i) EXPECT_EQ(batch.kvalue_minhash()[d * k + i], 0u);
      }
      if (HasFailure()) return;
    }
  }
}

TEST(FingerprintBatchTest, ChunkPartsWrittenOutOfOrderLayOutByDocument) {
  FingerprintBatchLayout layout;
  layout.selection.chunks = true;
  FingerprintBatch batch;
  batch.Reset(5, layout);
  batch.StartChunks(2);
  const std::vector<uint32_t> a = {1, 2, 3};
  const std::vector<uint32_t> b = {9};
  const std::vector<uint32_t> c = {4, 5};
  batch.SetChunks(1, 3, a);
  batch.SetChunks(0, 0, b);
  batch.SetChunks(1, 1, c);  // document 2 and 4: none
  batch.FinishChunks();
  EXPECT_EQ(std::vector<uint64_t>(batch.chunk_offsets().begin(), batch.chunk_offsets().end()),
            (std::vector<uint64_t>{0, 1, 3, 3, 6, 6}));
  EXPECT_EQ(std::vector<uint32_t>(batch.chunk_ids().begin(), batch.chunk_ids().end()),
            (std::vector<uint32_t>{9, 4, 5, 1, 2, 3}));

  // CopyDocument moves a finished document into another batch.
  FingerprintBatch other;
  other.Reset(2, layout);
  other.StartChunks(1);
  other.CopyDocument(batch, 3, 1, 0);
  other.FinishChunks();
  EXPECT_TRUE(other[0].chunks().empty());
  EXPECT_EQ(std::vector<uint32_t>(other[1].chunks().begin(), other[1].chunks().end()), a);
}

// ResetForSetMinHash leaves the k-value rows as they were (the producer
// writes each one); Reset zeroes every row, also regrown ones, and sets
// every empty flag to 1.
TEST(FingerprintBatchTest, ResetZeroesKValueRowsThatResetForSetMinHashLeaves) {
  FingerprintBatchLayout layout;
  layout.selection.kvalue_minhash = true;
  layout.num_hashes = 4;
  FingerprintBatch batch;
  batch.ResetForSetMinHash(3, layout);
  ASSERT_EQ(batch.kvalue_minhash().size(), 12u);
  std::fill(batch.mutable_kvalue_minhash().begin(), batch.mutable_kvalue_minhash().end(),
            uint64_t{7});
  batch.ResetForSetMinHash(2, layout);
  ASSERT_EQ(batch.kvalue_minhash().size(), 8u);
  for (uint64_t v : batch.kvalue_minhash()) EXPECT_EQ(v, 7u);
  batch.mutable_kvalue_empty()[1] = 0;
  batch.Reset(5, layout);  // past the 12 values held: regrown
  ASSERT_EQ(batch.kvalue_minhash().size(), 20u);
  for (uint64_t v : batch.kvalue_minhash()) EXPECT_EQ(v, 0u);
  for (uint8_t empty : batch.kvalue_empty()) EXPECT_EQ(empty, 1u);
}

// ResetForSetMinHash leaves the rows unpadded, SetMinHash pads each one it
// writes, and a later Reset pads every row again (the batch reused).
TEST(FingerprintBatchTest, ResetForSetMinHashLeavesRowsToSetMinHash) {
  FingerprintBatchLayout layout;
  layout.selection.minhash = true;
  layout.num_hashes = 4;
  FingerprintBatch batch;
  batch.ResetForSetMinHash(3, layout);
  ASSERT_EQ(batch.minhash().size(), 12u);
  std::fill(batch.mutable_minhash().begin(), batch.mutable_minhash().end(), uint64_t{7});
  const std::vector<uint64_t> two = {1, 5};
  const std::vector<uint64_t> four = {2, 3, 8, 9};
  batch.SetMinHash(0, two);
  batch.SetMinHash(1, four);
  batch.SetMinHash(2, {});
  EXPECT_EQ(
      std::vector<uint64_t>(batch.minhash().begin(), batch.minhash().end()),
      (std::vector<uint64_t>{1, 5, kMinHashPadding, kMinHashPadding, 2, 3, 8, 9, kMinHashPadding,
                             kMinHashPadding, kMinHashPadding, kMinHashPadding}));
  EXPECT_EQ(std::vector<uint32_t>(batch.minhash_count().begin(), batch.minhash_count().end()),
            (std::vector<uint32_t>{2, 4, 0}));
  ASSERT_EQ(batch[1].minhash().size(), 4u);
  EXPECT_EQ(batch[1].minhash()[2], 8u);

  batch.Reset(2, layout);
  ASSERT_EQ(batch.minhash().size(), 8u);
  for (uint64_t v : batch.minhash()) EXPECT_EQ(v, kMinHashPadding);
  for (uint32_t c : batch.minhash_count()) EXPECT_EQ(c, 0u);
  // Smaller, then larger again: every row of the larger batch is padded.
  batch.ResetForSetMinHash(1, layout);
  batch.SetMinHash(0, four);
  batch.Reset(3, layout);
  ASSERT_EQ(batch.minhash().size(), 12u);
  for (uint64_t v : batch.minhash()) EXPECT_EQ(v, kMinHashPadding);
}

TEST(FingerprintInputTest, LaysTextsBackToBackAndGrowsKeepingThem) {
  Result<std::unique_ptr<FingerprintInput>> made = NewHostFingerprintInput(8);
  ASSERT_TRUE(made.ok());
  FingerprintInput& input = **made;
  EXPECT_FALSE(input.page_locked());
  EXPECT_GE(input.capacity(), 8u);
  const std::vector<std::string> texts = SeededCorpus(3, 200);  // grows several times
  for (const std::string& text : texts) ASSERT_TRUE(input.Append(text).ok());
  ASSERT_EQ(input.size(), texts.size());
  std::span<const std::string_view> views = input.texts();
  size_t bytes = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(views[i], texts[i]);
    if (i + 1 < texts.size()) {
      EXPECT_EQ(views[i].data() + views[i].size(), views[i + 1].data());
    }
    bytes += texts[i].size();
  }
  EXPECT_EQ(input.bytes(), bytes);

  // A reader writing in place: room for the worst case, then the length.
  Result<std::span<char>> room = input.BeginDocument(10);
  ASSERT_TRUE(room.ok());
  std::memcpy(room->data(), "abc", 3);
  input.EndDocument(3);
  EXPECT_EQ(input.text(texts.size()), "abc");

  const size_t capacity = input.capacity();
  input.Clear();
  EXPECT_EQ(input.size(), 0u);
  EXPECT_EQ(input.bytes(), 0u);
  EXPECT_EQ(input.capacity(), capacity);
  EXPECT_TRUE(input.texts().empty());
  ASSERT_TRUE(input.Append("").ok());
  ASSERT_TRUE(input.Append("x").ok());
  EXPECT_EQ(input.text(0), "");
  EXPECT_EQ(input.text(1), "x");
}

TEST(FingerprintInputTest, SubmittedInputEqualsTheTextsPath) {
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  auto fingerprinter = CreateCpuFingerprinter(PresetRecipe("default").value(), all).value();
  Result<std::unique_ptr<FingerprintInput>> input = fingerprinter->NewInput(1 << 16);
  ASSERT_TRUE(input.ok());
  const std::vector<std::string> texts = SeededCorpus(4, 120);
  FingerprintBatch batch;
  // Two submissions of the same input object.
  for (size_t round = 0; round < 2; ++round) {
    (*input)->Clear();
    const size_t first = round * 60;
    for (size_t i = first; i < first + 60; ++i) ASSERT_TRUE((*input)->Append(texts[i]).ok());
    ASSERT_TRUE(fingerprinter->ComputeBatch(**input, &batch).ok());
    ASSERT_EQ(batch.size(), 60u);
    for (size_t i = 0; i < 60; ++i) {
      Fingerprint want;
      ASSERT_TRUE(fingerprinter->Compute(texts[first + i], &want).ok());
      ExpectDocumentEquals(batch, i, want);
    }
  }
}

}  // namespace
}  // namespace neardup
