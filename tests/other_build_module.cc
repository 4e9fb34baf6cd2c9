// A neardup_extract.so of another build, for input_formats_cli_test: its
// table has this build's layout and version but another build id, so
// `neardup` must refuse it (neardup/loadable_module.h) before calling into it.
#include "extract/extract_backend.h"

extern "C" __attribute__((visibility("default"))) const neardup::internal::ExtractBackend*
neardup_extract_backend_v1() {
  static const neardup::internal::ExtractBackend backend{
      .head = {neardup::internal::ExtractBackend::kAbi, "0.0.0-another"},
      .extract = nullptr,
      .zip_format = nullptr,
  };
  return &backend;
}
