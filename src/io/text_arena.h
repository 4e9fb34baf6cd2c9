// TextArena: one growing byte buffer that a chunk's unescaped JSON strings
// are written into, so that a document's text costs no allocation of its own
// (document_block.h). Strings in it are addressed by offset, because growing
// the buffer moves it; views are made once the chunk is parsed.
// Cost: the buffer doubles when full (uninitialised memory, no zero fill) and
// is kept for the next chunk.
// Thread safety: a plain value type.
#ifndef NEARDUP_IO_TEXT_ARENA_H_
#define NEARDUP_IO_TEXT_ARENA_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace neardup::internal {

class TextArena {
 public:
  // Forgets the bytes written; keeps the buffer.
  void Clear() { size_ = 0; }
  // Writable room for at least `bytes` bytes at offset size(); Commit says
  // how many of them were written. Invalidates earlier pointers.
  char* Reserve(size_t bytes) {
    if (bytes > capacity_ - size_) {
      const size_t capacity = std::max({size_ + bytes, 2 * capacity_, size_t{4096}});
      std::unique_ptr<char[]> grown = std::make_unique_for_overwrite<char[]>(capacity);
      if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
      data_ = std::move(grown);
      capacity_ = capacity;
    }
    return data_.get() + size_;
  }
  void Commit(size_t bytes) { size_ += bytes; }
  // Drops everything written after `size` (a retry writes anew from there).
  void Truncate(size_t size) { size_ = std::min(size_, size); }

  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_TEXT_ARENA_H_
