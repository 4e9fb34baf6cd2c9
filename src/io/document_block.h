// DocumentBlock: the unit of parallel reading (fingerprint_pipeline.cc). A
// DocumentReader hands out blocks instead of single documents: either a
// chunk of whole JSONL lines, which any thread may then parse, or a run of
// text documents read whole. Four steps, of which two run in parallel:
//
//   DocumentBlockReader::Next     serial, in order: read a chunk (no parsing)
//   ParseJsonlBlock               any thread, one JsonlRecordParser each
//   DocumentBlockReader::Number   serial, in order: the chunk's first line
//   AssignLineIds                 any thread: "<name>:<line>" ids, views
//   DocumentBlockReader::Finish   serial, in order: skip reports, counters
//
// The documents, skips and errors that come out are exactly those of
// DocumentReader::Next over the same inputs, in the same order.
// Cost: a block's buffers (chunk, arena, views, skip lists) are reused when
// the block is. A JSONL document costs no allocation: its id and text are
// views into the chunk (a string without escapes) or into the block's arena
// (unescaped strings, "<name>:<line>" ids); MakeDocuments copies them into
// Document strings only for callers that want Documents.
// Thread safety: Next, Number and Finish each serially in block order (they
// may run at the same time as each other); a reader so used must not also be
// read with DocumentReader::Next.
#ifndef NEARDUP_IO_DOCUMENT_BLOCK_H_
#define NEARDUP_IO_DOCUMENT_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/jsonl_chunker.h"
#include "io/jsonl_record_parser.h"
#include "io/text_arena.h"
#include "neardup/document.h"
#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::internal {

struct DocumentBlock {
  // Set by DocumentBlockReader::Next.
  bool jsonl = false;          // a chunk of JSONL lines, else text documents
  std::string source_path;     // JSONL: for skip reports
  std::string source_name;     // JSONL: for "<name>:<line>" ids
  bool starts_source = false;  // JSONL: the chunk holds the source's line 1
  JsonlChunk chunk;
  // Skips found while reading, before this block's documents.
  std::vector<SkippedRecord> leading_skips;
  // The reader failed after this block's content (or the chunk's tail).
  Status error;

  // The block has num_documents documents. Text: documents[0, num_documents)
  // (later ones are spare capacity), set by Next. JSONL: filled only by
  // MakeDocuments (ids and texts are the documents).
  std::vector<Document> documents;
  size_t num_documents = 0;
  // Per document, its id and text; set by AssignLineIds. JSONL: views into
  // the chunk, `arena` or `line_ids`; text: into `documents`. Valid until
  // the block is read again.
  std::vector<std::string_view> ids;
  std::vector<std::string_view> texts;
  // JSONL: per document, where ParseJsonlBlock found its id and text (field
  // offsets relative to the chunk's lines); strings with escapes, and lines
  // with invalid UTF-8, are unescaped into `arena`.
  std::vector<JsonlRecord> fields;
  TextArena arena;
  std::string line_ids;  // JSONL: "<name>:<line>" ids of documents without one
  // JSONL: per document, its 1-based line within the chunk when it had no
  // id (AssignLineIds names it), else 0.
  std::vector<uint64_t> id_lines;
  // JSONL: per document, its line in the chunk as Document::raw_record would
  // hold it (no line ending, no byte order mark), whatever keep_raw_records.
  std::vector<std::string_view> records;
  // JSONL: records skipped while parsing; line numbers within the chunk
  // until Number makes them the source's.
  std::vector<SkippedRecord> line_skips;
  uint64_t lines = 0;          // JSONL: lines in the chunk
  uint64_t replaced_utf8 = 0;  // JSONL: documents whose invalid UTF-8 was replaced
  uint64_t first_line = 0;     // JSONL: set by Number

  std::span<const Document> document_span() const { return {documents.data(), num_documents}; }
};

class DocumentBlockReader {
 public:
  // The next block: JSONL chunks of about `chunk_bytes`; text documents
  // until `max_documents` or `max_bytes` of text. false: nothing more (a
  // failure comes as a block whose `error` is set, after which Next returns
  // false).
  static bool Next(DocumentReader& reader, size_t chunk_bytes, size_t max_documents,
                   size_t max_bytes, DocumentBlock* block);
  static void Number(DocumentReader& reader, DocumentBlock* block);
  // Reports the block's skips (on_skip) and counts its documents; returns
  // block->error.
  static Status Finish(DocumentReader& reader, const DocumentBlock& block);
  static const InputOptions& options(const DocumentReader& reader);
};

// Splits block->chunk into lines and parses each into block->fields, as
// DocumentReader::Next does line by line, without copying any text (strings
// with escapes are unescaped once, into block->arena).
void ParseJsonlBlock(const InputOptions& options, JsonlRecordParser* parser, DocumentBlock* block);

// Names JSONL documents without an id "<source_name>:<line>" and sets
// block->ids and block->texts. REQUIRES: Number ran.
void AssignLineIds(DocumentBlock* block);

// JSONL: copies ids and texts into block->documents[0, num_documents), and
// each record into raw_record when keep_raw_records (else clears it), for
// callers that take Documents. REQUIRES: AssignLineIds ran.
void MakeDocuments(bool keep_raw_records, DocumentBlock* block);

// OK unless the block is a chunk of a mapped file that shrank under it
// before its bytes were read (MappedInput::CheckRead): then DataLoss, and the
// chunk's documents and skips hold zeros where the file's bytes were. Call
// it after the chunk's last use through its views: the pipeline checks
// before the sink sees a block and again after (docs/PIPELINE.md, "Inputs
// that shrink"). Cost: an atomic load and a memory read; a stat(2) for a
// chunk in the file's last page.
Status CheckMappedChunk(const DocumentBlock& block);

// Shared with document_reader.cc: a line of only spaces, tabs and "\r" is
// blank (ignored); the reason given for a too large record or document.
bool IsBlankLine(std::string_view line);
std::string TooLargeReason(const char* what, uint64_t size, uint64_t max);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_DOCUMENT_BLOCK_H_
