#include "io/document_block.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace neardup::internal {

bool IsBlankLine(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::string TooLargeReason(const char* what, uint64_t size, uint64_t max) {
  return std::string(what) + " of " + std::to_string(size) + " bytes exceeds max_document_bytes (" +
         std::to_string(max) + ")";
}

void ParseJsonlBlock(const InputOptions& options, JsonlRecordParser* parser, DocumentBlock* block) {
  const char* data = block->chunk.lines();
  const size_t size = block->chunk.size;
  size_t pos = 0;
  uint64_t line = 0;
  size_t count = 0;
  block->line_skips.clear();
  block->replaced_utf8 = 0;
  block->documents.clear();
  auto skip = [&](std::string id, std::string reason) {
    block->line_skips.push_back(
        SkippedRecord{block->source_path, line, std::move(id), std::move(reason)});
  };
  while (pos < size) {
    const void* newline = std::memchr(data + pos, '\n', size - pos);
    const size_t stop = newline != nullptr ? static_cast<const char*>(newline) - data : size;
    size_t length = stop - pos;
    // As LineReader: "\r\n" ends a line, a "\r" at the very end of the
    // stream stays part of the last line.
    if (newline != nullptr && length > 0 && data[stop - 1] == '\r') --length;
    std::string_view text(data + pos, length);
    pos = newline != nullptr ? stop + 1 : size;
    ++line;
    if (length > options.max_document_bytes) {
      skip("", TooLargeReason("record", length, options.max_document_bytes));
      continue;
    }
    // A UTF-8 byte order mark, as some Windows tools write, is not JSON.
    if (block->starts_source && line == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") {
      text.remove_prefix(3);
    }
    if (IsBlankLine(text)) continue;
    if (count == block->documents.size()) block->documents.emplace_back();
    if (count >= block->id_lines.size()) {
      block->id_lines.resize(count + 1);
      block->records.resize(count + 1);
    }
    Document* doc = &block->documents[count];
    bool has_id;
    bool replaced_utf8;
    Status status = parser->Parse(text, doc, &has_id, &replaced_utf8);
    if (!status.ok()) {
      skip(doc->id, status.message());
      continue;
    }
    if (replaced_utf8) ++block->replaced_utf8;
    block->id_lines[count] = has_id ? 0 : line;
    block->records[count] = text;
    if (options.keep_raw_records) {
      doc->raw_record.assign(text);
    } else {
      doc->raw_record.clear();
    }
    ++count;
  }
  block->lines = line;
  block->num_documents = count;
}

void AssignLineIds(DocumentBlock* block) {
  if (!block->jsonl) return;
  for (size_t i = 0; i < block->num_documents; ++i) {
    if (block->id_lines[i] == 0) continue;
    std::string& id = block->documents[i].id;
    id.assign(block->source_name);
    id.push_back(':');
    char digits[24];
    char* end =
        std::to_chars(digits, digits + sizeof digits, block->first_line + block->id_lines[i] - 1)
            .ptr;
    id.append(digits, end);
  }
}

}  // namespace neardup::internal
