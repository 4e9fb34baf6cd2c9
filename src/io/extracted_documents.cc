#include "io/extracted_documents.h"

#include <optional>
#include <utility>

namespace neardup::internal {
namespace {

// The extraction format InputOptions::format asks for: a fixed one, or
// nullopt for detection; kText reads bytes as they are.
std::optional<DocumentFormat> ForcedFormat(InputFormat format) {
  switch (format) {
    case InputFormat::kPdf:
      return DocumentFormat::kPdf;
    case InputFormat::kDocx:
      return DocumentFormat::kDocx;
    case InputFormat::kOdt:
      return DocumentFormat::kOdt;
    case InputFormat::kHtml:
      return DocumentFormat::kHtml;
    case InputFormat::kWarc:
      return DocumentFormat::kWarc;
    case InputFormat::kText:
    case InputFormat::kJsonl:
      return DocumentFormat::kText;
    case InputFormat::kAuto:
      break;
  }
  return std::nullopt;
}

std::string PageList(const std::vector<uint32_t>& pages) {
  std::string out;
  for (size_t i = 0; i < pages.size() && i < 10; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(pages[i]);
  }
  if (pages.size() > 10) out += ", ...";
  return out;
}

}  // namespace

bool ExtractedDocuments::Extract(const std::string& path, Document* doc, const SkipFunction& skip) {
  doc->format.clear();
  doc->title.clear();
  doc->date.clear();
  std::optional<DocumentFormat> forced = ForcedFormat(options_->format);
  DocumentFormat format = forced.value_or(DocumentFormat::kText);
  if (!forced.has_value()) format = DetectDocumentFormat(doc->text, doc->id);
  if (format == DocumentFormat::kText) return true;

  Result<ExtractionResult> result = ExtractDocuments(doc->text, path, format, options_->extract);
  // The skip report names the file already; the message need not repeat it.
  auto without_path = [&path](std::string message) {
    if (message.compare(0, path.size() + 2, path + ": ") == 0) message.erase(0, path.size() + 2);
    return message;
  };
  if (!result.ok()) {
    skip(doc->id, without_path(result.status().message()));
    return false;
  }
  for (ExtractionProblem& problem : result->problems) {
    skip(std::move(problem.id), without_path(std::move(problem.reason)));
  }
  pages_without_text_ += result->pages_without_text.size();
  pages_read_by_ocr_ += result->pages_read_by_ocr;
  if (!result->pages_without_text.empty()) {
    Notice(path, (result->pages_without_text.size() == 1 ? "page " : "pages ") +
                     PageList(result->pages_without_text) + " of " + std::to_string(result->pages) +
                     (result->pages_without_text.size() == 1 ? " has no text" : " have no text") +
                     (options_->extract.ocr ? " (OCR found none either)"
                                            : " (scanned? --ocr reads them)"));
  }
  if (result->pages_read_by_ocr > 0) {
    Notice(path, std::to_string(result->pages_read_by_ocr) + " of " +
                     std::to_string(result->pages) + " pages read by OCR");
  }
  const std::string name = doc->id;
  uint64_t record = 0;
  for (ExtractedDocument& extracted : result->documents) {
    ++record;
    Document out;
    if (!extracted.id.empty()) {
      out.id = std::move(extracted.id);
    } else if (format == DocumentFormat::kWarc) {
      out.id = name + ":" + std::to_string(record);
    } else {
      out.id = name;
    }
    out.text = std::move(extracted.text);
    out.format = DocumentFormatName(format);
    out.title = std::move(extracted.title);
    out.date = std::move(extracted.date);
    queued_.push_back(std::move(out));
  }
  documents_extracted_ += result->documents.size();
  return Next(doc);
}

bool ExtractedDocuments::Next(Document* doc) {
  if (queued_.empty()) return false;
  *doc = std::move(queued_.front());
  queued_.pop_front();
  return true;
}

void ExtractedDocuments::Notice(const std::string& path, const std::string& message) const {
  if (options_->on_notice) options_->on_notice(path, message);
}

}  // namespace neardup::internal
