// The text of a PDF, page by page in reading order, through poppler (the
// library behind pdftotext). Pages end with '\n' ('\f' between pages is not
// kept: a page break is not part of the text a reader sees). Pages with no
// text layer (scanned images) are listed; with ExtractOptions::ocr they are
// rendered at ocr_dpi and read by Tesseract (ocr_engine.h).
// Thread safety: may run concurrently on different documents.
#ifndef NEARDUP_EXTRACT_PDF_EXTRACTOR_H_
#define NEARDUP_EXTRACT_PDF_EXTRACTOR_H_

#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup::internal {

// DataLoss for a file poppler cannot read as a PDF, FailedPrecondition for
// one encrypted with a password (a PDF encrypted without one is read).
Result<ExtractionResult> ExtractPdf(std::string_view bytes, std::string_view name,
                                    const ExtractOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_PDF_EXTRACTOR_H_
