#include "io/extracted_documents.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "io/effective_threads.h"

namespace neardup::internal {
namespace {

// Queued bytes past which the batch is extracted, whatever its file count:
// bounds the memory held by files waiting for extraction.
constexpr uint64_t kBatchBytes = uint64_t{64} << 20;

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

ExtractedDocuments::ExtractedDocuments(const InputOptions* options)
    : options_(options), batch_files_(2 * EffectiveThreads()) {}

bool ExtractedDocuments::Add(const std::string& path, Document* doc) {
  std::optional<DocumentFormat> forced = ForcedFormat(options_->format);
  DocumentFormat format = forced.value_or(DocumentFormat::kText);
  if (!forced.has_value()) format = DetectDocumentFormat(doc->text, doc->id);
  if (format == DocumentFormat::kText) {
    if (queued_.empty()) return true;
    AddFinal(doc);
    return false;
  }
  queued_bytes_ += doc->text.size();
  ++queued_files_;
  queued_.push_back(Queued{path, std::move(*doc), format});
  return false;
}

void ExtractedDocuments::AddFinal(Document* doc) {
  queued_bytes_ += doc->text.size();
  queued_.push_back(Queued{"", std::move(*doc), std::nullopt});
}

bool ExtractedDocuments::BatchFull() const {
  return queued_files_ >= batch_files_ || queued_bytes_ >= kBatchBytes ||
         queued_.size() >= 64 * batch_files_;
}

void ExtractedDocuments::Flush(const SkipFunction& skip) {
  std::vector<ExtractionInput> inputs;
  for (const Queued& file : queued_) {
    if (file.format.has_value()) inputs.push_back({file.doc.text, file.path, *file.format});
  }
  std::vector<Result<ExtractionResult>> results =
      ExtractDocumentsInParallel(inputs, options_->extract);
  size_t next_result = 0;
  for (Queued& file : queued_) {
    if (file.format.has_value()) {
      Deliver(file, std::move(results[next_result++]), skip);
    } else {
      ready_.push_back(std::move(file.doc));
    }
  }
  queued_.clear();
  queued_bytes_ = 0;
  queued_files_ = 0;
}

void ExtractedDocuments::Deliver(Queued& file, Result<ExtractionResult> result,
                                 const SkipFunction& skip) {
  const std::string& path = file.path;
  const std::string& name = file.doc.id;
  // The skip report names the file already; the message need not repeat it.
  auto without_path = [&path](std::string message) {
    if (message.compare(0, path.size() + 2, path + ": ") == 0) message.erase(0, path.size() + 2);
    return message;
  };
  if (!result.ok()) {
    skip(path, name, without_path(result.status().message()));
    return;
  }
  for (ExtractionProblem& problem : result->problems) {
    skip(path, std::move(problem.id), without_path(std::move(problem.reason)));
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
  const std::string_view format = DocumentFormatName(*file.format);
  uint64_t record = 0;
  for (ExtractedDocument& extracted : result->documents) {
    ++record;
    Document out;
    if (!extracted.id.empty()) {
      out.id = std::move(extracted.id);
    } else if (*file.format == DocumentFormat::kWarc) {
      out.id = name + ":" + std::to_string(record);
    } else {
      out.id = name;
    }
    out.text = std::move(extracted.text);
    out.format = format;
    out.title = std::move(extracted.title);
    out.date = std::move(extracted.date);
    out.source = name;
    ready_.push_back(std::move(out));
  }
  documents_extracted_ += result->documents.size();
}

bool ExtractedDocuments::Next(Document* doc) {
  if (ready_.empty()) return false;
  *doc = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

void ExtractedDocuments::Notice(const std::string& path, const std::string& message) const {
  if (options_->on_notice) options_->on_notice(path, message);
}

}  // namespace neardup::internal
