#include "extract/html_extractor.h"

#include <gumbo.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "extract/html_charset.h"

namespace neardup::internal {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool HtmlIsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Tags that never hold children, or that an HTML5 parser closes by itself
// (a <p> closes the open <p>): they do not deepen the tree.
bool DoesNotNest(std::string_view tag) {
  static constexpr std::string_view kTags[] = {"area",   "base",  "br",   "col",  "embed", "hr",
                                               "img",    "input", "link", "meta", "param", "source",
                                               "track",  "wbr",   "p",    "li",   "dt",    "dd",
                                               "option", "tr",    "td",   "th",   "!",     "?"};
  for (std::string_view t : kTags) {
    if (tag.size() == t.size() && std::equal(tag.begin(), tag.end(), t.begin(), [](char a, char b) {
          return (a | 0x20) == b || a == b;
        })) {
      return true;
    }
  }
  return false;
}

// An upper bound of the element depth gumbo would build, from a scan of the
// tags: start tags that nest minus end tags, at its highest. gumbo 0.10 frees
// its tree recursively, so a page of 10^6 nested <div>s must be refused before
// it is parsed.
int EstimatedDepth(std::string_view html) {
  int depth = 0;
  int deepest = 0;
  for (size_t i = 0; i + 1 < html.size(); ++i) {
    if (html[i] != '<') continue;
    if (html[i + 1] == '/') {
      depth = std::max(0, depth - 1);
      continue;
    }
    if (!IsAsciiAlpha(html[i + 1])) continue;
    size_t end = i + 1;
    while (end < html.size() && !HtmlIsSpace(html[end]) && html[end] != '>' && html[end] != '/')
      ++end;
    if (DoesNotNest(html.substr(i + 1, end - i - 1))) continue;
    deepest = std::max(deepest, ++depth);
  }
  return deepest;
}

bool IsSkipped(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
      return true;
    default:
      return false;
  }
}

// What an element does to the lines around it.
enum class Break { kNone, kLine, kCell };

Break BreakOf(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
      return Break::kCell;
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_BODY:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_P:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_UL:
      return Break::kLine;
    default:
      return Break::kNone;
  }
}

// Builds the text: white space collapsed, at most one separator between
// blocks, none at the start.
class TextBuilder {
 public:
  void Text(const char* text, bool preformatted) {
    for (const char* p = text; *p != '\0'; ++p) {
      if (preformatted || !HtmlIsSpace(*p)) {
        if (pending_ != '\0' && !out_.empty()) out_.push_back(pending_);
        pending_ = '\0';
        out_.push_back(*p);
      } else if (pending_ == '\0') {
        pending_ = ' ';
      }
    }
  }
  // A separator outranks a space: '\n' > '\t' > ' '.
  void Separate(char separator) {
    if (pending_ == '\n') return;
    if (pending_ == '\t' && separator == ' ') return;
    pending_ = separator;
  }
  std::string Finish() {
    if (!out_.empty()) out_.push_back('\n');
    return std::move(out_);
  }

 private:
  std::string out_;
  char pending_ = '\0';
};

std::string CollapsedText(const GumboNode* element) {
  TextBuilder builder;
  const GumboVector& children = element->v.element.children;
  for (unsigned i = 0; i < children.length; ++i) {
    const auto* child = static_cast<const GumboNode*>(children.data[i]);
    if (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_WHITESPACE) {
      builder.Text(child->v.text.text, false);
    }
  }
  std::string text = builder.Finish();
  if (!text.empty()) text.pop_back();
  return text;
}

struct GumboOutputFree {
  void operator()(GumboOutput* output) const {
    gumbo_destroy_output(&kGumboDefaultOptions, output);
  }
};

}  // namespace

Result<ExtractedDocument> ExtractHtml(std::string_view bytes, std::string_view name,
                                      const ExtractOptions& options,
                                      std::string_view transport_charset) {
  auto too_large = [&](size_t size) {
    return ResourceExhaustedError(std::string(name) + ": HTML page of " + std::to_string(size) +
                                  " bytes exceeds max_markup_bytes (" +
                                  std::to_string(options.max_markup_bytes) + ")");
  };
  if (bytes.size() > options.max_markup_bytes) return too_large(bytes.size());
  const HtmlEncoding encoding = DetectHtmlEncoding(bytes, transport_charset);
  bytes.remove_prefix(encoding.skip);
  bool converted = false;
  const std::string utf8 =
      encoding.name == "UTF-8" ? std::string() : ConvertToUtf8(bytes, encoding.name, &converted);
  if (converted) {
    if (utf8.size() > options.max_markup_bytes) return too_large(utf8.size());
    bytes = utf8;
  }
  if (int depth = EstimatedDepth(bytes); depth > kMaxHtmlDepth) {
    return ResourceExhaustedError(std::string(name) + ": HTML nests elements " +
                                  std::to_string(depth) + " deep, more than " +
                                  std::to_string(kMaxHtmlDepth));
  }
  GumboOptions gumbo_options = kGumboDefaultOptions;
  gumbo_options.max_errors = 0;  // parse errors are not kept: they are not needed
  std::unique_ptr<GumboOutput, GumboOutputFree> output(
      gumbo_parse_with_options(&gumbo_options, bytes.data(), bytes.size()));
  if (output == nullptr) return InternalError(std::string(name) + ": the HTML parser failed");

  ExtractedDocument doc;
  TextBuilder builder;
  // Depth-first, with an explicit stack: (element, next child, preformatted).
  struct Frame {
    const GumboNode* node;
    unsigned next_child;
    bool preformatted;
  };
  std::vector<Frame> stack;
  stack.push_back({output->root, 0, false});
  while (!stack.empty()) {
    Frame& frame = stack.back();
    const GumboVector& children = frame.node->v.element.children;
    if (frame.next_child == children.length) {
      Break brk = BreakOf(frame.node->v.element.tag);
      if (brk != Break::kNone) builder.Separate(brk == Break::kCell ? '\t' : '\n');
      stack.pop_back();
      continue;
    }
    const auto* child = static_cast<const GumboNode*>(children.data[frame.next_child++]);
    const bool preformatted = frame.preformatted;
    switch (child->type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        builder.Text(child->v.text.text, preformatted);
        break;
      case GUMBO_NODE_ELEMENT:
      case GUMBO_NODE_TEMPLATE: {
        GumboTag tag = child->v.element.tag;
        if (tag == GUMBO_TAG_TITLE && doc.title.empty()) doc.title = CollapsedText(child);
        if (IsSkipped(tag)) {
          if (tag == GUMBO_TAG_HEAD) {
            // The title may sit in the head; nothing else there is text.
            const GumboVector& head = child->v.element.children;
            for (unsigned i = 0; i < head.length && doc.title.empty(); ++i) {
              const auto* h = static_cast<const GumboNode*>(head.data[i]);
              if (h->type == GUMBO_NODE_ELEMENT && h->v.element.tag == GUMBO_TAG_TITLE) {
                doc.title = CollapsedText(h);
              }
            }
          }
          break;
        }
        if (tag == GUMBO_TAG_TITLE) break;
        Break brk = BreakOf(tag);
        if (brk != Break::kNone) builder.Separate(brk == Break::kCell ? '\t' : '\n');
        stack.push_back({child, 0, preformatted || tag == GUMBO_TAG_PRE});
        break;
      }
      default:  // comments, the document type
        break;
    }
  }
  doc.text = builder.Finish();
  return doc;
}

}  // namespace neardup::internal
