// Document extraction: the plain text of files as people have them (PDF,
// Word's DOCX, OpenDocument's ODT, HTML pages, WARC/WET web archives), so that
// the rest of the pipeline sees Documents of text as for a .txt file.
//
// Each format goes through the well-kept library for it, never a hand-written
// parser of the container: PDF through poppler (scanned pages optionally
// through Tesseract OCR), DOCX and ODT through libzip and libxml2, HTML
// through gumbo (an HTML5 parser). WARC records are framed here (the format
// is a sequence of header blocks with a Content-Length), their HTML bodies go
// through gumbo. docs/INPUT_FORMATS.md says what text each format gives.
//
// Hostile input is expected: every call returns a Status naming the format
// and what is wrong (a damaged or encrypted PDF, a corrupt zip, a zip member
// that decompresses past max_uncompressed_bytes, XML that is not
// well-formed, an HTML page over max_markup_bytes, a malformed WARC record);
// none may crash, reach the network or use memory beyond the stated caps.
//
// Cost: the whole file is in memory (the caller's bytes); a DOCX/ODT adds
// its decompressed XML (<= max_uncompressed_bytes) and libxml2's tree of it
// (about 5-10x); HTML adds gumbo's tree (about 10x the page, hence the cap);
// PDF adds poppler's document; OCR renders one page at a time
// (ocr_dpi^2 * page area bytes, ~9 MB for A4 at 300 dpi) and costs about a
// second per page.
// Thread safety: ExtractDocuments may run concurrently on different inputs
// (the libraries' global set-up is done once, under std::call_once).
#ifndef NEARDUP_DOCUMENT_EXTRACTOR_H_
#define NEARDUP_DOCUMENT_EXTRACTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

enum class DocumentFormat {
  kText,  // bytes as they are
  kPdf,
  kDocx,  // Office Open XML word processing (Word 2007 and later)
  kOdt,   // OpenDocument text
  kHtml,
  kWarc,  // WARC 1.0/1.1, WET (conversion records) included
};

// "text", "pdf", "docx", "odt", "html", "warc".
std::string_view DocumentFormatName(DocumentFormat format);
// The inverse of DocumentFormatName; InvalidArgument naming the text otherwise.
Result<DocumentFormat> ParseDocumentFormat(std::string_view name);

// The format of a file from its content and, where the content has no
// signature, its name. Order (docs/INPUT_FORMATS.md):
//  1. magic bytes: "%PDF-" in the first 1024 bytes -> PDF; "WARC/1." at the
//     start -> WARC; a zip ("PK\3\4") holding "mimetype" =
//     application/vnd.oasis.opendocument.text -> ODT, holding
//     word/document.xml -> DOCX (looked up with libzip; in the `neardup` CLI
//     without its extraction module, any zip but an ODT -> DOCX, whose
//     extraction then reports the missing module);
//  2. the name, less a trailing ".gz" or ".zst" (the caller decompresses):
//     .pdf, .docx, .odt, .html/.htm/.xhtml, .warc/.wet (any letter case);
//  3. markup at the start ("<!doctype html", "<html", after an optional
//     byte-order mark and white space) -> HTML;
//  4. anything else is text.
// A damaged file whose name says PDF/DOCX/ODT/WARC is therefore given to that
// extractor, which reports the damage, instead of being read as bytes.
DocumentFormat DetectDocumentFormat(std::string_view bytes, std::string_view name);

struct ExtractOptions {
  // Scanned (image-only) PDF pages are rendered and read by Tesseract. Default
  // false: OCR costs about a second per page, and pages without text are
  // only counted.
  bool ocr = false;
  // Tesseract language(s), e.g. "eng" or "eng+deu" (Debian's
  // tesseract-ocr-LANG packages). Default "eng".
  std::string ocr_language = "eng";
  // Rendering resolution for OCR. Default 300 dpi, Tesseract's recommended
  // input; lower is faster and less accurate.
  int ocr_dpi = 300;
  // Cap on the bytes one zip member (DOCX/ODT XML) may decompress to: the
  // defence against zip bombs (a 600 MB document.xml in 1 MB of zip).
  // Default 256 MiB; the declared size is not trusted, the bytes are counted.
  uint64_t max_uncompressed_bytes = uint64_t{256} << 20;
  // Cap on an HTML page (a file, or one WARC record's body): the parser's
  // tree takes ~10x the page. Default 64 MiB.
  uint64_t max_markup_bytes = uint64_t{64} << 20;
};

struct ExtractedDocument {
  // The record's id where the format has one (a WARC record's
  // WARC-Target-URI, else its WARC-Record-ID); empty for a file that is one
  // document (the caller names it after the file).
  std::string id;
  // UTF-8 plain text. Paragraphs and block elements end with '\n'.
  std::string text;
  // The HTML <title> (or a WARC HTML record's), kept apart from the text.
  std::string title;
  // A WARC record's WARC-Date (ISO 8601, as written); empty otherwise.
  std::string date;
};

// What did not become a document without making the whole file fail: a WARC
// record that is not text (an image), or damage after the last good record.
struct ExtractionProblem {
  std::string id;      // the record's id when known
  std::string reason;  // e.g. "WARC record at byte 5123: Content-Length ..."
};

struct ExtractionResult {
  DocumentFormat format = DocumentFormat::kText;
  std::vector<ExtractedDocument> documents;
  // PDF: pages in the document; pages with no text layer (1-based, in order)
  // that were not read by OCR or gave no text there either; pages whose text
  // came from OCR.
  uint64_t pages = 0;
  std::vector<uint32_t> pages_without_text;
  uint64_t pages_read_by_ocr = 0;
  // WARC: records of other types (request, metadata, warcinfo, revisit)
  // passed over, not counted as problems.
  uint64_t records_passed_over = 0;
  std::vector<ExtractionProblem> problems;
};

// Extracts the documents of `bytes` (already decompressed) in `format`.
// `name` is used in messages only. A DOCX, ODT, PDF or HTML file gives one
// document (also when it has no text: an empty document); a WARC gives one
// per response, resource or conversion record with a text or HTML body.
// Errors: InvalidArgument/DataLoss naming the format and what is wrong
// (damaged, encrypted, not the format), ResourceExhausted for a cap,
// Unimplemented for OCR when the language data is missing;
// FailedPrecondition naming the module when the `neardup` CLI cannot load
// neardup_extract.so (programs that link neardup never see it).
Result<ExtractionResult> ExtractDocuments(std::string_view bytes, std::string_view name,
                                          DocumentFormat format, const ExtractOptions& options);

// One file of a batch for ExtractDocumentsInParallel.
struct ExtractionInput {
  std::string_view bytes;
  std::string_view name;
  DocumentFormat format;
};

// ExtractDocuments for each input, the inputs spread over the oneTBB worker
// threads (one file per task: files are independent; a PDF's pages are not,
// poppler's document being single-threaded). Result i belongs to input i.
std::vector<Result<ExtractionResult>> ExtractDocumentsInParallel(
    const std::vector<ExtractionInput>& inputs, const ExtractOptions& options);

}  // namespace neardup

#endif  // NEARDUP_DOCUMENT_EXTRACTOR_H_
