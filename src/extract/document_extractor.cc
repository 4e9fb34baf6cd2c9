#include "neardup/document_extractor.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "extract/extract_backend.h"
#include "util/module_loader.h"

// Weak: absent from a program that loads the module instead.
extern "C" __attribute__((weak)) const neardup::internal::ExtractBackend*
neardup_extract_backend_v1();

namespace neardup {
namespace {

constexpr std::array<std::pair<DocumentFormat, std::string_view>, 6> kNames = {{
    {DocumentFormat::kText, "text"},
    {DocumentFormat::kPdf, "pdf"},
    {DocumentFormat::kDocx, "docx"},
    {DocumentFormat::kOdt, "odt"},
    {DocumentFormat::kHtml, "html"},
    {DocumentFormat::kWarc, "warc"},
}};

char LowerAsciiChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool EndsWithIgnoreCase(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         std::equal(suffix.begin(), suffix.end(),
                    text.end() - static_cast<ptrdiff_t>(suffix.size()),
                    [](char a, char b) { return LowerAsciiChar(a) == LowerAsciiChar(b); });
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(),
                    [](char a, char b) { return LowerAsciiChar(a) == LowerAsciiChar(b); });
}

std::optional<DocumentFormat> FormatByName(std::string_view name) {
  if (EndsWithIgnoreCase(name, ".gz")) {
    name.remove_suffix(3);
  } else if (EndsWithIgnoreCase(name, ".zst")) {
    name.remove_suffix(4);
  }
  static constexpr std::pair<std::string_view, DocumentFormat> kExtensions[] = {
      {".pdf", DocumentFormat::kPdf},   {".docx", DocumentFormat::kDocx},
      {".odt", DocumentFormat::kOdt},   {".html", DocumentFormat::kHtml},
      {".htm", DocumentFormat::kHtml},  {".xhtml", DocumentFormat::kHtml},
      {".warc", DocumentFormat::kWarc}, {".wet", DocumentFormat::kWarc},
  };
  for (const auto& [extension, format] : kExtensions) {
    if (EndsWithIgnoreCase(name, extension)) return format;
  }
  return std::nullopt;
}

bool LooksLikeHtml(std::string_view bytes) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  while (!bytes.empty() && (bytes.front() == ' ' || bytes.front() == '\t' ||
                            bytes.front() == '\n' || bytes.front() == '\r')) {
    bytes.remove_prefix(1);
  }
  return StartsWithIgnoreCase(bytes, "<!doctype html") || StartsWithIgnoreCase(bytes, "<html");
}

}  // namespace

std::string_view DocumentFormatName(DocumentFormat format) {
  for (const auto& [value, name] : kNames) {
    if (value == format) return name;
  }
  return "unknown";
}

Result<DocumentFormat> ParseDocumentFormat(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return InvalidArgumentError("unknown document format \"" + std::string(name) +
                              "\" (text, pdf, docx, odt, html or warc)");
}

DocumentFormat DetectDocumentFormat(std::string_view bytes, std::string_view name) {
  // PDF readers accept the header anywhere in the first 1024 bytes (junk
  // before it is common in files from mail gateways).
  if (bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos) return DocumentFormat::kPdf;
  if (bytes.substr(0, 7) == "WARC/1.") return DocumentFormat::kWarc;
  if (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4)) {
    // An OpenDocument file names its type in a first, stored member
    // "mimetype" (ODF 1.2 part 3, 3.3), visible in the raw bytes.
    constexpr std::string_view kOdtMime = "mimetypeapplication/vnd.oasis.opendocument.text";
    if (bytes.size() > 30 + kOdtMime.size() && bytes.substr(30, kOdtMime.size()) == kOdtMime &&
        (bytes.size() == 30 + kOdtMime.size() || bytes[30 + kOdtMime.size()] != '-')) {
      return DocumentFormat::kOdt;
    }
    // A DOCX is told by its members (libzip, in the extraction module). A
    // zip of another kind falls through to the name. When the module cannot
    // be loaded (the `neardup` CLI without it), the zip is taken for a DOCX
    // so that its extraction reports the module's error (a skip naming it)
    // instead of the zip's bytes being read as text.
    Result<const internal::ExtractBackend*> backend = internal::GetExtractBackend();
    if (!backend.ok()) return DocumentFormat::kDocx;
    if (std::optional<DocumentFormat> format = (*backend)->zip_format(bytes)) return *format;
  }
  if (std::optional<DocumentFormat> format = FormatByName(name)) return *format;
  if (LooksLikeHtml(bytes)) return DocumentFormat::kHtml;
  return DocumentFormat::kText;
}

Result<ExtractionResult> ExtractDocuments(std::string_view bytes, std::string_view name,
                                          DocumentFormat format, const ExtractOptions& options) {
  if (format == DocumentFormat::kText) {
    ExtractionResult result;
    result.documents.push_back(ExtractedDocument{"", std::string(bytes), "", ""});
    return result;
  }
  NEARDUP_ASSIGN_OR_RETURN(const internal::ExtractBackend* backend, internal::GetExtractBackend());
  return backend->extract(bytes, name, format, options);
}

std::vector<Result<ExtractionResult>> ExtractDocumentsInParallel(
    const std::vector<ExtractionInput>& inputs, const ExtractOptions& options) {
  std::vector<Result<ExtractionResult>> results(inputs.size(), InternalError("not extracted"));
  // Grain 1: one PDF may take a hundred times longer than the next file.
  tbb::parallel_for(tbb::blocked_range<size_t>(0, inputs.size(), 1),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t i = range.begin(); i != range.end(); ++i) {
                        results[i] = ExtractDocuments(inputs[i].bytes, inputs[i].name,
                                                      inputs[i].format, options);
                      }
                    });
  return results;
}

namespace internal {

Result<const ExtractBackend*> GetExtractBackend() {
  // Linked in, the weak reference is the table's function; else the module.
  static const Result<const ExtractBackend*> backend =
      LoadModuleTable(&neardup_extract_backend_v1, "neardup_extract.so",
                      "neardup_extract_backend_v1", "reads PDF, DOCX, ODT, HTML and WARC files");
  return backend;
}

}  // namespace internal
}  // namespace neardup
