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
// libraries, which cost about 10-15 ms of CPU at every start (~2-3 % of
// a 256 MB run).
// Thread safety: the table is found once (a function-local static); its functions
// are those of document_extractor.h.
#ifndef NEARDUP_EXTRACT_EXTRACT_BACKEND_H_
#define NEARDUP_EXTRACT_EXTRACT_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "neardup/document_extractor.h"
#include "neardup/status.h"
#include "util/module_loader.h"

namespace neardup::internal {

struct ExtractBackend {
  // Bumped when the head's place or this table's layout changes; the build
  // id (neardup/loadable_module.h) covers the types it passes.
  static constexpr uint32_t kAbi = 2;
  ModuleTableHead head{kAbi, ModuleBuildId()};
  // ExtractDocuments for every format but kText.
  Result<ExtractionResult> (*extract)(std::string_view bytes, std::string_view name,
                                      DocumentFormat format, const ExtractOptions& options);
  // DOCX for bytes that start with a zip header and are no ODT, else nullopt.
  std::optional<DocumentFormat> (*zip_format)(std::string_view bytes);
};

// The table: linked in, or loaded from the module on the first call. An
// error (module missing, or of another build) is returned by every call.
Result<const ExtractBackend*> GetExtractBackend();

}  // namespace neardup::internal

// Defined in the archive neardup_extract_libraries (and exported by the
// module built from it). document_extractor.cc redeclares it weak; no
// other file of a program that may load the module may odr-use it (that
// reference would be strong and link the libraries back in; the CLI test
// checks that they are not mapped at start).
extern "C" const neardup::internal::ExtractBackend* neardup_extract_backend_v1();

#endif  // NEARDUP_EXTRACT_EXTRACT_BACKEND_H_
