// DocumentReader: reads Documents from files, directories, JSONL and stdin,
// transparently decompressing gzip and zstd.
//
// Inputs are read in the order given. Each input is
//  - "-": standard input;
//  - a directory: every regular file below it (symbolic links to files are
//    followed, symbolic links to directories are not), in byte-wise sorted
//    order of the path relative to the directory; a file's name there is that
//    relative path with '/' separators. Every other entry that is not a
//    directory (a dangling symbolic link, a symbolic link loop, a link to a
//    directory, a FIFO, a socket, a device) is skipped and reported, as is a
//    directory listed in InputOptions::excluded_directories (with everything
//    below it);
//  - anything else (a regular file, a FIFO, /dev/stdin): read as a stream; its
//    name is the path exactly as given.
// Compression is detected from the first bytes (gzip 1f 8b, multi-member
// streams included; zstd 28 b5 2f fd, multi-frame), never from the name. The
// format of a file (InputFormat::kAuto) is decided by its name with a
// trailing ".gz" or ".zst" removed: "*.jsonl" and "*.ndjson" (any letter
// case) are JSONL, anything else is one text document.
//
// A file that is not JSONL is recognised by its content and name
// (DetectDocumentFormat in neardup/document_extractor.h, after
// decompression): PDF, DOCX, ODT, HTML and WARC files give their extracted
// text (a WARC file one document per text record, its id the record's target
// URI); a file that cannot be extracted (damaged, encrypted, over a cap) is
// skipped, reported through on_skip and counted, like a bad JSONL record.
// Any other file is a text document: the whole file, bytes as-is (binary and
// invalid UTF-8 are passed through). Its id is the file's name, "-" for stdin.
//
// Inputs that may never end (ByteStream::HasEnd false: a pipe, a FIFO, a
// character device such as /dev/zero) are never read past the size limit:
// a text document over max_document_bytes is skipped after max_document_bytes
// + 1 bytes (the rest is not read), and a JSONL line over it ends the reader
// with ResourceExhausted (the rest of the line could only be passed over by
// reading it, maybe forever). In a regular file, compressed or not, an
// over-long document or line is passed over and its size reported.
//
// JSONL: one JSON object per line ("\n" or "\r\n"; lines of any length;
// blank lines ignored; a last line without a newline still counts; a UTF-8 byte
// order mark at the start of a file is ignored). The text is the string field
// `text_field` with escapes decoded; invalid UTF-8 in a line is replaced, each
// maximal ill-formed subpart by U+FFFD (as the normalizer does for a text
// file, so a JSONL text and the same bytes in a file fingerprint alike), and
// the record is counted (documents_with_invalid_utf8). The id is the field
// `id_field`: a string as is, a number as its JSON text (42 -> "42", 1.5e3 ->
// "1.5e3", so the ids 1 and "1" are the same id); when the field is
// absent or null the id is "<name>:<line>" (name as above, line 1-based). If a
// key occurs twice in an object, the last occurrence counts (as in Python's
// json and JavaScript's JSON.parse). A record is skipped, reported through
// InputOptions::on_skip and counted, when it is not valid JSON (RFC 8259: any
// number magnitude is valid), is not an object, has no string text field, has
// an id that is neither a string, a number nor null, or is longer than
// max_document_bytes.
//
// Cost: JSONL is streamed: memory is a buffer of the longest line plus 1 MiB
// (less for a file known to be smaller) and the parser's index of that line
// (about 6 bytes per byte of the longest line seen; released after lines over
// 64 MiB). A text document is loaded whole: an uncompressed file in one read,
// a compressed one into a buffer that doubles. Directories are listed (all
// relative paths in memory) when the reader reaches them.
// Thread safety: a reader is used by one thread at a time.
#ifndef NEARDUP_DOCUMENT_READER_H_
#define NEARDUP_DOCUMENT_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neardup/document.h"
#include "neardup/document_extractor.h"
#include "neardup/status.h"

namespace neardup {
namespace internal {
class DocumentBlockReader;
}  // namespace internal

enum class InputFormat {
  kAuto,   // by file name (see above); stdin is text
  kText,   // every input is one text document per file
  kJsonl,  // every input, stdin and files inside directories included, is JSONL
  // Every input is extracted as this format (neardup/document_extractor.h);
  // kText above reads bytes as they are, without extraction.
  kPdf,
  kDocx,
  kOdt,
  kHtml,
  kWarc,
};

// A record or file that was not turned into a Document.
struct SkippedRecord {
  std::string source;  // path that can be opened ("dir/sub/a.jsonl"), "-" for stdin
  uint64_t line = 0;   // 1-based JSONL line; 0 when not line-based
  std::string id;      // the record's id when known, else empty
  std::string reason;  // e.g. "invalid JSON: ...", "text field \"text\" is missing"
};

struct InputOptions {
  // Default kAuto: JSONL by name, text otherwise.
  InputFormat format = InputFormat::kAuto;
  // JSONL field holding the document text. Default "text".
  std::string text_field = "text";
  // JSONL field holding the document id. Default "id".
  std::string id_field = "id";
  // Larger documents are skipped and reported, never loaded whole. For a text
  // file the size is the file's (decompressed) size; for JSONL it is the
  // length of the line, which bounds the text's length (escapes only shrink),
  // so a line longer than this is skipped even when its text field alone
  // would fit. Default 2 GiB; lower it to bound memory per document.
  uint64_t max_document_bytes = 1ull << 31;
  // Fill Document::raw_record with each JSONL line verbatim. Default false: it
  // doubles the memory a JSONL document takes.
  bool keep_raw_records = false;
  // Called for each skipped record, in reading order. May be empty.
  std::function<void(const SkippedRecord&)> on_skip;
  // Directories not read, neither as an input nor below an input directory
  // (compared by device and inode, so any path to them counts); each is
  // reported as a skipped record with `reason`. E.g. the collection that
  // `neardup index add` writes, so it never indexes its own files.
  struct ExcludedDirectory {
    std::string path;
    std::string reason;
  };
  std::vector<ExcludedDirectory> excluded_directories;
  // How PDF, DOCX, ODT, HTML and WARC files are extracted (OCR, caps).
  ExtractOptions extract;
  // Called, in reading order, for what extraction reports without skipping
  // the file: "pages 2, 3 of 5 have no text" (a scanned PDF read without
  // OCR), "1 page read by OCR". `source` as in SkippedRecord. May be empty.
  std::function<void(const std::string& source, const std::string& message)> on_notice;
  // The number of the first line of a JSONL input. Default 1. Larger for a
  // stream that starts inside a file (FromStream over a byte range of a
  // split JSONL file, as neardup-mpi reads one): ids of records without one
  // ("<name>:<line>") and skip reports then give the file's own line
  // numbers, and a byte order mark is ignored only on line 1.
  uint64_t first_line_number = 1;
  // Block reading only (RunFingerprintPipeline, CollectFingerprints; Next
  // does not call it): called in reading order for each JSONL document whose
  // id was made from its line ("<name>:<line>"), with the document's number
  // among the documents this reader gave (from 0) and that line. A reader
  // that numbered its lines before knowing where they start (neardup-mpi's
  // pieces of a split file, read before the lines ahead of them are counted)
  // can then name those documents again. May be empty.
  std::function<void(uint64_t document, uint64_t line)> on_line_id;
  // Read uncompressed JSONL files through a read-only memory mapping when
  // they are read in blocks (RunFingerprintPipeline): the chunks are the
  // page cache's pages, with no read(2) copy. Default true. The documents are
  // the same either way. A mapped file that another process truncates while
  // it is read ends the read with DataLoss "input FILE shrank while it was
  // read (N -> M bytes)" after the documents before the cut (a SIGBUS guard
  // turns the lost pages into zeros that are never delivered; docs/
  // PIPELINE.md, "Inputs that shrink"); false reads by read(2), which sees
  // the file end early instead.
  bool map_files = true;
};

// A source of bytes read front to back: a file, stdin, a decompressor, memory.
class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // Reads up to `size` bytes into `buffer` and returns how many were read:
  // 0 only at the end of the stream. Bytes that were decoded before a failure
  // are returned first; the failure is returned by the next call. After an
  // error the stream must not be read again.
  // REQUIRES: size > 0.
  virtual Result<size_t> Read(char* buffer, size_t size) = 0;

  // The number of bytes still to come when known in advance (an uncompressed
  // regular file), else nullopt. A hint: the stream may end up shorter or
  // longer if the file changes while it is read.
  virtual std::optional<uint64_t> RemainingSizeHint() const { return std::nullopt; }

  // Whether the stream is known to end: true for a regular file (compressed
  // or not) and for memory; false for a pipe, FIFO, socket or character
  // device, whose end may never come (/dev/zero). The reader reads such a
  // stream no further than it must (see above).
  virtual bool HasEnd() const { return true; }
};

class DocumentReader {
 public:
  // Checks that every input exists: NotFound naming the first missing path,
  // IoError when it cannot be examined, InvalidArgument when `inputs` is empty.
  // Files are opened only when reached.
  static Result<std::unique_ptr<DocumentReader>> Open(std::vector<std::string> inputs,
                                                      InputOptions options);

  // Reads one already opened stream (tests, fuzzing, embedding). `source_name`
  // stands for the path (ids, skip reports, error messages, and the format
  // when `format` is kAuto). Compression is detected as for files.
  static std::unique_ptr<DocumentReader> FromStream(std::unique_ptr<ByteStream> stream,
                                                    std::string source_name, InputFormat format,
                                                    InputOptions options);

  ~DocumentReader();
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  // true: *doc holds the next document. false: all inputs are exhausted.
  // An error (IoError naming the path and the system's reason, NotFound for a
  // file removed since Open, DataLoss naming the path and the compressed byte
  // offset of a truncated or corrupt stream) comes only after every document
  // that was complete before the damage; after an error the reader is
  // finished and every later call returns the same error.
  Result<bool> Next(Document* doc);

  // Documents returned so far by Next.
  uint64_t documents_read() const;
  // Records reported to on_skip so far.
  uint64_t records_skipped() const;
  // JSONL records returned so far whose line had invalid UTF-8 (replaced).
  uint64_t documents_with_invalid_utf8() const;
  // Documents extracted from PDF, DOCX, ODT, HTML and WARC files so far; PDF
  // pages left without text, and pages read by OCR.
  uint64_t documents_extracted() const;
  uint64_t pages_without_text() const;
  uint64_t pages_read_by_ocr() const;

 private:
  // Block reading for the parallel fingerprint pipeline (src/io/document_block.h).
  friend class internal::DocumentBlockReader;
  class Impl;
  explicit DocumentReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_DOCUMENT_READER_H_
