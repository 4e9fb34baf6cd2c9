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

Status CheckMappedChunk(const DocumentBlock& block) {
  if (!block.jsonl || block.chunk.mapping == nullptr || block.chunk.mapped_end == 0) {
    return Status::Ok();
  }
  return block.chunk.mapping->CheckRead(block.chunk.mapped_end);
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
  block->arena.Clear();
  auto skip = [&](std::string id, std::string reason) {
    block->line_skips.push_back(
        SkippedRecord{block->source_path, line, std::move(id), std::move(reason)});
  };
  JsonlRecord record;
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
    // A UTF-8 byte order mark, as some Windows tools write, is not JSON. Only
    // on the file's line 1, as in Next: not on the first line of a stream that
    // starts inside a file (InputOptions::first_line_number > 1).
    if (block->starts_source && line == 1 && options.first_line_number <= 1 &&
        text.substr(0, 3) == "\xEF\xBB\xBF") {
      text.remove_prefix(3);
    }
    if (IsBlankLine(text)) continue;
    Status status = parser->ParseRecord(text, &block->arena, &record);
    if (!status.ok()) {
      skip(record.has_id ? std::string(FieldView(text, block->arena, record.id)) : std::string(),
           status.message());
      continue;
    }
    if (record.replaced_utf8) ++block->replaced_utf8;
    // Offsets within the line become offsets within the chunk.
    const size_t line_offset = static_cast<size_t>(text.data() - data);
    for (JsonlField* field : {&record.id, &record.text}) {
      if (!field->in_arena) field->offset += line_offset;
    }
    if (count >= block->fields.size()) {
      block->fields.resize(count + 1);
      block->id_lines.resize(count + 1);
      block->records.resize(count + 1);
    }
    block->fields[count] = record;
    block->id_lines[count] = record.has_id ? 0 : line;
    block->records[count] = text;
    ++count;
  }
  block->lines = line;
  block->num_documents = count;
}

void AssignLineIds(DocumentBlock* block) {
  const size_t n = block->num_documents;
  block->ids.resize(n);
  block->texts.resize(n);
  if (!block->jsonl) {
    for (size_t i = 0; i < n; ++i) {
      block->ids[i] = block->documents[i].id;
      block->texts[i] = block->documents[i].text;
    }
    return;
  }
  const std::string_view chunk(block->chunk.lines(), block->chunk.size);
  // Reserved whole first, so the views below stay valid while it is filled.
  size_t missing = 0;
  for (size_t i = 0; i < n; ++i) missing += block->id_lines[i] != 0;
  std::string& line_ids = block->line_ids;
  line_ids.clear();
  line_ids.reserve(missing * (block->source_name.size() + 1 + 20));
  for (size_t i = 0; i < n; ++i) {
    const JsonlRecord& record = block->fields[i];
    block->texts[i] = FieldView(chunk, block->arena, record.text);
    if (block->id_lines[i] == 0) {
      block->ids[i] = FieldView(chunk, block->arena, record.id);
      continue;
    }
    const size_t start = line_ids.size();
    line_ids.append(block->source_name);
    line_ids.push_back(':');
    char digits[24];
    char* end =
        std::to_chars(digits, digits + sizeof digits, block->first_line + block->id_lines[i] - 1)
            .ptr;
    line_ids.append(digits, end);
    block->ids[i] = std::string_view(line_ids.data() + start, line_ids.size() - start);
  }
}

void MakeDocuments(bool keep_raw_records, DocumentBlock* block) {
  if (!block->jsonl) return;
  const size_t n = block->num_documents;
  if (block->documents.size() < n) block->documents.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Document& doc = block->documents[i];
    doc.id.assign(block->ids[i]);
    doc.text.assign(block->texts[i]);
    if (keep_raw_records) {
      doc.raw_record.assign(block->records[i]);
    } else {
      doc.raw_record.clear();
    }
  }
}

}  // namespace neardup::internal
