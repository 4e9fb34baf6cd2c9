#include "neardup/fingerprint_input.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "neardup/check.h"

namespace neardup {
namespace {

// Plain heap memory.
class HostFingerprintInput final : public FingerprintInput {
 public:
  ~HostFingerprintInput() override { delete[] data_; }

  bool page_locked() const override { return false; }

 protected:
  Result<char*> Reallocate(size_t capacity, size_t keep) override {
    char* grown = new (std::nothrow) char[capacity];
    if (grown == nullptr) {
      return ResourceExhaustedError("fingerprint input: cannot allocate " +
                                    std::to_string(capacity) + " bytes");
    }
    if (keep > 0) std::memcpy(grown, data_, keep);
    delete[] data_;
    return grown;
  }
};

}  // namespace

Status FingerprintInput::Reserve(size_t bytes) {
  if (bytes <= capacity_) return Status::Ok();
  const size_t capacity = std::max({bytes, capacity_ * 2, size_t{4096}});
  NEARDUP_ASSIGN_OR_RETURN(char* grown, Reallocate(capacity, offsets_.back()));
  data_ = grown;
  capacity_ = capacity;
  views_valid_ = false;
  return Status::Ok();
}

Status FingerprintInput::Append(std::string_view text) {
  NEARDUP_ASSIGN_OR_RETURN(std::span<char> room, BeginDocument(text.size()));
  if (!text.empty()) std::memcpy(room.data(), text.data(), text.size());
  EndDocument(text.size());
  return Status::Ok();
}

Result<std::span<char>> FingerprintInput::BeginDocument(size_t max_bytes) {
  NEARDUP_CHECK(!in_document_) << "BeginDocument without EndDocument";
  NEARDUP_RETURN_IF_ERROR(Reserve(bytes() + max_bytes));
  in_document_ = true;
  return std::span<char>(data_ + bytes(), max_bytes);
}

void FingerprintInput::EndDocument(size_t bytes) {
  NEARDUP_CHECK(in_document_) << "EndDocument without BeginDocument";
  NEARDUP_CHECK(this->bytes() + bytes <= capacity_);
  in_document_ = false;
  offsets_.push_back(this->bytes() + bytes);
  views_valid_ = false;
}

void FingerprintInput::Clear() {
  offsets_.resize(1);
  in_document_ = false;
  views_valid_ = false;
}

std::span<const std::string_view> FingerprintInput::texts() const {
  if (!views_valid_) {
    views_.resize(size());
    for (size_t i = 0; i < views_.size(); ++i) views_[i] = text(i);
    views_valid_ = true;
  }
  return views_;
}

Result<std::unique_ptr<FingerprintInput>> NewHostFingerprintInput(size_t initial_bytes) {
  std::unique_ptr<FingerprintInput> input = std::make_unique<HostFingerprintInput>();
  NEARDUP_RETURN_IF_ERROR(input->Reserve(initial_bytes));
  return input;
}

}  // namespace neardup
