#include "text/char_class.h"

#include <utf8proc.h>

namespace neardup::internal {

bool IsNonAsciiWordCodePoint(char32_t c) {
  utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_NO;
}

bool IsNonAsciiPunctuation(char32_t c) {
  utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_PO;
}

}  // namespace neardup::internal
