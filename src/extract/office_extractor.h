// Text of word-processing files: DOCX (Office Open XML, word/document.xml)
// and ODT (OpenDocument, content.xml), read with libzip and libxml2.
// Paragraphs in document order, those in tables included (cell by cell, row
// by row), each ending in '\n'; tabs as '\t', line breaks as '\n'. Deleted
// tracked changes, field codes and comments are not text.
// Thread safety: may run concurrently (InitXmlOnce first).
#ifndef NEARDUP_EXTRACT_OFFICE_EXTRACTOR_H_
#define NEARDUP_EXTRACT_OFFICE_EXTRACTOR_H_

#include <string>
#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup::internal {

// REQUIRES: `bytes` is the whole file. `name` is for messages.
Result<std::string> ExtractDocxText(std::string_view bytes, std::string_view name,
                                    const ExtractOptions& options);
Result<std::string> ExtractOdtText(std::string_view bytes, std::string_view name,
                                   const ExtractOptions& options);

// libxml2's global set-up, done once before any thread parses.
void InitXmlOnce();

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_OFFICE_EXTRACTOR_H_
