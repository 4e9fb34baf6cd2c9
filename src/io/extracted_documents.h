// ExtractedDocuments: the one place where the reader asks "is this file a
// rich format? then extract it". Whole files go in (text = the decompressed
// bytes, id = the name); out come, in the same order, the documents
// extracted from them (one for PDF/DOCX/ODT/HTML, one per text record for
// WARC) or the file unchanged when it is plain text.
//
// Files to extract are queued and extracted together, in parallel across
// files (ExtractDocumentsInParallel), once the batch is full (twice the
// worker threads, or 64 MiB of queued bytes) or the reader has no more to
// add. Documents that come while files are queued (a text file, a JSONL
// record) queue behind them, so the reading order is kept. Plain text with
// nothing queued passes straight through, as before extraction existed.
// Thread safety: owned by one reader, used by one thread (the extraction
// itself runs on the oneTBB workers).
#ifndef NEARDUP_IO_EXTRACTED_DOCUMENTS_H_
#define NEARDUP_IO_EXTRACTED_DOCUMENTS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "neardup/document.h"
#include "neardup/document_reader.h"

namespace neardup::internal {

class ExtractedDocuments {
 public:
  // `options` must outlive this object; its format is read at each call.
  explicit ExtractedDocuments(const InputOptions* options);

  // Reports a file that cannot be extracted, or a record of it that gives
  // no document: (path of the file, id, reason).
  using SkipFunction = std::function<void(const std::string&, std::string, std::string)>;

  // `doc` holds a whole file read from `path`. Returns true, leaving `doc`
  // as it is, for plain text when nothing is queued; otherwise queues it
  // (taking its contents) and returns false.
  bool Add(const std::string& path, Document* doc);
  // Queues a document as it is (one that comes while files are queued).
  void AddFinal(Document* doc);

  bool HasQueued() const { return !queued_.empty(); }
  // Whether the queue should be extracted before more is read.
  bool BatchFull() const;
  // Extracts every queued file in parallel and makes the documents
  // available to Next, in order; reports skips and notices (in order).
  void Flush(const SkipFunction& skip);

  // The next document extracted by Flush, if any.
  bool Next(Document* doc);

  uint64_t documents_extracted() const { return documents_extracted_; }
  uint64_t pages_without_text() const { return pages_without_text_; }
  uint64_t pages_read_by_ocr() const { return pages_read_by_ocr_; }

 private:
  struct Queued {
    std::string path;
    Document doc;
    std::optional<DocumentFormat> format;  // nullopt: final as it is
  };

  void Deliver(Queued& file, Result<ExtractionResult> result, const SkipFunction& skip);
  void Notice(const std::string& path, const std::string& message) const;

  const InputOptions* options_;
  size_t batch_files_;
  std::deque<Queued> queued_;
  uint64_t queued_bytes_ = 0;
  size_t queued_files_ = 0;  // with a format
  std::deque<Document> ready_;
  uint64_t documents_extracted_ = 0;
  uint64_t pages_without_text_ = 0;
  uint64_t pages_read_by_ocr_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_EXTRACTED_DOCUMENTS_H_
