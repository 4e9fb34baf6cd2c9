#include "hash/shingle_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "hash/cpu_path.h"
#include "hash/shingle_hasher.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

// All features of a document by ShingleHasher, the reference.
std::vector<uint64_t> Reference(const std::vector<uint64_t>& tokens, int width, uint64_t seed) {
  std::vector<uint64_t> features;
  ShingleHasher hasher(width, seed);
  auto emit = [&](uint64_t f) { features.push_back(f); };
  for (uint64_t t : tokens) hasher.Push(t, emit);
  hasher.Finish(emit);
  return features;
}

// The same by ShingleBatch, appending batches of the given sizes in turn.
std::vector<uint64_t> Batched(ShingleBatch* batch, const std::vector<uint64_t>& tokens, int width,
                              const std::vector<size_t>& batch_sizes) {
  std::vector<uint64_t> features;
  std::vector<uint64_t> out(ShingleBatch::kMaxBatch);
  batch->Reset();
  size_t pos = 0;
  size_t turn = 0;
  while (pos < tokens.size()) {
    const size_t n = std::min(batch_sizes[turn++ % batch_sizes.size()], tokens.size() - pos);
    batch->Append(std::span<const uint64_t>(tokens.data() + pos, n));
    const size_t count = batch->Features(width, out.data());
    features.insert(features.end(), out.begin(), out.begin() + static_cast<ptrdiff_t>(count));
    pos += n;
  }
  if (std::optional<uint64_t> f = batch->ShortDocumentFeature(width)) features.push_back(*f);
  return features;
}

TEST(ShingleBatchTest, EqualsShingleHasherForEveryWidthLengthAndBatching) {
  SplitMix64 rng(7);
  const std::vector<std::vector<size_t>> batchings = {{1}, {3}, {64}, {256}, {5, 256, 1, 77}};
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}}) {
    for (CpuPath path : SupportedCpuPaths()) {
      ShingleBatch batch(seed, path);  // reused across documents: Reset must forget
      for (size_t length : {0, 1, 2, 3, 4, 5, 6, 63, 64, 65, 127, 300, 1000}) {
        std::vector<uint64_t> tokens(length);
        for (uint64_t& t : tokens) t = rng.Next() >> (rng.Next() % 64);  // small values too
        for (int width : {1, 2, 3, 4, 5, 6, 9, 17, 63, 64}) {
          const std::vector<uint64_t> want = Reference(tokens, width, seed);
          for (const std::vector<size_t>& sizes : batchings) {
            ASSERT_EQ(Batched(&batch, tokens, width, sizes), want)
                << CpuPathName(path) << " seed " << seed << " length " << length << " width "
                << width << " batch " << sizes[0];
          }
        }
      }
    }
  }
}

TEST(ShingleBatchTest, EveryBatchSizeAndFirstWindowForTheVectorWidths) {
  // Widths 2-5 have AVX-512 forms that handle whole vectors and a masked
  // tail (widths 3-5 sum their windows first, then mix them in place in a
  // second pass): every batch size 1-256, after 0-6 tokens of history, so
  // every tail length and every first complete window is covered.
  SplitMix64 rng(11);
  std::vector<uint64_t> tokens(6 + ShingleBatch::kMaxBatch);
  for (uint64_t& t : tokens) t = rng.Next();
  for (CpuPath path : SupportedCpuPaths()) {
    ShingleBatch batch(3, path);
    for (int width = 2; width <= 5; ++width) {
      for (size_t before = 0; before <= 6; ++before) {
        for (size_t size = 1; size <= ShingleBatch::kMaxBatch; ++size) {
          const std::vector<uint64_t> doc(tokens.begin(),
                                          tokens.begin() + static_cast<ptrdiff_t>(before + size));
          const std::vector<size_t> sizes = {before == 0 ? size : before, size};
          ASSERT_EQ(Batched(&batch, doc, width, sizes), Reference(doc, width, 3))
              << CpuPathName(path) << " width " << width << " before " << before << " size "
              << size;
        }
      }
    }
  }
}

TEST(ShingleBatchTest, SeveralWidthsFromOneStream) {
  SplitMix64 rng(9);
  std::vector<uint64_t> tokens(700);
  for (uint64_t& t : tokens) t = rng.Next();
  for (CpuPath path : SupportedCpuPaths()) {
    ShingleBatch batch(3, path);
    std::vector<uint64_t> out(ShingleBatch::kMaxBatch);
    std::vector<uint64_t> w3, w5;
    for (size_t pos = 0; pos < tokens.size(); pos += 200) {
      const size_t n = std::min<size_t>(200, tokens.size() - pos);
      batch.Append(std::span<const uint64_t>(tokens.data() + pos, n));
      size_t c = batch.Features(3, out.data());
      w3.insert(w3.end(), out.begin(), out.begin() + static_cast<ptrdiff_t>(c));
      c = batch.Features(5, out.data());
      w5.insert(w5.end(), out.begin(), out.begin() + static_cast<ptrdiff_t>(c));
    }
    EXPECT_EQ(w3, Reference(tokens, 3, 3));
    EXPECT_EQ(w5, Reference(tokens, 5, 3));
  }
}

TEST(ShingleBatchTest, ShortDocumentFeatureIsCombine) {
  ShingleBatch batch(11);
  EXPECT_EQ(batch.ShortDocumentFeature(3), std::nullopt);  // no tokens
  const std::vector<uint64_t> tokens = {5, 6};
  batch.Append(tokens);
  EXPECT_EQ(batch.ShortDocumentFeature(3), ShingleHasher::Combine(tokens, 11));
  EXPECT_EQ(batch.ShortDocumentFeature(2), std::nullopt);  // a full window exists
  batch.Reset();
  batch.Append(std::span<const uint64_t>(tokens.data(), 1));
  EXPECT_EQ(batch.ShortDocumentFeature(5), 5u);  // a single token is its own feature
  // The raw hashes are not kept: the one-token document's feature is its
  // first token even after an empty Append and after the span changed.
  for (CpuPath path : SupportedCpuPaths()) {
    ShingleBatch one(11, path);
    std::vector<uint64_t> first = {42};
    one.Append(std::span<const uint64_t>());
    one.Append(first);
    first[0] = 7;
    one.Append(std::span<const uint64_t>());
    EXPECT_EQ(one.ShortDocumentFeature(3), 42u) << CpuPathName(path);
    // Two tokens over two Appends: Combine of both.
    ShingleBatch two(11, path);
    const std::vector<uint64_t> a = {5}, b = {6};
    two.Append(a);
    two.Append(b);
    EXPECT_EQ(two.ShortDocumentFeature(3), ShingleHasher::Combine(tokens, 11));
  }
}

// Width 1: the last Append's hashes as they are, batch after batch.
TEST(ShingleBatchTest, WidthOneIsTheLastAppendsHashes) {
  for (CpuPath path : SupportedCpuPaths()) {
    ShingleBatch batch(3, path);
    std::vector<uint64_t> out(ShingleBatch::kMaxBatch);
    for (uint64_t round = 0; round < 4; ++round) {
      std::vector<uint64_t> hashes(37 + 70 * round);
      for (size_t i = 0; i < hashes.size(); ++i) hashes[i] = round * 1000 + i;
      batch.Append(hashes);
      ASSERT_EQ(batch.Features(1, out.data()), hashes.size());
      EXPECT_TRUE(std::equal(hashes.begin(), hashes.end(), out.begin())) << CpuPathName(path);
    }
    batch.Append(std::span<const uint64_t>());
    EXPECT_EQ(batch.Features(1, out.data()), 0u);
  }
}

}  // namespace
}  // namespace neardup::internal
