// The token class of the non-ASCII bytes of one 64-byte block, for the block
// tokenizer (text/token_scan.h): bit i of the result is set when byte i is
// >= 0x80 and belongs to a code point that is in a token (kWord: a letter,
// mark or number; kWhitespace: anything but White_Space, invalid subparts
// included), exactly as ForEachRun (text/tokenizer.h) decides, byte by byte.
//
// Two versions:
// - ClassifyNonAsciiScalar decodes each code point (DecodeUtf8) and looks its
//   class up; exact for any bytes. The reference for the other.
// - ClassifyNonAsciiAvx512 classifies the whole block in registers:
//   kWord: the block is checked to be well-formed UTF-8 (lead bytes by mask,
//     each lead's continuation bytes by shifted masks, the second-byte ranges
//     of E0 ED F0 F4 by compares). Then every byte lane is classified in place
//     as if a lead stood there, from the lead and the next two bytes (the
//     block shifted by one and two with vpermt2b): a 2-byte code point
//     (< U+0800) tests its bit in the first 256 bytes of the BMP word bitset
//     (four registers, two vpermi2b); a 3-byte one looks its page (code point
//     >> 8) up in a 256-byte page table (two vpermi2b): a page all of one
//     class answers at once, one of the four mixed pages kept in registers
//     (U+2000, U+3000, U+0900, U+0E00: punctuation, kana, Devanagari, Thai)
//     tests its bit there (one vpermi2b), any other mixed page is gathered
//     from the bitset (vpgatherdd, rare). The lead lanes' answers, shifted
//     over their continuation bytes, are the token bits. 4-byte code points
//     (above the BMP) take the scalar lookup one at a time.
//     A block that is not well-formed returns false: the caller runs the
//     scalar version, so invalid UTF-8 keeps the scalar behaviour exactly.
//   kWhitespace: no decode: every lead byte >= 0xC2 starts a code point in
//     ForEachRun (no continuation byte is >= 0xC0), so the White_Space code
//     points are exactly the occurrences of their byte patterns (C2 85, C2 A0,
//     E1 9A 80, E2 80 80..8A, E2 80 A8, E2 80 A9, E2 80 AF, E2 81 9F,
//     E3 80 80); every other byte >= 0x80 (valid or not) is in a token. Exact
//     for any bytes; never returns false.
// non_ascii_class_test.cc compares both on every BMP code point at every
// block offset, random mixes of 1-4 byte sequences and random bytes.
//
// Cost (AVX-512): about 50 (2-byte code points only) to 75 vector and mask
// instructions per kWord block with bytes >= 0x80, whatever their number,
// plus two gathers for a block with code points of the rarer mixed pages;
// about 35 per kWhitespace block. The scalar version: a decode and a lookup
// per code point.
// Thread safety: pure functions.
#ifndef NEARDUP_TEXT_NON_ASCII_CLASS_H_
#define NEARDUP_TEXT_NON_ASCII_CLASS_H_

#include <cstddef>
#include <cstdint>

namespace neardup::internal {

struct NonAsciiBlockClass {
  // Bit i: byte i of the block is >= 0x80, belongs to a code point that
  // starts in this block (at or after the spill), and is in a token.
  uint64_t token_bits = 0;
  // The bytes of the next block that belong to the code point (or invalid
  // subpart) that starts in this block and runs past its end, and whether
  // that code point is in a token. 0 when none runs past the end.
  uint32_t spill_length = 0;
  bool spill_in_token = false;
  // kWord: some code point that starts in this block and is in a token has a
  // lead byte of text/script_segments.h's IsSegmentLeadByte set: its token
  // may need script segmentation. (Code points outside tokens do not count:
  // U+FFFD, lead EF, fills repaired 8-bit text.) Unspecified for kWhitespace.
  bool segment_leads = false;
};

// `block` points at the block: the text's bytes [block, block + available)
// may be read (available >= 1; the block is its first min(available, 64)
// bytes, later bytes are looked at only to finish a code point that starts in
// the block). `high`: bit i set for each byte i >= 0x80 of the block that does
// not belong to a code point of the previous block.
// REQUIRES: the bits of `high` are within the block (below `available`), and
// the bytes before the lowest bit that are >= 0x80 all belong to the previous
// block's code point.
NonAsciiBlockClass ClassifyNonAsciiScalar(bool word, const char* block, size_t available,
                                          uint64_t high);

// The same result from the whole block at once, where it can: `spill_length`
// is the previous block's (the first bytes of this block that are not to be
// classified here, all continuation bytes). Returns false, leaving *out
// unspecified, when word and the block's bytes are not well-formed UTF-8 (the
// caller then runs ClassifyNonAsciiScalar on the same block). One
// difference in the spill, which gives the same tokens: for kWhitespace, a
// unit in a token that runs past the block gets spill_length 0, because its
// bytes in the next block are continuation bytes, and those classified on
// their own (by either version: a lone continuation byte is an invalid
// subpart) are in a token too.
// REQUIRES: a CPU with AVX-512 F, BW, VBMI, VBMI2 and BMI2; available >= 1;
// spill_length <= 3 and spill_length < available.
bool ClassifyNonAsciiAvx512(bool word, const char* block, size_t available, uint32_t spill_length,
                            NonAsciiBlockClass* out);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_NON_ASCII_CLASS_H_
