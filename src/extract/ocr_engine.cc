#include "extract/ocr_engine.h"

#include <tesseract/baseapi.h>

namespace neardup::internal {

OcrEngine::OcrEngine() : api_(std::make_unique<tesseract::TessBaseAPI>()) {}

OcrEngine::~OcrEngine() {
  if (api_ != nullptr) api_->End();
}

Result<std::unique_ptr<OcrEngine>> OcrEngine::Create(const std::string& language) {
  std::unique_ptr<OcrEngine> engine(new OcrEngine());
  // Tesseract prints its diagnostics to stderr unless told otherwise.
  engine->api_->SetVariable("debug_file", "/dev/null");
  if (engine->api_->Init(nullptr, language.c_str()) != 0) {
    return UnimplementedError("OCR: Tesseract has no data for language \"" + language +
                              "\" (install Debian's tesseract-ocr-" + language + ")");
  }
  return engine;
}

Result<std::string> OcrEngine::Read(const unsigned char* pixels, int width, int height,
                                    int bytes_per_row, int dpi) {
  api_->SetImage(pixels, width, height, 1, bytes_per_row);
  api_->SetSourceResolution(dpi);
  std::unique_ptr<char[]> text(api_->GetUTF8Text());
  if (text == nullptr) return InternalError("OCR: Tesseract failed to read a page");
  return std::string(text.get());
}

}  // namespace neardup::internal
