// Fixtures for the extraction tests, made by the tests themselves (no
// network, no committed binaries): PDFs with Flate-compressed content
// streams written here from the PDF 1.7 object syntax, image-only PDFs of a
// rendered page (for OCR), zips written through libzip (DOCX, ODT), HTML and
// WARC records. One shared text appears in every format, so that tests can
// compare what each extractor gives with the plain text.
#ifndef NEARDUP_EXTRACT_EXTRACT_TEST_UTIL_H_
#define NEARDUP_EXTRACT_EXTRACT_TEST_UTIL_H_

#include <poppler-document.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>
#include <zip.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace neardup::internal::testing {

// Paragraphs of the shared text; the last two are a table (two rows of two
// cells) where the format has tables.
inline const std::vector<std::string>& SampleParagraphs() {
  static const std::vector<std::string> paragraphs = {
      "The committee met on a grey morning to review the archive of student theses",
      "Every document received this year was converted to plain text before the comparison "
      "started and the reviewers read the matching passages side by side",
      "Scanned pages were read by optical character recognition so that no thesis escaped "
      "the check because its author printed and photographed it",
      "Reuse of whole chapters was rare but short borrowed passages were common in the "
      "introductions and the reviews of earlier work",
  };
  return paragraphs;
}
inline const std::vector<std::vector<std::string>>& SampleTable() {
  static const std::vector<std::vector<std::string>> rows = {
      {"Department of history", "twelve theses"},
      {"Department of physics", "seven theses"},
  };
  return rows;
}

// The shared text as a .txt file holds it: paragraphs, then the table's rows
// with cells separated by a space.
inline std::string SampleText() {
  std::string text;
  for (const std::string& p : SampleParagraphs()) text += p + "\n";
  for (const auto& row : SampleTable()) text += row[0] + " " + row[1] + "\n";
  return text;
}

inline std::string Deflate(const std::string& data) {
  uLongf size = compressBound(data.size());
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                      reinterpret_cast<const Bytef*>(data.data()), data.size(), 6),
            Z_OK);
  out.resize(size);
  return out;
}

// A PDF assembled object by object with a correct cross-reference table.
class PdfWriter {
 public:
  // Adds an object (its number is the return value); `stream`, when given, is
  // Flate-compressed and attached with /Length and /Filter.
  int Add(const std::string& dictionary, const std::string* stream = nullptr) {
    objects_.push_back({dictionary, stream != nullptr, stream ? Deflate(*stream) : ""});
    return static_cast<int>(objects_.size());
  }
  int Reserve() { return Add(""); }
  void Set(int number, const std::string& dictionary) {
    objects_[number - 1].dictionary = dictionary;
  }

  std::string Finish(int catalog) const {
    std::string out = "%PDF-1.5\n%\xE2\xE3\xCF\xD3\n";
    std::vector<size_t> offsets;
    for (size_t i = 0; i < objects_.size(); ++i) {
      offsets.push_back(out.size());
      const Object& o = objects_[i];
      out += std::to_string(i + 1) + " 0 obj\n";
      if (o.has_stream) {
        std::string dict = o.dictionary;
        dict.insert(dict.size() - 2,
                    " /Length " + std::to_string(o.stream.size()) + " /Filter /FlateDecode");
        out += dict + "\nstream\n" + o.stream + "\nendstream\n";
      } else {
        out += o.dictionary + "\n";
      }
      out += "endobj\n";
    }
    size_t xref = out.size();
    out += "xref\n0 " + std::to_string(objects_.size() + 1) + "\n0000000000 65535 f \n";
    for (size_t offset : offsets) {
      char line[32];
      std::snprintf(line, sizeof(line), "%010zu 00000 n \n", offset);
      out += line;
    }
    out += "trailer\n<< /Size " + std::to_string(objects_.size() + 1) + " /Root " +
           std::to_string(catalog) + " 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
    return out;
  }

 private:
  struct Object {
    std::string dictionary;
    bool has_stream;
    std::string stream;
  };
  std::vector<Object> objects_;
};

inline std::string PdfString(const std::string& text) {
  std::string out = "(";
  for (char c : text) {
    if (c == '(' || c == ')' || c == '\\') out += '\\';
    out += c;
  }
  return out + ")";
}

// Splits `text` into lines of at most `width` characters at spaces.
inline std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// A PDF with one page per entry of `pages`, each a list of lines set in
// Helvetica at `font_size` on a `width` x `height` point page.
inline std::string MakeTextPdf(const std::vector<std::vector<std::string>>& pages,
                               int font_size = 11, int width = 612, int height = 792) {
  PdfWriter pdf;
  int catalog = pdf.Reserve();
  int pages_obj = pdf.Reserve();
  int font =
      pdf.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  std::string kids;
  for (const std::vector<std::string>& lines : pages) {
    std::string content = "BT /F1 " + std::to_string(font_size) + " Tf " +
                          std::to_string(font_size + 3) + " TL 36 " +
                          std::to_string(height - 36 - font_size) + " Td\n";
    for (const std::string& line : lines) content += PdfString(line) + " Tj T*\n";
    content += "ET\n";
    int stream = pdf.Add("<< >>", &content);
    int page = pdf.Add(
        "<< /Type /Page /Parent " + std::to_string(pages_obj) + " 0 R /MediaBox [0 0 " +
        std::to_string(width) + " " + std::to_string(height) + "] /Resources << /Font << /F1 " +
        std::to_string(font) + " 0 R >> >> /Contents " + std::to_string(stream) + " 0 R >>");
    kids += std::to_string(page) + " 0 R ";
  }
  pdf.Set(pages_obj,
          "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages.size()) + " >>");
  pdf.Set(catalog, "<< /Type /Catalog /Pages " + std::to_string(pages_obj) + " 0 R >>");
  return pdf.Finish(catalog);
}

// The shared text as a two-page PDF: paragraphs wrapped at 70 characters,
// the first two on page 1, the rest and the table rows on page 2.
inline std::string SamplePdf() {
  std::vector<std::vector<std::string>> pages(2);
  const auto& paragraphs = SampleParagraphs();
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    for (const std::string& line : Wrap(paragraphs[i], 70)) pages[i < 2 ? 0 : 1].push_back(line);
    pages[i < 2 ? 0 : 1].push_back("");
  }
  for (const auto& row : SampleTable()) pages[1].push_back(row[0] + "    " + row[1]);
  return MakeTextPdf(pages);
}

// An image-only PDF: the first page of `pdf` rendered at `dpi` to gray
// pixels and placed as the only content of a page of the same size, so that
// the page has no text layer and its text can come back only through OCR.
inline std::string ScannedPdf(const std::string& pdf, int dpi) {
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(pdf.data(), static_cast<int>(pdf.size())));
  EXPECT_NE(doc, nullptr);
  std::unique_ptr<poppler::page> page(doc->create_page(0));
  poppler::page_renderer renderer;
  renderer.set_image_format(poppler::image::format_gray8);
  poppler::image image = renderer.render_page(page.get(), dpi, dpi);
  EXPECT_TRUE(image.is_valid());
  std::string pixels;
  for (int y = 0; y < image.height(); ++y) {
    pixels.append(image.const_data() + static_cast<size_t>(y) * image.bytes_per_row(),
                  static_cast<size_t>(image.width()));
  }
  poppler::rectf box = page->page_rect();
  PdfWriter out;
  int catalog = out.Reserve();
  int pages_obj = out.Reserve();
  int picture = out.Add(
      "<< /Type /XObject /Subtype /Image /Width " + std::to_string(image.width()) + " /Height " +
          std::to_string(image.height()) + " /ColorSpace /DeviceGray /BitsPerComponent 8 >>",
      &pixels);
  std::string w = std::to_string(static_cast<int>(box.width()));
  std::string h = std::to_string(static_cast<int>(box.height()));
  std::string content = "q " + w + " 0 0 " + h + " 0 0 cm /Im1 Do Q\n";
  int stream = out.Add("<< >>", &content);
  int page_obj =
      out.Add("<< /Type /Page /Parent " + std::to_string(pages_obj) + " 0 R /MediaBox [0 0 " + w +
              " " + h + "] /Resources << /XObject << /Im1 " + std::to_string(picture) +
              " 0 R >> >> /Contents " + std::to_string(stream) + " 0 R >>");
  out.Set(pages_obj, "<< /Type /Pages /Kids [" + std::to_string(page_obj) + " 0 R] /Count 1 >>");
  out.Set(catalog, "<< /Type /Catalog /Pages " + std::to_string(pages_obj) + " 0 R >>");
  return out.Finish(catalog);
}

// A zip of `members` (name, bytes) in order, written by libzip; members
// named in `stored` are not compressed (ODF's "mimetype" must not be).
inline std::string MakeZip(const std::vector<std::pair<std::string, std::string>>& members,
                           const std::vector<std::string>& stored = {}) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(index, 0);
    for (const std::string& s : stored) {
      if (s == name)
        zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    }
  }
  EXPECT_EQ(zip_close(archive), 0);
  std::string out;
  EXPECT_EQ(zip_source_open(buffer), 0);
  char chunk[4096];
  zip_int64_t n;
  while ((n = zip_source_read(buffer, chunk, sizeof(chunk))) > 0)
    out.append(chunk, static_cast<size_t>(n));
  zip_source_close(buffer);
  zip_source_free(buffer);
  return out;
}

inline std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

inline std::string DocxXml(const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
         "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
         "<w:body>" +
         body + "</w:body></w:document>";
}

inline std::string MakeDocx(const std::string& document_xml) {
  const std::string types =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types "
      "xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override "
      "PartName=\"/word/document.xml\" ContentType=\"application/"
      "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>";
  return MakeZip({{"[Content_Types].xml", types}, {"word/document.xml", document_xml}});
}

// The shared text as a DOCX: paragraphs (the second split over two runs, one
// with run properties and a tab stop), then a table.
inline std::string SampleDocx() {
  std::string body;
  const auto& paragraphs = SampleParagraphs();
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    if (i == 1) {
      size_t cut = paragraphs[i].find(' ', 30);
      body +=
          "<w:p><w:pPr><w:tabs><w:tab w:val=\"left\" w:pos=\"720\"/></w:tabs></w:pPr>"
          "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">" +
          XmlEscape(paragraphs[i].substr(0, cut + 1)) + "</w:t></w:r><w:r><w:t>" +
          XmlEscape(paragraphs[i].substr(cut + 1)) + "</w:t></w:r></w:p>";
    } else {
      body += "<w:p><w:r><w:t>" + XmlEscape(paragraphs[i]) + "</w:t></w:r></w:p>";
    }
  }
  body += "<w:tbl>";
  for (const auto& row : SampleTable()) {
    body += "<w:tr>";
    for (const std::string& cell : row) {
      body += "<w:tc><w:p><w:r><w:t>" + XmlEscape(cell) + "</w:t></w:r></w:p></w:tc>";
    }
    body += "</w:tr>";
  }
  body += "</w:tbl><w:p><w:r><w:delText>deleted words</w:delText></w:r></w:p>";
  return MakeDocx(DocxXml(body));
}

inline std::string OdtXml(const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<office:document-content "
         "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "
         "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "
         "xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" office:version=\"1.2\">"
         "<office:body><office:text>" +
         body + "</office:text></office:body></office:document-content>";
}

inline std::string MakeOdt(const std::string& content_xml) {
  const std::string manifest =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><manifest:manifest "
      "xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\"><manifest:file-entry "
      "manifest:full-path=\"/\" manifest:media-type=\"application/"
      "vnd.oasis.opendocument.text\"/></manifest:manifest>";
  return MakeZip({{"mimetype", "application/vnd.oasis.opendocument.text"},
                  {"content.xml", content_xml},
                  {"META-INF/manifest.xml", manifest}},
                 {"mimetype"});
}

// The shared text as an ODT: a heading, paragraphs with a span and
// pretty-printed line breaks, then a table.
inline std::string SampleOdt() {
  std::string body;
  const auto& paragraphs = SampleParagraphs();
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    std::string p = XmlEscape(paragraphs[i]);
    if (i == 0) {
      body += "<text:h text:outline-level=\"1\">" + p + "</text:h>\n  ";
    } else if (i == 2) {
      size_t cut = p.find(' ', 20);
      body += "<text:p>" + p.substr(0, cut) + "\n   <text:span>" + p.substr(cut + 1) +
              "</text:span></text:p>\n";
    } else {
      body += "<text:p>" + p + "</text:p>";
    }
  }
  body += "<table:table>";
  for (const auto& row : SampleTable()) {
    body += "<table:table-row>";
    for (const std::string& cell : row) {
      body += "<table:table-cell><text:p>" + XmlEscape(cell) + "</text:p></table:table-cell>";
    }
    body += "</table:table-row>";
  }
  body +=
      "</table:table><office:annotation><text:p>a reviewer's comment</text:p></office:annotation>";
  return MakeOdt(OdtXml(body));
}

// The shared text as an HTML page with a title, a navigation bar, a script,
// a style sheet, entities and a table.
inline std::string SampleHtml() {
  std::string html =
      "<!DOCTYPE html>\n<html><head><title>Archive &amp; theses</title>"
      "<style>body { color: red; } .hidden { display: none }</style>"
      "<script>var tracking = \"script words must not appear\";</script></head>\n<body>\n"
      "<nav><a href=\"/\">Home</a> | <a href=\"/about\">About us</a></nav>\n";
  const auto& paragraphs = SampleParagraphs();
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    std::string p = XmlEscape(paragraphs[i]);
    if (i == 1) p.replace(p.find("plain text"), 10, "<b>plain</b>&#32;&#x74;ext");
    html += i == 0 ? "<h1>" + p + "</h1>\n" : "<p>" + p + "\n";
  }
  html += "<table>";
  for (const auto& row : SampleTable()) html += "<tr><td>" + row[0] + "<td>" + row[1];
  html += "</table>\n<script>document.write('more script words')</script></body></html>\n";
  return html;
}

// One WARC/1.1 record.
inline std::string WarcRecord(const std::string& type, const std::string& uri,
                              const std::string& date, const std::string& content_type,
                              const std::string& block) {
  return "WARC/1.1\r\nWARC-Type: " + type + "\r\nWARC-Record-ID: <urn:uuid:" + uri +
         ">\r\nWARC-Date: " + date + "\r\n" +
         (uri.empty() ? "" : "WARC-Target-URI: " + uri + "\r\n") + "Content-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(block.size()) + "\r\n\r\n" + block + "\r\n\r\n";
}

inline std::string HttpResponse(const std::string& content_type, const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_EXTRACT_EXTRACT_TEST_UTIL_H_
