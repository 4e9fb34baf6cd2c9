// OcrEngine: Tesseract reading the text of a rendered page image.
// Cost: Init loads the language model (~0.1-0.5 s, ~50 MB for "eng"); each
// page at 300 dpi takes about a second. Never reaches the network (the image
// is handed over as pixels, never as a file name or URL).
// Thread safety: one engine per thread.
#ifndef NEARDUP_EXTRACT_OCR_ENGINE_H_
#define NEARDUP_EXTRACT_OCR_ENGINE_H_

#include <memory>
#include <string>

#include "neardup/status.h"

namespace tesseract {
class TessBaseAPI;
}

namespace neardup::internal {

class OcrEngine {
 public:
  // Unimplemented naming the language when its data (Debian's
  // tesseract-ocr-LANG package) is missing.
  static Result<std::unique_ptr<OcrEngine>> Create(const std::string& language);
  ~OcrEngine();

  // The UTF-8 text of an 8-bit grayscale image. REQUIRES: width, height > 0,
  // bytes_per_row >= width.
  Result<std::string> Read(const unsigned char* pixels, int width, int height, int bytes_per_row,
                           int dpi);

 private:
  OcrEngine();
  std::unique_ptr<tesseract::TessBaseAPI> api_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_OCR_ENGINE_H_
