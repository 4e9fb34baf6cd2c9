#include "neardup/fingerprint_batch.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "neardup/check.h"
#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"

namespace neardup {
namespace {

constexpr uint32_t kNoPart = UINT32_MAX;
constexpr size_t kWideWords = 4;  // WideSimHash::words

// Sizes `v` to `count` values of `fill` when `wanted`, else empties it; both
// keep its capacity.
template <typename T>
void Size(bool wanted, size_t count, T fill, std::vector<T>* v) {
  if (!wanted) {
    v->clear();
    return;
  }
  v->assign(count, fill);
}

}  // namespace

FingerprintBatchLayout FingerprintBatchLayout::For(const Recipe& recipe,
                                                   const SketchSelection& selection) {
  FingerprintBatchLayout layout;
  layout.selection = selection;
  layout.simhash_bits = recipe.simhash.bits;
  layout.wide_simhash = IsDigestRecipe(recipe);
  layout.num_hashes = recipe.minhash.num_hashes;
  return layout;
}

uint64_t FingerprintView::simhash() const { return batch_->simhash()[doc_]; }

SimHash128 FingerprintView::simhash128() const {
  const FingerprintBatchLayout& layout = batch_->layout();
  if (!layout.selection.simhash) return SimHash128{0, 0};
  if (layout.wide_simhash) {
    const uint64_t* words = batch_->simhash_wide().data() + doc_ * kWideWords;
    return SimHash128{words[0], words[1]};
  }
  if (layout.simhash_bits != 128) return SimHash128{0, 0};
  return SimHash128{batch_->simhash()[doc_], batch_->simhash_low()[doc_]};
}

WideSimHash FingerprintView::simhash_wide() const {
  WideSimHash wide;
  const FingerprintBatchLayout& layout = batch_->layout();
  if (!layout.selection.simhash || !layout.wide_simhash) return wide;
  const uint64_t* words = batch_->simhash_wide().data() + doc_ * kWideWords;
  std::copy(words, words + kWideWords, wide.words.begin());
  wide.bits = layout.simhash_bits;
  return wide;
}

uint64_t FingerprintView::num_shingles() const {
  std::span<const uint64_t> all = batch_->num_shingles();
  return all.empty() ? 0 : all[doc_];
}

std::span<const uint64_t> FingerprintView::minhash() const {
  const size_t k = batch_->num_hashes();
  return batch_->minhash().subspan(doc_ * k, batch_->minhash_count()[doc_]);
}

std::span<const uint64_t> FingerprintView::kvalue_minhash() const {
  const size_t k = batch_->num_hashes();
  return batch_->kvalue_minhash().subspan(doc_ * k, k);
}

bool FingerprintView::kvalue_empty() const { return batch_->kvalue_empty()[doc_] != 0; }

std::span<const uint32_t> FingerprintView::chunks() const {
  std::span<const uint64_t> offsets = batch_->chunk_offsets();
  return batch_->chunk_ids().subspan(offsets[doc_], offsets[doc_ + 1] - offsets[doc_]);
}

uint64_t FingerprintView::num_tokens() const { return batch_->num_tokens()[doc_]; }

uint64_t FingerprintView::invalid_utf8_sequences() const {
  return batch_->invalid_utf8_sequences()[doc_];
}

std::span<const uint64_t> FingerprintBatch::simhash_low() const { return Span(simhash_low_, 1); }
std::span<const uint64_t> FingerprintBatch::simhash_wide() const {
  return Span(simhash_wide_, kWideWords);
}
std::span<const uint64_t> FingerprintBatch::num_shingles() const { return Span(num_shingles_, 1); }
std::span<const uint64_t> FingerprintBatch::chunk_offsets() const {
  return std::span<const uint64_t>(chunk_offsets_.data(),
                                   chunk_offsets_.empty() ? 0 : num_docs_ + 1);
}
std::span<uint64_t> FingerprintBatch::mutable_simhash_low() { return Span(simhash_low_, 1); }
std::span<uint64_t> FingerprintBatch::mutable_simhash_wide() {
  return Span(simhash_wide_, kWideWords);
}
std::span<uint64_t> FingerprintBatch::mutable_num_shingles() { return Span(num_shingles_, 1); }

void FingerprintBatch::Reset(size_t num_docs, const FingerprintBatchLayout& layout) {
  ResetForSetMinHash(num_docs, layout);
  const std::span<uint64_t> rows = mutable_minhash();
  std::fill(rows.begin(), rows.end(), kMinHashPadding);
  const std::span<uint64_t> kvalue_rows = mutable_kvalue_minhash();
  std::fill(kvalue_rows.begin(), kvalue_rows.end(), uint64_t{0});
}

void FingerprintBatch::ResetForSetMinHash(size_t num_docs, const FingerprintBatchLayout& layout) {
  layout_ = layout;
  num_docs_ = num_docs;
  const SketchSelection& s = layout.selection;
  const size_t k = static_cast<size_t>(std::max(layout.num_hashes, 0));
  const bool wide = s.simhash && layout.wide_simhash;
  Size(s.simhash, num_docs, uint64_t{0}, &simhash_);
  Size(s.simhash && !wide && layout.simhash_bits == 128, num_docs, uint64_t{0}, &simhash_low_);
  Size(wide, num_docs * kWideWords, uint64_t{0}, &simhash_wide_);
  Size(wide, num_docs, uint64_t{0}, &num_shingles_);
  // Grown, never shrunk, and not filled: the rows are the first num_docs * k
  // values (Span); Reset pads them, SetMinHash writes whole rows. (A resize
  // down and up again would zero the regrown tail on every batch.) The
  // k-value rows likewise: Reset zeroes them, the producer writes each one
  // (the fill was 1 KB a document at k = 128, 64 MB per 257 MB of `dedup`).
  auto grow = [&](bool wanted, std::vector<uint64_t>* rows) {
    if (!wanted) {
      rows->clear();
    } else if (rows->size() < num_docs * k) {
      rows->resize(num_docs * k);
    }
  };
  grow(s.minhash, &minhash_);
  Size(s.minhash, num_docs, uint32_t{0}, &minhash_count_);
  grow(s.kvalue_minhash, &kvalue_);
  Size(s.kvalue_minhash, num_docs, uint8_t{1}, &kvalue_empty_);
  Size(s.chunks, num_docs + 1, uint64_t{0}, &chunk_offsets_);
  chunk_ids_.clear();
  Size(true, num_docs, uint64_t{0}, &num_tokens_);
  Size(true, num_docs, uint64_t{0}, &invalid_utf8_);
  num_chunk_parts_ = 0;
  chunk_part_of_.clear();
  chunk_start_.clear();
}

void FingerprintBatch::SetMinHash(size_t doc, std::span<const uint64_t> values) {
  const size_t k = num_hashes();
  NEARDUP_CHECK(doc < num_docs_ && values.size() <= k);
  uint64_t* row = minhash_.data() + doc * k;
  std::copy(values.begin(), values.end(), row);
  std::fill(row + values.size(), row + k, kMinHashPadding);
  minhash_count_[doc] = static_cast<uint32_t>(values.size());
}

void FingerprintBatch::StartChunks(size_t num_parts) {
  NEARDUP_CHECK(layout_.selection.chunks);
  // The outer vector only grows, so the parts' buffers keep their capacity.
  if (chunk_parts_.size() < num_parts) chunk_parts_.resize(num_parts);
  for (size_t p = 0; p < num_parts; ++p) chunk_parts_[p].clear();
  num_chunk_parts_ = num_parts;
  chunk_part_of_.assign(num_docs_, kNoPart);
  chunk_start_.assign(num_docs_, 0);
}

void FingerprintBatch::SetChunks(size_t part, size_t doc, std::span<const uint32_t> ids) {
  NEARDUP_CHECK(part < num_chunk_parts_ && doc < num_docs_);
  std::vector<uint32_t>& buffer = chunk_parts_[part];
  chunk_part_of_[doc] = static_cast<uint32_t>(part);
  chunk_start_[doc] = buffer.size();
  chunk_offsets_[doc + 1] = ids.size();  // a count until FinishChunks
  buffer.insert(buffer.end(), ids.begin(), ids.end());
}

void FingerprintBatch::FinishChunks() {
  NEARDUP_CHECK(layout_.selection.chunks && chunk_part_of_.size() == num_docs_);
  chunk_offsets_[0] = 0;
  for (size_t d = 0; d < num_docs_; ++d) {
    if (chunk_part_of_[d] == kNoPart) chunk_offsets_[d + 1] = 0;
    chunk_offsets_[d + 1] += chunk_offsets_[d];
  }
  chunk_ids_.resize(chunk_offsets_[num_docs_]);
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, num_docs_, 256), [&](const tbb::blocked_range<size_t>& range) {
        for (size_t d = range.begin(); d != range.end(); ++d) {
          const size_t count = chunk_offsets_[d + 1] - chunk_offsets_[d];
          if (count == 0) continue;
          const uint32_t* from = chunk_parts_[chunk_part_of_[d]].data() + chunk_start_[d];
          std::memcpy(chunk_ids_.data() + chunk_offsets_[d], from, count * sizeof(uint32_t));
        }
      });
  num_chunk_parts_ = 0;
}

void FingerprintBatch::CopyDocument(const FingerprintBatch& from, size_t from_doc, size_t to_doc,
                                    size_t part) {
  NEARDUP_CHECK(from.layout() == layout_ && from_doc < from.size() && to_doc < num_docs_);
  const size_t k = num_hashes();
  auto copy_rows = [&](const auto& source, auto& target, size_t row) {
    if (source.empty()) return;
    std::copy_n(source.begin() + static_cast<ptrdiff_t>(from_doc * row), row,
                target.begin() + static_cast<ptrdiff_t>(to_doc * row));
  };
  copy_rows(from.simhash_, simhash_, 1);
  copy_rows(from.simhash_low_, simhash_low_, 1);
  copy_rows(from.simhash_wide_, simhash_wide_, kWideWords);
  copy_rows(from.num_shingles_, num_shingles_, 1);
  copy_rows(from.minhash_, minhash_, k);
  copy_rows(from.minhash_count_, minhash_count_, 1);
  copy_rows(from.kvalue_, kvalue_, k);
  copy_rows(from.kvalue_empty_, kvalue_empty_, 1);
  copy_rows(from.num_tokens_, num_tokens_, 1);
  copy_rows(from.invalid_utf8_, invalid_utf8_, 1);
  if (layout_.selection.chunks) SetChunks(part, to_doc, from[from_doc].chunks());
}

void FingerprintBatch::CopyTo(size_t doc, Fingerprint* out) const {
  NEARDUP_CHECK(doc < num_docs_);
  const FingerprintView view = (*this)[doc];
  const SketchSelection& s = layout_.selection;
  *out = Fingerprint();
  out->num_tokens = view.num_tokens();
  out->invalid_utf8_sequences = view.invalid_utf8_sequences();
  if (s.simhash) {
    out->simhash = view.simhash();
    out->simhash128 = view.simhash128();
    out->simhash_wide = view.simhash_wide();
    out->num_shingles = view.num_shingles();
  }
  if (s.minhash) {
    out->minhash.k = static_cast<uint32_t>(num_hashes());
    std::span<const uint64_t> values = view.minhash();
    out->minhash.values.assign(values.begin(), values.end());
  }
  if (s.kvalue_minhash) {
    std::span<const uint64_t> values = view.kvalue_minhash();
    out->kvalue_minhash.values.assign(values.begin(), values.end());
    out->kvalue_minhash.empty = view.kvalue_empty();
  }
  if (s.chunks) {
    std::span<const uint32_t> ids = view.chunks();
    out->chunks.assign(ids.begin(), ids.end());
  }
}

std::vector<Fingerprint> FingerprintBatch::ToFingerprints() const {
  std::vector<Fingerprint> out(num_docs_);
  for (size_t d = 0; d < num_docs_; ++d) CopyTo(d, &out[d]);
  return out;
}

}  // namespace neardup
