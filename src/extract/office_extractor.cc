#include "extract/office_extractor.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "extract/zip_archive.h"

namespace neardup::internal {
namespace {

constexpr char kWordNs[] = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
constexpr char kOdfTextNs[] = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";
constexpr char kOdfOfficeNs[] = "urn:oasis:names:tc:opendocument:xmlns:office:1.0";
constexpr char kOdtMimetype[] = "application/vnd.oasis.opendocument.text";
// text:s c="N" repeats a space N times; a hostile count must not allocate
// gigabytes from one attribute.
constexpr unsigned long kMaxRepeatedSpaces = 1024;

struct XmlDocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using XmlDocPtr = std::unique_ptr<xmlDoc, XmlDocFree>;

bool Is(const xmlNode* node, const char* ns, const char* name) {
  return node->type == XML_ELEMENT_NODE && node->ns != nullptr && node->ns->href != nullptr &&
         std::strcmp(reinterpret_cast<const char*>(node->ns->href), ns) == 0 &&
         std::strcmp(reinterpret_cast<const char*>(node->name), name) == 0;
}

// Parses XML without the features hostile files use: no network (NONET), no
// external DTD, entities left unexpanded (no NOENT: an entity reference stays
// a node this code ignores, so "billion laughs" expands to nothing), and
// libxml2's default depth and size limits (no HUGE). Errors are not printed.
Result<XmlDocPtr> ParseXml(const std::string& xml, std::string_view name, const char* member) {
  if (xml.size() > static_cast<size_t>(INT_MAX)) {
    return ResourceExhaustedError(std::string(name) + ": " + member + " is too large to parse");
  }
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlResetLastError();
  xmlDoc* doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), member, nullptr, options);
  if (doc == nullptr) {
    const xmlError* error = xmlGetLastError();
    std::string why = error != nullptr && error->message != nullptr ? error->message : "unknown";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    std::string where = error != nullptr ? " (line " + std::to_string(error->line) + ")" : "";
    return DataLossError(std::string(name) + ": " + member + " is not well-formed XML" + where +
                         ": " + why);
  }
  return XmlDocPtr(doc);
}

void AppendText(const xmlNode* node, std::string* out) {
  for (const xmlNode* child = node->children; child != nullptr; child = child->next) {
    if ((child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) &&
        child->content != nullptr) {
      out->append(reinterpret_cast<const char*>(child->content));
    }
  }
}

// DOCX: runs' text (w:t) inside paragraphs (w:p), tables being paragraphs in
// cells. Properties (w:pPr, w:rPr: tab stops are w:tab there too), deleted
// text (w:delText) and field codes (w:instrText) are not text.
void WalkDocx(const xmlNode* node, std::string* out) {
  for (const xmlNode* child = node->children; child != nullptr; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if (Is(child, kWordNs, "t")) {
      AppendText(child, out);
    } else if (Is(child, kWordNs, "tab")) {
      out->push_back('\t');
    } else if (Is(child, kWordNs, "br") || Is(child, kWordNs, "cr")) {
      out->push_back('\n');
    } else if (Is(child, kWordNs, "p")) {
      WalkDocx(child, out);
      out->push_back('\n');
    } else if (Is(child, kWordNs, "pPr") || Is(child, kWordNs, "rPr") ||
               Is(child, kWordNs, "delText") || Is(child, kWordNs, "instrText")) {
      continue;
    } else {
      WalkDocx(child, out);
    }
  }
}

// ODF 6.1.2: inside a paragraph, runs of white space in the XML are one space;
// text:s, text:tab and text:line-break stand for the others.
void AppendCollapsed(const char* text, std::string* out) {
  for (const char* p = text; *p != '\0'; ++p) {
    const bool space = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
    if (!space) {
      out->push_back(*p);
    } else if (out->empty() || out->back() != ' ') {
      out->push_back(' ');
    }
  }
}

void WalkOdt(const xmlNode* node, bool in_paragraph, std::string* out) {
  for (const xmlNode* child = node->children; child != nullptr; child = child->next) {
    if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) {
      if (in_paragraph && child->content != nullptr) {
        AppendCollapsed(reinterpret_cast<const char*>(child->content), out);
      }
      continue;
    }
    if (child->type != XML_ELEMENT_NODE) continue;
    if (Is(child, kOdfTextNs, "p") || Is(child, kOdfTextNs, "h")) {
      WalkOdt(child, true, out);
      out->push_back('\n');
    } else if (Is(child, kOdfTextNs, "s")) {
      unsigned long count = 1;
      if (xmlChar* c = xmlGetNsProp(child, reinterpret_cast<const xmlChar*>("c"),
                                    reinterpret_cast<const xmlChar*>(kOdfTextNs))) {
        count = std::strtoul(reinterpret_cast<const char*>(c), nullptr, 10);
        xmlFree(c);
      }
      out->append(std::min(count, kMaxRepeatedSpaces), ' ');
    } else if (Is(child, kOdfTextNs, "tab")) {
      out->push_back('\t');
    } else if (Is(child, kOdfTextNs, "line-break")) {
      out->push_back('\n');
    } else if (Is(child, kOdfOfficeNs, "annotation")) {
      continue;
    } else {
      WalkOdt(child, in_paragraph, out);
    }
  }
}

}  // namespace

void InitXmlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

Result<std::string> ExtractDocxText(std::string_view bytes, std::string_view name,
                                    const ExtractOptions& options) {
  InitXmlOnce();
  NEARDUP_ASSIGN_OR_RETURN(ZipArchive zip, ZipArchive::Open(bytes, name));
  if (!zip.Has("word/document.xml")) {
    return DataLossError(std::string(name) + ": not a DOCX file: the zip has no word/document.xml");
  }
  NEARDUP_ASSIGN_OR_RETURN(std::string xml,
                           zip.Read("word/document.xml", options.max_uncompressed_bytes));
  NEARDUP_ASSIGN_OR_RETURN(XmlDocPtr doc, ParseXml(xml, name, "word/document.xml"));
  std::string text;
  if (const xmlNode* root = xmlDocGetRootElement(doc.get())) WalkDocx(root, &text);
  return text;
}

Result<std::string> ExtractOdtText(std::string_view bytes, std::string_view name,
                                   const ExtractOptions& options) {
  InitXmlOnce();
  NEARDUP_ASSIGN_OR_RETURN(ZipArchive zip, ZipArchive::Open(bytes, name));
  if (zip.Has("mimetype")) {
    NEARDUP_ASSIGN_OR_RETURN(std::string mimetype, zip.Read("mimetype", 256));
    if (mimetype != kOdtMimetype) {
      return InvalidArgumentError(std::string(name) + ": an OpenDocument file of type " + mimetype +
                                  ", not a text document (" + kOdtMimetype + ")");
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(std::string xml,
                           zip.Read("content.xml", options.max_uncompressed_bytes));
  NEARDUP_ASSIGN_OR_RETURN(XmlDocPtr doc, ParseXml(xml, name, "content.xml"));
  std::string text;
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  for (const xmlNode* child = root != nullptr ? root->children : nullptr; child != nullptr;
       child = child->next) {
    if (Is(child, kOdfOfficeNs, "body")) WalkOdt(child, false, &text);
  }
  return text;
}

}  // namespace neardup::internal
