// Fuzzes the document extractors (PDF through poppler, DOCX and ODT through
// libzip and libxml2, HTML through gumbo, WARC framing) on outside bytes: the
// first byte picks the extractor, the rest is the file; format detection
// runs on it too. Must never crash, hang or read out of bounds; every
// failure is a Status. OCR is off (Tesseract on noise is slow and adds no
// parser of outside bytes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "neardup/document_extractor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr neardup::DocumentFormat kFormats[] = {
      neardup::DocumentFormat::kPdf, neardup::DocumentFormat::kDocx, neardup::DocumentFormat::kOdt,
      neardup::DocumentFormat::kHtml, neardup::DocumentFormat::kWarc};
  const neardup::DocumentFormat format = kFormats[data[0] % 5];
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  neardup::ExtractOptions options;
  options.max_uncompressed_bytes = 4 << 20;
  options.max_markup_bytes = 1 << 20;
  neardup::DetectDocumentFormat(bytes, "fuzz");
  neardup::ExtractDocuments(bytes, "fuzz", format, options).status().IgnoreError();
  return 0;
}
