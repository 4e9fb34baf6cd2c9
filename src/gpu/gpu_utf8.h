// The GPU path's UTF-8 normalisation and token marks, written once for both
// compilers (like gpu/gpu_hash.h): the kernels of gpu/cuda_utf8_kernels.cuh
// call exactly these functions, and gpu_utf8_test.cc runs them on the host
// against the CPU path (Normalize, ForEachToken, TokenHasher).
//
// What it computes: the normalised bytes of a packed batch and, per output
// byte, the token stage's attribute (kAttrToken) and, for the word tokenizer
// with script segmentation, a segment code. It works on 16-byte chunks of the
// input, each processing the units (a code point, or a maximal invalid
// subpart) that start in it, so that a pass can size each chunk's output, a
// scan place it and a second pass write it (no loop over documents).
//
// Why it is exact: gpu/gpu_utf8_tables.h gives a table entry only to code
// points the CPU normaliser treats as a unit of their own (ASCII, and under
// NFKC or case folding the CPU's own context-free table: no composition or
// reordering crosses them, normalizer_tables.h); a document all of whose
// valid code points have an entry normalises to the concatenation of each
// unit's output, which the table holds (Normalize of that code point alone),
// and an invalid subpart becomes U+FFFD exactly as Normalize repairs it. A
// document with any other code point (one that composes with its
// neighbours, a supplementary-plane one) is flagged and fingerprinted on the
// CPU. Token membership is per code point (general category or White_Space),
// so each output code point's attribute is that of ForEachToken on the
// output alone. Script segmentation (text/script_segments.h) cuts a word
// token before a non-mark code point that differs in class from the last
// non-mark before it in the token, or when either is kSingle: SegmentCutHd.
//
// Cost: O(bytes); a chunk holding a byte >= 0x80 finds its document by a
// binary search over the offsets. Thread safety: pure functions.
#ifndef NEARDUP_GPU_GPU_UTF8_H_
#define NEARDUP_GPU_GPU_UTF8_H_

#include <cstdint>

#include "gpu/gpu_hash.h"
#include "gpu/gpu_tables.h"
#include "gpu/gpu_token.h"

namespace neardup::internal::gpu {

// Segment codes of an output byte (the SegmentClass of the code point that
// starts there, plus one; 0 on continuation bytes and outside word tokens).
inline constexpr uint8_t kSegNone = 0;
inline constexpr uint8_t kSegOther = 1;
inline constexpr uint8_t kSegSingle = 2;
inline constexpr uint8_t kSegKatakana = 3;
inline constexpr uint8_t kSegMark = 4;
// An output attribute as the tables store it: kAttrToken | segment code << 4.
inline constexpr int kSegShift = 4;

// Bits of a code point's table entry. Covered entries are either the
// identity (the output is the input sequence; bits 0-7: the attribute of its
// first byte, the others carry its kAttrToken bit) or a place in the pools
// (bits 0-19: offset, bits 24-27: length, 0 for a deleted code point).
inline constexpr uint32_t kUtf8Covered = uint32_t{1} << 31;
inline constexpr uint32_t kUtf8Identity = uint32_t{1} << 30;
inline constexpr int kUtf8LengthShift = 24;
inline constexpr uint32_t kUtf8OffsetMask = (uint32_t{1} << 20) - 1;
// Input bytes per chunk (a thread's share of a pass).
inline constexpr uint32_t kUtf8ChunkBytes = 16;

// The tables as the kernels read them (device or host pointers). Entries of
// the BMP in two stages: stage2[stage1[cp >> 8] * 256 + (cp & 255)].
struct Utf8TablesView {
  const uint16_t* stage1 = nullptr;  // 256 entries
  const uint32_t* stage2 = nullptr;
  const uint8_t* pool_bytes = nullptr;
  const uint8_t* pool_attrs = nullptr;  // one attribute per pool byte
  // ASCII: GpuRecipeTables::byte_class and mapped (the ASCII path's tables).
  const uint8_t* ascii_class = nullptr;
  const uint8_t* ascii_mapped = nullptr;
  uint32_t invalid_entry = 0;  // a pool entry: the output of an invalid subpart
};

struct Utf8DecodedHd {
  uint32_t code_point;  // meaningful when valid
  uint32_t length;      // bytes consumed, >= 1
  bool valid;
};

// DecodeUtf8 (text/utf8.h) on the `available` >= 1 bytes at s: the same
// sequence or maximal invalid subpart (Unicode Table 3-7).
NEARDUP_HD Utf8DecodedHd DecodeUtf8Hd(const uint8_t* s, uint32_t available) {
  const uint32_t lead = s[0];
  if (lead < 0x80) return {lead, 1, true};
  uint32_t length;
  uint32_t low = 0x80;
  uint32_t high = 0xBF;
  uint32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {0xFFFD, 1, false};
  }
  if (available < 2 || s[1] < low || s[1] > high) return {0xFFFD, 1, false};
  cp = (cp << 6) | (s[1] & 0x3F);
  for (uint32_t i = 2; i < length; ++i) {
    if (i >= available || (s[i] & 0xC0) != 0x80) return {0xFFFD, i, false};
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  return {cp, length, true};
}

NEARDUP_HD uint32_t Utf8EntryHd(const Utf8TablesView& t, uint32_t cp) {
  if (cp >= 0x10000) return 0;  // supplementary planes: the CPU's
  return t.stage2[uint32_t{t.stage1[cp >> 8]} * 256 + (cp & 255)];
}

// The first index of sorted[0, count) whose value is > value.
NEARDUP_HD uint32_t UpperBoundHd(const uint32_t* sorted, uint32_t count, uint32_t value) {
  uint32_t lo = 0;
  uint32_t hi = count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (sorted[mid] <= value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The document [offsets[d], offsets[d + 1]) that holds byte i < offsets[num_docs].
NEARDUP_HD uint32_t DocumentOfByteHd(const uint32_t* offsets, uint32_t num_docs, uint32_t i) {
  return UpperBoundHd(offsets, num_docs + 1, i) - 1;
}

NEARDUP_HD bool IsContinuationByteHd(uint8_t c) { return (c & 0xC0) == 0x80; }

// The first unit start at or after `begin` in the document [doc_begin,
// doc_end) holding it. A continuation byte is inside a unit only when the
// nearest non-continuation byte before it, at most 3 back and within the
// document, decodes to a unit that reaches it (a non-continuation byte always
// starts a unit: no decode runs over one).
NEARDUP_HD uint32_t FirstUnitStartHd(const uint8_t* text, uint32_t doc_begin, uint32_t doc_end,
                                     uint32_t begin) {
  if (begin == doc_begin || !IsContinuationByteHd(text[begin])) return begin;
  for (uint32_t back = 1; back <= 3 && back <= begin - doc_begin; ++back) {
    const uint32_t j = begin - back;
    if (IsContinuationByteHd(text[j])) {
      if (j == doc_begin) break;
      continue;
    }
    const uint32_t end = j + DecodeUtf8Hd(text + j, doc_end - j).length;
    return end > begin ? end : begin;
  }
  return begin;
}

// Walks the units that start in [begin, stop) (begin: any byte; stop <= the
// batch's size; a unit may run past stop, never past its document) and
// tells `sink`:
//   sink.Emit(bytes, pool_attrs, len, first_attr, rest_attr): output bytes;
//     their attributes are pool_attrs[i] when pool_attrs is not null, else
//     first_attr for the first and rest_attr for the others;
//   sink.Invalid(d): an invalid subpart in document d;
//   sink.Uncovered(d): a code point of document d that the tables do not
//     cover (nothing is emitted for it: the document is the CPU's).
template <class Sink>
NEARDUP_HD void Utf8WalkHd(const uint8_t* text, const uint32_t* offsets, uint32_t num_docs,
                           uint32_t begin, uint32_t stop, const Utf8TablesView& t, Sink& sink) {
  constexpr uint32_t kNoDocument = 0xFFFFFFFFu;
  uint32_t d = kNoDocument;
  uint32_t doc_begin = 0;
  uint32_t doc_end = 0;
  uint32_t p = begin;
  if (p < stop && IsContinuationByteHd(text[p])) {
    d = DocumentOfByteHd(offsets, num_docs, p);
    doc_begin = offsets[d];
    doc_end = offsets[d + 1];
    p = FirstUnitStartHd(text, doc_begin, doc_end, p);
  }
  while (p < stop) {
    const uint8_t c = text[p];
    if (c < 0x80) {
      const uint8_t cls = t.ascii_class[c];
      if ((cls & kByteKept) != 0) {
        const bool token = (cls & kByteToken) != 0;
        const uint8_t attr = token ? (kAttrToken | (kSegOther << kSegShift)) : 0;
        sink.Emit(t.ascii_mapped + c, nullptr, 1, attr, attr);
      }
      ++p;
      continue;
    }
    if (d == kNoDocument || p >= doc_end) {
      d = DocumentOfByteHd(offsets, num_docs, p);
      doc_begin = offsets[d];
      doc_end = offsets[d + 1];
    }
    const Utf8DecodedHd u = DecodeUtf8Hd(text + p, doc_end - p);
    uint32_t entry = t.invalid_entry;
    if (!u.valid) {
      sink.Invalid(d);
    } else {
      entry = Utf8EntryHd(t, u.code_point);
      if ((entry & kUtf8Covered) == 0) {
        sink.Uncovered(d);
        p += u.length;
        continue;
      }
    }
    if ((entry & kUtf8Identity) != 0) {
      const auto first = static_cast<uint8_t>(entry & 0xFF);
      sink.Emit(text + p, nullptr, u.length, first, static_cast<uint8_t>(first & kAttrToken));
    } else {
      const uint32_t offset = entry & kUtf8OffsetMask;
      const uint32_t len = (entry >> kUtf8LengthShift) & 0xF;
      if (len > 0) sink.Emit(t.pool_bytes + offset, t.pool_attrs + offset, len, 0, 0);
    }
    p += u.length;
  }
}

// Counts a walk's output bytes and reports its documents' invalid subparts
// and uncovered code points (to per-document arrays, either may be null).
// On the device the invalid counts are added atomically (several chunks may
// hold subparts of one document).
struct Utf8SizeSink {
  uint32_t bytes = 0;
  uint32_t* invalid = nullptr;   // per document
  uint8_t* uncovered = nullptr;  // per document: 1 = for the CPU
  NEARDUP_HD void Emit(const uint8_t*, const uint8_t*, uint32_t len, uint8_t, uint8_t) {
    bytes += len;
  }
  NEARDUP_HD void Invalid(uint32_t d) {
    if (invalid == nullptr) return;
#if defined(__CUDA_ARCH__)
    atomicAdd(invalid + d, 1u);
#else
    ++invalid[d];
#endif
  }
  NEARDUP_HD void Uncovered(uint32_t d) {
    if (uncovered != nullptr) uncovered[d] = 1;
  }
};

// Writes a walk's output at normalized[pos], its token attributes at
// attrs[pos] and (when seg is not null) its segment codes at seg[pos].
struct Utf8WriteSink {
  uint8_t* normalized;
  uint8_t* attrs;
  uint8_t* seg;
  uint32_t pos;
  NEARDUP_HD void Emit(const uint8_t* bytes, const uint8_t* pool_attrs, uint32_t len,
                       uint8_t first_attr, uint8_t rest_attr) {
    for (uint32_t i = 0; i < len; ++i) {
      const uint8_t a = pool_attrs != nullptr ? pool_attrs[i] : (i == 0 ? first_attr : rest_attr);
      normalized[pos] = bytes[i];
      attrs[pos] = a & kAttrToken;
      if (seg != nullptr) seg[pos] = a >> kSegShift;
      ++pos;
    }
  }
  NEARDUP_HD void Invalid(uint32_t) {}
  NEARDUP_HD void Uncovered(uint32_t) {}
};

// The end of chunk v of a batch of n bytes.
NEARDUP_HD uint32_t Utf8ChunkEndHd(uint32_t v, uint32_t n) {
  const uint32_t end = (v + 1) * kUtf8ChunkBytes;
  return end < n ? end : n;
}

// Pass 1 of the normalisation, chunk v: its output bytes; each invalid
// subpart counted in invalid[d] and each uncovered code point flagged in
// uncovered[d] (per document; either may be null).
NEARDUP_HD uint32_t Utf8ChunkSizeHd(const uint8_t* text, const uint32_t* offsets, uint32_t num_docs,
                                    uint32_t n, uint32_t v, const Utf8TablesView& t,
                                    uint32_t* invalid, uint8_t* uncovered) {
  Utf8SizeSink sink;
  sink.invalid = invalid;
  sink.uncovered = uncovered;
  Utf8WalkHd(text, offsets, num_docs, v * kUtf8ChunkBytes, Utf8ChunkEndHd(v, n), t, sink);
  return sink.bytes;
}

// Pass 2, chunk v: writes its output from chunk_positions[v] (the exclusive
// scan of pass 1's sizes).
NEARDUP_HD void Utf8ChunkWriteHd(const uint8_t* text, const uint32_t* offsets, uint32_t num_docs,
                                 uint32_t n, uint32_t v, const Utf8TablesView& t,
                                 const uint32_t* chunk_positions, uint8_t* normalized,
                                 uint8_t* attrs, uint8_t* seg) {
  Utf8WriteSink sink{normalized, attrs, seg, chunk_positions[v]};
  Utf8WalkHd(text, offsets, num_docs, v * kUtf8ChunkBytes, Utf8ChunkEndHd(v, n), t, sink);
}

// Where document d's output starts (d <= num_docs): its chunk's position
// plus the output of the units of that chunk before it (a document start is
// always a unit start).
NEARDUP_HD uint32_t Utf8NormalizedOffsetHd(const uint8_t* text, const uint32_t* offsets,
                                           uint32_t num_docs, uint32_t n, uint32_t d,
                                           const Utf8TablesView& t, const uint32_t* chunk_positions,
                                           uint32_t normalized_size) {
  const uint32_t o = offsets[d];
  if (o >= n) return normalized_size;
  const uint32_t v = o / kUtf8ChunkBytes;
  Utf8SizeSink sink;
  Utf8WalkHd(text, offsets, num_docs, v * kUtf8ChunkBytes, o, t, sink);
  return chunk_positions[v] + sink.bytes;
}

// Whether script segmentation starts a new token at normalised position p
// (the attributes and segment codes of the whole batch written; attrs holds
// the kAttrDocStart marks of document starts): p starts a non-mark code
// point of a word token, not its first, and it is kSingle, or the last
// non-mark before it in the token is kSingle or of another class (kOther
// when only marks precede it): ScriptSegmentCursor's rule.
NEARDUP_HD bool SegmentCutHd(const uint8_t* attrs, const uint8_t* seg, uint32_t p) {
  const uint8_t c = seg[p];
  if (c == kSegNone || c == kSegMark) return false;
  if ((attrs[p] & kAttrDocStart) != 0) return false;
  uint8_t base = kSegOther;
  for (uint32_t q = p; q-- > 0;) {
    if ((attrs[q] & kAttrToken) == 0) {
      if (q + 1 == p) return false;  // p starts its token
      break;
    }
    const uint8_t s = seg[q];
    if (s != kSegNone && s != kSegMark) {
      base = s;
      break;
    }
    if ((attrs[q] & kAttrDocStart) != 0) break;
  }
  return c == kSegSingle || base == kSegSingle || c != base;
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_UTF8_H_
