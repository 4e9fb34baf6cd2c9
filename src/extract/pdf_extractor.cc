#include "extract/pdf_extractor.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>

#include "extract/ocr_engine.h"

namespace neardup::internal {
namespace {

// 100 megapixels: an A4 page at 300 dpi is 8.7; a rendered page holds one
// byte per pixel.
constexpr double kMaxOcrPixels = 100e6;

void IgnorePopplerMessage(const std::string& /*message*/, void* /*closure*/) {}

// poppler prints every syntax error of a damaged file on stderr; the caller
// gets one Status instead.
void SilencePopplerOnce() {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function(IgnorePopplerMessage, nullptr); });
}

bool IsBlank(const std::string& text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f') return false;
  }
  return true;
}

std::string Utf8(const poppler::ustring& text) {
  poppler::byte_array bytes = text.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

void AppendPage(std::string page_text, std::string* out) {
  while (!page_text.empty() &&
         (page_text.back() == '\n' || page_text.back() == '\f' || page_text.back() == ' ')) {
    page_text.pop_back();
  }
  out->append(page_text);
  out->push_back('\n');
}

Result<ExtractionResult> ExtractPdfUnguarded(std::string_view bytes, std::string_view name,
                                             const ExtractOptions& options) {
  SilencePopplerOnce();
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return ResourceExhaustedError(std::string(name) + ": PDF of " + std::to_string(bytes.size()) +
                                  " bytes is larger than poppler reads (2 GiB)");
  }
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (doc == nullptr) {
    return DataLossError(std::string(name) + ": not a readable PDF (damaged or not a PDF)");
  }
  if (doc->is_locked()) {
    return FailedPreconditionError(
        std::string(name) + ": the PDF is encrypted with a password; its text cannot be read");
  }
  ExtractionResult result;
  result.format = DocumentFormat::kPdf;
  result.pages = static_cast<uint64_t>(std::max(doc->pages(), 0));
  ExtractedDocument extracted;
  std::unique_ptr<OcrEngine> ocr;
  for (int i = 0; i < doc->pages(); ++i) {
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (page == nullptr) {
      result.pages_without_text.push_back(static_cast<uint32_t>(i + 1));
      continue;
    }
    std::string text =
        Utf8(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout));
    if (!IsBlank(text)) {
      AppendPage(std::move(text), &extracted.text);
      continue;
    }
    if (options.ocr) {
      if (ocr == nullptr) {
        NEARDUP_ASSIGN_OR_RETURN(ocr, OcrEngine::Create(options.ocr_language));
      }
      poppler::page_renderer renderer;
      renderer.set_image_format(poppler::image::format_gray8);
      renderer.set_render_hints(poppler::page_renderer::antialiasing |
                                poppler::page_renderer::text_antialiasing);
      // A hostile page may claim to be metres wide: the resolution drops so
      // that the rendered image stays within kMaxOcrPixels.
      const poppler::rectf box = page->page_rect();
      const double inches =
          std::max(box.width(), 1.0) * std::max(box.height(), 1.0) / (72.0 * 72.0);
      const double dpi = std::min<double>(options.ocr_dpi, std::sqrt(kMaxOcrPixels / inches));
      poppler::image image = renderer.render_page(page.get(), dpi, dpi);
      if (image.is_valid() && image.width() > 0 && image.height() > 0) {
        NEARDUP_ASSIGN_OR_RETURN(
            text,
            ocr->Read(reinterpret_cast<const unsigned char*>(image.const_data()), image.width(),
                      image.height(), image.bytes_per_row(), static_cast<int>(dpi)));
        if (!IsBlank(text)) {
          ++result.pages_read_by_ocr;
          AppendPage(std::move(text), &extracted.text);
          continue;
        }
      }
    }
    result.pages_without_text.push_back(static_cast<uint32_t>(i + 1));
  }
  result.documents.push_back(std::move(extracted));
  return result;
}

}  // namespace

Result<ExtractionResult> ExtractPdf(std::string_view bytes, std::string_view name,
                                    const ExtractOptions& options) {
  // poppler and Tesseract report through return values, but allocate with
  // new: a damaged file claiming huge sizes may throw bad_alloc, which must
  // not cross the library boundary.
  try {
    return ExtractPdfUnguarded(bytes, name, options);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(std::string(name) + ": out of memory reading the PDF");
  } catch (const std::exception& e) {
    return DataLossError(std::string(name) + ": the PDF could not be read: " + e.what());
  }
}

}  // namespace neardup::internal

#if defined(__SANITIZE_ADDRESS__)
// poppler looks fonts up through fontconfig, which keeps a once-per-process
// cache that it never frees (Debian 12's libfontconfig 2.14): not a leak of
// neardup's, and LeakSanitizer would fail every program that reads a PDF.
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig.so\n"; }
#endif
