// The extraction that needs the format libraries: the table of
// extract_backend.h, linked into programs or built into the module
// neardup_extract.so.
#include <optional>
#include <string>
#include <utility>

#include "extract/extract_backend.h"
#include "extract/html_extractor.h"
#include "extract/office_extractor.h"
#include "extract/pdf_extractor.h"
#include "extract/warc_extractor.h"
#include "extract/zip_archive.h"

namespace neardup::internal {
namespace {

// A DOCX among zips, looked up with libzip (document_extractor.cc tells an
// ODT by its raw bytes first).
std::optional<DocumentFormat> ZipFormatByMembers(std::string_view bytes) {
  Result<ZipArchive> zip = ZipArchive::Open(bytes, "");
  if (!zip.ok()) return std::nullopt;
  if (zip->Has("word/document.xml")) return DocumentFormat::kDocx;
  return std::nullopt;
}

Result<ExtractionResult> OneExtractedDocument(DocumentFormat format, Result<std::string> text) {
  if (!text.ok()) return text.status();
  ExtractionResult result;
  result.format = format;
  result.documents.push_back(ExtractedDocument{"", std::move(text).value(), "", ""});
  return result;
}

Result<ExtractionResult> ExtractWithLibraries(std::string_view bytes, std::string_view name,
                                              DocumentFormat format,
                                              const ExtractOptions& options) {
  switch (format) {
    case DocumentFormat::kText:
      break;  // document_extractor.cc, without the libraries
    case DocumentFormat::kPdf:
      return ExtractPdf(bytes, name, options);
    case DocumentFormat::kDocx:
      return OneExtractedDocument(format, ExtractDocxText(bytes, name, options));
    case DocumentFormat::kOdt:
      return OneExtractedDocument(format, ExtractOdtText(bytes, name, options));
    case DocumentFormat::kHtml: {
      NEARDUP_ASSIGN_OR_RETURN(ExtractedDocument doc, ExtractHtml(bytes, name, options));
      ExtractionResult result;
      result.format = format;
      result.documents.push_back(std::move(doc));
      return result;
    }
    case DocumentFormat::kWarc:
      return ExtractWarc(bytes, name, options);
  }
  return InvalidArgumentError("unknown document format");
}

}  // namespace
}  // namespace neardup::internal

extern "C" __attribute__((visibility("default"))) const neardup::internal::ExtractBackend*
neardup_extract_backend_v1() {
  static const neardup::internal::ExtractBackend backend{
      .extract = &neardup::internal::ExtractWithLibraries,
      .zip_format = &neardup::internal::ZipFormatByMembers,
  };
  return &backend;
}
