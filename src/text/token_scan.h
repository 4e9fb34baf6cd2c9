// TokenScanner: the kWord and kWhitespace tokenizers (text/tokenizer.h) as a
// block scanner. Each 64-byte block of the text becomes a 64-bit mask with
// bit i set when byte i belongs to a token; the token boundaries are the set
// bits of mask ^ (mask << 1), turned into spans by vpcompressb (AVX-512
// VBMI2), vpcompressd (other AVX-512) or count-trailing-zeros. ASCII bytes
// are classified 64 (AVX-512BW), 32 (AVX2) or 1 (portable) at a time; the
// bytes >= 0x80 of a block are classified exactly as ForEachRun does by
// text/non_ascii_class.h: with AVX-512 VBMI2 the whole block's code points
// at once, else each decoded in turn, a code point's class copied to all its
// bytes (and carried into the next block when it straddles the boundary).
//
// The tokens are exactly those of ForEachToken for the same kind, in the same
// order, for any bytes (invalid UTF-8 included): token_hasher_test.cc,
// non_ascii_class_test.cc and fuzz/token_scan_fuzz.cc compare every path with
// it on random bytes and text.
//
// Cost: O(bytes); about 0.1 instructions per ASCII byte for the mask
// (AVX-512) plus a few per token; for a block with bytes >= 0x80, 35-75
// more (AVX-512 VBMI2), else a decode and a lookup per non-ASCII code point.
// No allocation.
// Thread safety: a scanner is one cursor over one text; use one per thread.
#ifndef NEARDUP_TEXT_TOKEN_SCAN_H_
#define NEARDUP_TEXT_TOKEN_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hash/cpu_path.h"
#include "neardup/recipe.h"

namespace neardup::internal {

// A token: text.substr(begin, length).
struct TokenSpan {
  size_t begin;
  size_t length;
};

class TokenScanner {
 public:
  // At most this many tokens end in one block (each needs a separator after
  // it), plus the last token of the text.
  static constexpr size_t kMaxTokensPerBlock = 33;

  // REQUIRES: kind is kWord or kWhitespace; path is not kReference and
  // CpuSupports(path). `text` must outlive the scanner.
  TokenScanner(TokenizerKind kind, CpuPath path, std::string_view text);

  // The same tokens from the text's token bits, computed beforehand (the
  // normalizer's FormTokenBits, text/normalizer.h): bit i of token_bits[j]
  // is set when byte 64j + i is a token byte of `kind`. The scanner reads
  // one word per block instead of the block's bytes. REQUIRES: the text is
  // ASCII (no byte >= 0x80), token_bits holds text.size() / 64 + 1 words
  // with every bit past the text zero, and outlives the scanner.
  TokenScanner(TokenizerKind kind, CpuPath path, std::string_view text, const uint64_t* token_bits);

  // Writes the next tokens to out[0, n) and returns n; 0 means the text is
  // done. Stops between blocks, so n <= capacity.
  // REQUIRES: capacity >= kMaxTokensPerBlock.
  size_t Next(TokenSpan* out, size_t capacity);

  // For tests: Next takes the AVX-512 path's kernels for CPUs without VBMI2
  // (NextAvx512Bw: the BW classifier, spans by vpcompressd) even on a CPU
  // that has VBMI2, whose scanner never picks them. Call before Next.
  // REQUIRES: the scanner was made for CpuPath::kAvx512.
  void UseAvx512BwForTesting();

  // kWord: whether the tokens returned by the last Next call may hold a
  // lead byte of text/script_segments.h's IsSegmentLeadByte, the ones that
  // need script segmentation. False guarantees none does (every byte of
  // those tokens lies in blocks whose non-ASCII classification saw no such
  // lead); true says nothing. Costs one OR per block with bytes >= 0x80.
  bool MayHoldSegmentLeads() const { return segment_leads_; }

  // Which byte classifier runs: ASCII token bits of 64 bytes, and in *high the
  // bytes >= 0x80. Exposed for tests.
  using ClassifyFn = uint64_t (*)(const char* block, uint64_t* high);

 private:
  // The block loop of Next with a byte classifier and a token emitter as
  // function objects, so that each path's instantiation inlines both (the
  // AVX-512 one makes no call per block). Blocks with bytes >= 0x80 go to
  // non_ascii_block (the AVX-512 block kernel of text/non_ascii_class.h, or
  // one that declines every block), and to ClassifyNonAsciiScalar where it
  // declines.
  template <class Classify, class NonAscii, class Emit>
  size_t Scan(TokenSpan* out, size_t capacity, Classify classify, NonAscii non_ascii_block,
              Emit emit);

  // Next on AVX-512 VBMI2 (compress_).
  size_t NextAvx512(TokenSpan* out, size_t capacity);

  // Next on AVX-512 without VBMI2 (avx512bw_): Scan (or ScanBits) with the
  // AVX-512 BW classifier inlined and spans by vpcompressd.
  size_t NextAvx512Bw(TokenSpan* out, size_t capacity);

  // The block loop over token_bits_, with a token emitter as in Scan.
  template <class Emit>
  size_t ScanBits(TokenSpan* out, size_t capacity, Emit emit);
  size_t NextBitsAvx512(TokenSpan* out, size_t capacity);

  ClassifyFn classify_;
  bool word_;      // kWord; else kWhitespace
  bool compress_;  // tokens from edge bits with AVX-512 VBMI2 vpcompressb
  bool avx512bw_;  // the AVX-512 path without compress_ (NextAvx512Bw)
  std::string_view text_;
  const uint64_t* token_bits_ = nullptr;  // null: the blocks are classified
  size_t pos_ = 0;                        // start of the next block
  bool in_token_ = false;                 // the byte before pos_ is in a token
  size_t token_begin_ = 0;                // start of the open token when in_token_
  uint32_t spill_length_ = 0;             // leading bytes of the next block that belong
  bool spill_in_token_ = false;           // to a code point of this one, and its class
  bool done_ = false;
  // MayHoldSegmentLeads; at the start of a call, whether the open token's
  // blocks (all in the previous call: a call that ends with a token open
  // began that token, else it emitted nothing and ran to the end) had one.
  bool segment_leads_ = false;
};

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_SCAN_H_
