// FingerprintInput: a batch of document texts laid back to back in memory
// that a fingerprint backend provides (Fingerprinter::NewInput), so that a
// reader writes (decompresses, unescapes) each text straight into the
// memory the backend reads. For the CUDA backend that memory is page-locked
// host memory, from which the GPU copies at full bus speed without first
// copying the texts into its own staging buffer (docs/GPU.md: 48.8 GB/s in
// place against 26.8 GB/s copied, default SimHash on an H100); for the CPU
// backend it is plain memory and the seam costs nothing.
//
//   std::unique_ptr<FingerprintInput> input = fingerprinter.NewInput(64 << 20).value();
//   FingerprintBatch batch;
//   while (reader has documents) {
//     input->Append(text);                  // or BeginDocument/EndDocument
//     if (input->bytes() >= 64 << 20) {
//       fingerprinter.ComputeBatch(*input, &batch);  // submit
//       ... use batch ...; input->Clear();
//     }
//   }
//
// Cost: Append copies the text once (amortised O(bytes)); the buffer grows
// by doubling (for page-locked memory each growth is a new allocation and a
// copy, so size it at creation) and keeps its capacity across Clear().
// Memory: capacity() bytes plus 8 bytes of offsets and 16 of views per
// document. Thread safety: none; one reader fills an input at a time, and it
// must not change while a ComputeBatch reads it.
#ifndef NEARDUP_FINGERPRINT_INPUT_H_
#define NEARDUP_FINGERPRINT_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

class FingerprintInput {
 public:
  virtual ~FingerprintInput() = default;
  FingerprintInput(const FingerprintInput&) = delete;
  FingerprintInput& operator=(const FingerprintInput&) = delete;

  // Appends a copy of `text` as the next document. Fails (and appends
  // nothing) when the memory cannot grow.
  Status Append(std::string_view text);

  // For readers that produce a text in place: room for up to `max_bytes`
  // at the end of the buffer, where the reader writes the document, then
  // EndDocument(bytes written) appends it. The room is valid until the next
  // call on this input. REQUIRES: EndDocument follows each successful
  // BeginDocument, with bytes <= max_bytes.
  Result<std::span<char>> BeginDocument(size_t max_bytes);
  void EndDocument(size_t bytes);

  // Ensures capacity() >= bytes, keeping the documents (texts() views are
  // then invalid).
  Status Reserve(size_t bytes);

  // Drops every document; keeps the capacity.
  void Clear();

  size_t size() const { return offsets_.size() - 1; }
  size_t bytes() const { return offsets_.back(); }
  size_t capacity() const { return capacity_; }
  // REQUIRES: i < size().
  std::string_view text(size_t i) const {
    return std::string_view(data_ + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  // Every document's text (views into the buffer, valid until the input
  // changes); back to back, which is what the CUDA backend's in-place path
  // looks for.
  std::span<const std::string_view> texts() const;

  // Whether the memory is page-locked (the CUDA backend's input).
  virtual bool page_locked() const = 0;

 protected:
  FingerprintInput() = default;
  // Returns a buffer of at least `capacity` bytes holding the first `keep`
  // bytes of the current one (data_, which it may free).
  virtual Result<char*> Reallocate(size_t capacity, size_t keep) = 0;

  char* data_ = nullptr;
  size_t capacity_ = 0;

 private:
  std::vector<uint64_t> offsets_{0};  // size() + 1
  bool in_document_ = false;
  mutable std::vector<std::string_view> views_;
  mutable bool views_valid_ = false;
};

// An input in plain heap memory, the CPU backend's (and any backend's that
// has no memory of its own). `initial_bytes` is reserved up front.
Result<std::unique_ptr<FingerprintInput>> NewHostFingerprintInput(size_t initial_bytes);

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_INPUT_H_
