// The part of document extraction that needs the format libraries
// (poppler, libzip, libxml2, gumbo, Tesseract), behind one table of
// functions, so that a program can load it only when a document needs it
// (docs/INPUT_FORMATS.md, "Loading the format libraries").
//
// Linked in (the default for every program that links neardup): the
// archive neardup_extract_libraries holds the table, and linking
// neardup_extract forces it in (`--undefined=neardup_extract_backend_v1`).
// Loaded lazily (the `neardup` CLI, target property
// NEARDUP_LIBRARIES_AS_MODULES): the table is not linked, and the first
// extraction dlopen()s the module neardup_extract.so (the same archive,
// built as a shared module) from next to the executable, then from the
// installed library directory. A JSONL or text run then never loads the
// libraries, which cost about 15-20 ms of CPU at every start.
// Thread safety: the table is found once (std::call_once); its functions
// are those of document_extractor.h.
#ifndef NEARDUP_EXTRACT_EXTRACT_BACKEND_H_
#define NEARDUP_EXTRACT_EXTRACT_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup::internal {

// Bumped whenever the table or the types it passes change; the module and
// the program must agree on it and on the sizes below.
inline constexpr uint32_t kExtractBackendAbi = 1;

struct ExtractBackend {
  uint32_t abi = kExtractBackendAbi;
  size_t options_size = sizeof(ExtractOptions);
  size_t result_size = sizeof(ExtractionResult);
  size_t status_size = sizeof(Status);
  // ExtractDocuments for every format but kText.
  Result<ExtractionResult> (*extract)(std::string_view bytes, std::string_view name,
                                      DocumentFormat format, const ExtractOptions& options);
  // DOCX or ODT for bytes that start with a zip header, else nullopt.
  std::optional<DocumentFormat> (*zip_format)(std::string_view bytes);
};

// The table: linked in, or loaded from the module on the first call. An
// error (module missing, or of another build) is returned by every call.
Result<const ExtractBackend*> GetExtractBackend();

}  // namespace neardup::internal

// Defined in the archive neardup_extract_libraries (and exported by the
// module built from it); a weak reference where it may be absent.
extern "C" const neardup::internal::ExtractBackend* neardup_extract_backend_v1();

#endif  // NEARDUP_EXTRACT_EXTRACT_BACKEND_H_
