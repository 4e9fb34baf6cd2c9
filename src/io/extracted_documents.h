// ExtractedDocuments: the one place where the reader asks "is this file a
// rich format? then extract it". A whole text file's bytes go in; out come
// the documents extracted from it (one for PDF/DOCX/ODT/HTML, one per text
// record for WARC), or the bytes unchanged for a plain text file.
// Thread safety: owned by one reader, used by one thread.
#ifndef NEARDUP_IO_EXTRACTED_DOCUMENTS_H_
#define NEARDUP_IO_EXTRACTED_DOCUMENTS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "neardup/document.h"
#include "neardup/document_reader.h"

namespace neardup::internal {

class ExtractedDocuments {
 public:
  // `options` must outlive this object; its format is read at each call.
  explicit ExtractedDocuments(const InputOptions* options) : options_(options) {}

  using SkipFunction = std::function<void(std::string id, std::string reason)>;

  // `doc` holds a whole file (text = its decompressed bytes, id = its name).
  // A rich format is replaced by the first document extracted from it, the
  // others are queued for Next; a file that cannot be extracted, and records
  // of it that give no document, are reported through `skip`. Returns
  // whether `doc` holds a document.
  bool Extract(const std::string& path, Document* doc, const SkipFunction& skip);

  // The next queued document, if any.
  bool Next(Document* doc);

  uint64_t documents_extracted() const { return documents_extracted_; }
  uint64_t pages_without_text() const { return pages_without_text_; }
  uint64_t pages_read_by_ocr() const { return pages_read_by_ocr_; }

 private:
  void Notice(const std::string& path, const std::string& message) const;

  const InputOptions* options_;
  std::deque<Document> queued_;
  uint64_t documents_extracted_ = 0;
  uint64_t pages_without_text_ = 0;
  uint64_t pages_read_by_ocr_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_EXTRACTED_DOCUMENTS_H_
