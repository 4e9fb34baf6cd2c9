#include "text/script_segments.h"

#include <utf8proc.h>

namespace neardup::internal {
namespace {

bool IsMark(char32_t c) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_MN || category == UTF8PROC_CATEGORY_MC ||
         category == UTF8PROC_CATEGORY_ME;
}

// The classes by range, marks not yet told apart (the caller asks utf8proc
// only for code points of the segmented ranges).
SegmentClass RangeClass(char32_t c) {
  if (c >= 0x4E00 && c <= 0x9FFF) return SegmentClass::kSingle;  // the common case first
  if (c >= 0x3040 && c <= 0x309F) return SegmentClass::kSingle;  // Hiragana
  if ((c >= 0x30A0 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
      (c >= 0xFF66 && c <= 0xFF9F)) {
    return SegmentClass::kKatakana;
  }
  if ((c >= 0x3005 && c <= 0x3007) || (c >= 0x3021 && c <= 0x3029) ||
      (c >= 0x3038 && c <= 0x303B) || (c >= 0x3400 && c <= 0x4DBF) ||
      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3FFFF)) {
    return SegmentClass::kSingle;  // Han
  }
  if ((c >= 0x3100 && c <= 0x312F) || (c >= 0x31A0 && c <= 0x31BF)) {
    return SegmentClass::kSingle;  // Bopomofo
  }
  if ((c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F) ||
      (c >= 0x1780 && c <= 0x17FF) || (c >= 0x19E0 && c <= 0x19FF) ||
      (c >= 0xA9E0 && c <= 0xA9FF) || (c >= 0xAA60 && c <= 0xAA7F)) {
    return SegmentClass::kSingle;  // Thai, Lao, Myanmar, Khmer
  }
  return SegmentClass::kOther;
}

}  // namespace

SegmentClass ScriptSegmentClass(char32_t c) {
  if (c < 0x0300) return SegmentClass::kOther;  // no marks below U+0300
  // Han ideographs, the bulk of Chinese and Japanese text, are never marks:
  // no lookup.
  if (c >= 0x4E00 && c <= 0x9FFF) return SegmentClass::kSingle;
  if (IsMark(c)) return SegmentClass::kMark;
  return RangeClass(c);
}

}  // namespace neardup::internal
