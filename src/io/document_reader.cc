#include "neardup/document_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "io/byte_stream.h"
#include "io/decompressing_stream.h"
#include "io/document_block.h"
#include "io/extracted_documents.h"
#include "io/input_files.h"
#include "io/jsonl_chunker.h"
#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"
#include "io/mapped_input.h"

namespace neardup {
namespace {

// First buffer for a text document whose size is not known in advance (stdin,
// compressed); it doubles from there, so big documents are read in big blocks
// while a directory of small compressed files does not zero 1 MiB per file.
constexpr size_t kTextFirstBlockBytes = size_t{64} << 10;

using internal::TooLargeReason;

}  // namespace

class DocumentReader::Impl {
 public:
  Impl(std::vector<std::string> inputs, InputOptions options)
      : inputs_(std::move(inputs)), options_(std::move(options)), extracted_(&options_) {}

  // Makes `stream` the only input (FromStream).
  void SetStream(std::unique_ptr<ByteStream> stream, std::string name, InputFormat format) {
    pending_stream_ = std::move(stream);
    pending_name_ = std::move(name);
    options_.format = format;  // the only input: its format is the reader's
    pending_jsonl_ = format == InputFormat::kJsonl ||
                     (format == InputFormat::kAuto && internal::IsJsonlName(pending_name_));
  }

  Result<bool> Next(Document* doc) {
    if (!error_.ok()) return error_;
    Result<bool> result = NextDocument(doc);
    if (!result.ok()) {
      error_ = result.status();
      source_ = Source();
      dir_entries_.clear();
      return error_;
    }
    if (*result) ++documents_read_;
    return result;
  }

  uint64_t documents_read() const { return documents_read_; }
  uint64_t records_skipped() const { return records_skipped_; }
  uint64_t documents_with_invalid_utf8() const { return documents_with_invalid_utf8_; }
  const internal::ExtractedDocuments& extracted() const { return extracted_; }

  const InputOptions& options() const { return options_; }

  bool NextBlock(size_t chunk_bytes, size_t max_documents, size_t max_bytes,
                 internal::DocumentBlock* block) {
    block->jsonl = false;
    block->starts_source = false;
    block->leading_skips.clear();
    block->error = Status::Ok();
    block->num_documents = 0;
    block->line_skips.clear();
    block->lines = 0;
    block->replaced_utf8 = 0;
    if (!error_.ok()) return false;
    block_skips_ = &block->leading_skips;
    Status status = FillBlock(chunk_bytes, max_documents, max_bytes, block);
    block_skips_ = nullptr;
    if (!status.ok()) {
      error_ = status;
      block->error = status;
      source_ = Source();
      dir_entries_.clear();
      return true;
    }
    return block->jsonl || block->num_documents > 0 || !block->leading_skips.empty();
  }

  void NumberBlock(internal::DocumentBlock* block) {
    if (!block->jsonl) return;
    if (block->starts_source) block_lines_ = options_.first_line_number - 1;
    block->first_line = block_lines_ + 1;
    for (SkippedRecord& skip : block->line_skips) skip.line += block_lines_;
    block_lines_ += block->lines;
    const internal::JsonlChunk& chunk = block->chunk;
    switch (chunk.tail) {
      case internal::ChunkTail::kNone:
        break;
      case internal::ChunkTail::kTooLongLine:
        ++block_lines_;
        block->line_skips.push_back(SkippedRecord{
            block->source_path, block_lines_, "",
            TooLargeReason("record", chunk.tail_length, options_.max_document_bytes)});
        break;
      case internal::ChunkTail::kUnendingTooLongLine:
        // The same words as LineReader's.
        block->error = ResourceExhaustedError(
            block->source_path + ": line " + std::to_string(block_lines_ + 1) +
            " is longer than max_document_bytes (" + std::to_string(options_.max_document_bytes) +
            ") and this input (a pipe, FIFO or device) may never end, so the rest of the "
            "line cannot be passed over: stopped reading it (raise the limit or read a file)");
        break;
      case internal::ChunkTail::kError:
        block->error = chunk.tail_error;
        break;
    }
  }

  Status FinishBlock(const internal::DocumentBlock& block) {
    for (const std::vector<SkippedRecord>* skips : {&block.leading_skips, &block.line_skips}) {
      for (const SkippedRecord& skip : *skips) {
        ++records_skipped_;
        if (options_.on_skip) options_.on_skip(skip);
      }
    }
    if (options_.on_line_id && block.jsonl) {
      for (size_t i = 0; i < block.num_documents; ++i) {
        if (block.id_lines[i] != 0) {
          options_.on_line_id(documents_read_ + i, block.first_line + block.id_lines[i] - 1);
        }
      }
    }
    documents_read_ += block.num_documents;
    documents_with_invalid_utf8_ += block.replaced_utf8;
    // The block's mapped pages are given back by the pipeline once its sink
    // is done with the views into them (fingerprint_pipeline.cc).
    return block.error;
  }

 private:
  // The file being read. Invariant: lines and chunker are set only when
  // jsonl and stream are, lines by Next and chunker by NextBlock.
  struct Source {
    std::string path;  // for skip reports and errors
    std::string name;  // for ids
    bool jsonl = false;
    std::unique_ptr<ByteStream> stream;
    std::unique_ptr<internal::LineReader> lines;
    std::unique_ptr<internal::JsonlChunker> chunker;
    // A plain JSONL file mapped for NextBlock (null: chunks are read).
    std::shared_ptr<const internal::MappedInput> mapping;
  };

  // The next document in reading order: files to extract wait in extracted_
  // (which extracts them in parallel, a batch at a time) and what comes
  // after them waits behind them. The end or an error of the inputs comes
  // after the documents read before it.
  Result<bool> NextDocument(Document* doc) {
    while (true) {
      if (extracted_.Next(doc)) return true;
      if (!deferred_error_.ok()) return deferred_error_;
      if (extracted_.BatchFull()) {
        FlushExtraction();
        continue;
      }
      Result<bool> got = ReadNext(doc);
      if (got.ok() && *got && extracted_.HasQueued()) {
        extracted_.AddFinal(doc);
        continue;
      }
      if ((!got.ok() || !*got) && extracted_.HasQueued()) {
        if (!got.ok()) deferred_error_ = got.status();
        FlushExtraction();
        continue;
      }
      return got;
    }
  }

  void FlushExtraction() {
    extracted_.Flush([this](const std::string& path, std::string id, std::string reason) {
      Skip(path, 0, std::move(id), std::move(reason));
    });
  }

  // The next document of the inputs, before extraction; false at their end.
  Result<bool> ReadNext(Document* doc) {
    while (true) {
      if (source_.stream == nullptr) {
        NEARDUP_ASSIGN_OR_RETURN(bool opened, OpenNextSource());
        if (!opened) return false;
      }
      bool got;
      if (source_.jsonl) {
        NEARDUP_ASSIGN_OR_RETURN(got, NextJsonlRecord(doc));
        if (got) return true;
      } else {
        NEARDUP_ASSIGN_OR_RETURN(got, ReadTextDocument(doc));
      }
      source_ = Source();
      if (got) return true;
    }
  }

  // Fills `block` with the next JSONL chunk, or with whole text documents up
  // to the limits. Files to extract (PDF, DOCX, ...) are queued in
  // extracted_ and their documents come out before anything read after them,
  // as in NextDocument: a JSONL chunk is read only when nothing waits.
  Status FillBlock(size_t chunk_bytes, size_t max_documents, size_t max_bytes,
                   internal::DocumentBlock* block) {
    size_t bytes = 0;
    auto full = [&] { return block->num_documents >= max_documents || bytes >= max_bytes; };
    auto slot = [&] {
      if (block->num_documents == block->documents.size()) block->documents.emplace_back();
      return &block->documents[block->num_documents];
    };
    while (true) {
      while (!full() && extracted_.Next(slot())) {
        bytes += block->documents[block->num_documents].text.size();
        ++block->num_documents;
      }
      if (full()) return Status::Ok();
      if (!deferred_error_.ok()) {
        // The documents before the error go out first.
        return block->num_documents > 0 ? Status::Ok() : deferred_error_;
      }
      if (extracted_.BatchFull()) {
        FlushExtraction();
        continue;
      }
      if (source_.stream == nullptr) {
        Result<bool> opened = OpenNextSource();
        if ((!opened.ok() || !*opened) && extracted_.HasQueued()) {
          if (!opened.ok()) deferred_error_ = opened.status();
          FlushExtraction();
          continue;
        }
        if (!opened.ok()) return opened.status();
        if (!*opened) return Status::Ok();
      }
      if (source_.jsonl) {
        // A JSONL chunk never shares a block with text documents.
        if (block->num_documents > 0) return Status::Ok();
        if (extracted_.HasQueued()) {
          FlushExtraction();
          continue;
        }
        bool starts = source_.chunker == nullptr;
        if (starts) {
          source_.chunker =
              source_.mapping != nullptr
                  ? std::make_unique<internal::JsonlChunker>(source_.mapping, chunk_bytes,
                                                             options_.max_document_bytes)
                  : std::make_unique<internal::JsonlChunker>(source_.stream.get(), chunk_bytes,
                                                             options_.max_document_bytes);
        }
        NEARDUP_ASSIGN_OR_RETURN(bool got, source_.chunker->Next(&block->chunk));
        if (!got) {
          source_ = Source();
          continue;
        }
        block->jsonl = true;
        block->starts_source = starts;
        block->source_path = source_.path;
        block->source_name = source_.name;
        const internal::ChunkTail tail = block->chunk.tail;
        if (tail == internal::ChunkTail::kError ||
            tail == internal::ChunkTail::kUnendingTooLongLine) {
          // Number turns the tail into the block's error; the reader stops.
          error_ = ResourceExhaustedError(source_.path + ": reading stopped");
          source_ = Source();
          dir_entries_.clear();
        }
        return Status::Ok();
      }
      Document* doc = slot();
      Result<bool> got = ReadTextDocument(doc);
      source_ = Source();
      if (!got.ok() && extracted_.HasQueued()) {
        deferred_error_ = got.status();
        FlushExtraction();
        continue;
      }
      if (!got.ok()) return got.status();
      if (!*got) continue;  // skipped, or queued for extraction
      if (extracted_.HasQueued()) {
        extracted_.AddFinal(doc);  // waits behind the files queued before it
        continue;
      }
      ++block->num_documents;
      bytes += doc->text.size();
      if (full()) return Status::Ok();
    }
  }

  bool IsJsonl(const std::string& name) const {
    return options_.format == InputFormat::kJsonl ||
           (options_.format == InputFormat::kAuto && internal::IsJsonlName(name));
  }

  // Opens the next file of the inputs; false when there is none.
  Result<bool> OpenNextSource() {
    while (true) {
      if (pending_stream_ != nullptr) {
        NEARDUP_RETURN_IF_ERROR(
            StartSource(std::move(pending_stream_), pending_name_, pending_name_, pending_jsonl_));
        return true;
      }
      if (next_dir_entry_ < dir_entries_.size()) {
        internal::DirectoryEntry& entry = dir_entries_[next_dir_entry_++];
        if (!entry.skip_reason.empty()) {
          Skip(entry.path, 0, entry.name, std::move(entry.skip_reason));
          continue;
        }
        NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> raw,
                                 internal::OpenFileStream(entry.path));
        bool jsonl = IsJsonl(entry.name);
        NEARDUP_RETURN_IF_ERROR(StartSource(std::move(raw), std::move(entry.path),
                                            std::move(entry.name), jsonl,
                                            /*mappable=*/true));
        return true;
      }
      dir_entries_.clear();
      next_dir_entry_ = 0;
      if (next_input_ == inputs_.size()) return false;
      const std::string& input = inputs_[next_input_++];
      if (input == "-") {
        NEARDUP_RETURN_IF_ERROR(StartSource(internal::OpenStdinStream(), "-", "-",
                                            options_.format == InputFormat::kJsonl));
        return true;
      }
      struct stat st;
      if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (const internal::ExcludedDirectoryId* excluded = FindExcluded(st)) {
          Skip(input, 0, input, excluded->reason);
          continue;
        }
        NEARDUP_ASSIGN_OR_RETURN(dir_entries_, internal::ListDirectory(input, excluded_));
        continue;
      }
      NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> raw, internal::OpenFileStream(input));
      NEARDUP_RETURN_IF_ERROR(
          StartSource(std::move(raw), input, input, IsJsonl(input), /*mappable=*/true));
      return true;
    }
  }

  Status StartSource(std::unique_ptr<ByteStream> raw, std::string path, std::string name,
                     bool jsonl, bool mappable = false) {
    internal::Compression compression;
    NEARDUP_ASSIGN_OR_RETURN(source_.stream,
                             internal::OpenDecompressed(std::move(raw), path, &compression));
    // Uncompressed JSONL files are chunked straight from the page cache
    // (NextBlock only; Next reads lines from the stream).
    if (mappable && jsonl && options_.map_files && compression == internal::Compression::kNone &&
        source_.stream->HasEnd()) {
      source_.mapping = internal::MappedInput::Map(path);
    }
    source_.path = std::move(path);
    source_.name = std::move(name);
    source_.jsonl = jsonl;
    return Status::Ok();
  }

  // The next record of the JSONL source; false at its end.
  Result<bool> NextJsonlRecord(Document* doc) {
    if (source_.lines == nullptr) {
      source_.lines =
          std::make_unique<internal::LineReader>(source_.stream.get(), options_.max_document_bytes,
                                                 source_.path, options_.first_line_number);
      if (parser_ == nullptr) {
        parser_ =
            std::make_unique<internal::JsonlRecordParser>(options_.text_field, options_.id_field);
      }
    }
    internal::Line line;
    while (true) {
      NEARDUP_ASSIGN_OR_RETURN(bool got, source_.lines->Next(&line));
      if (!got) return false;
      if (line.too_long) {
        Skip(source_.path, line.number, "",
             TooLargeReason("record", line.length, options_.max_document_bytes));
        continue;
      }
      std::string_view text = line.text;
      // A UTF-8 byte order mark, as some Windows tools write, is not JSON.
      if (line.number == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
      if (internal::IsBlankLine(text)) continue;
      bool has_id;
      bool replaced_utf8;
      Status status = parser_->Parse(text, doc, &has_id, &replaced_utf8);
      if (status.ok() && replaced_utf8) ++documents_with_invalid_utf8_;
      if (!status.ok()) {
        Skip(source_.path, line.number, doc->id, status.message());
        continue;
      }
      if (!has_id) {
        doc->id = source_.name;
        doc->id += ':';
        doc->id += std::to_string(line.number);
      }
      if (options_.keep_raw_records) {
        doc->raw_record.assign(text);
      } else {
        doc->raw_record.clear();
      }
      return true;
    }
  }

  // Reads the whole source as one document; false when it was skipped.
  Result<bool> ReadTextDocument(Document* doc) {
    ByteStream* stream = source_.stream.get();
    const uint64_t max = options_.max_document_bytes;
    std::optional<uint64_t> hint = stream->RemainingSizeHint();
    if (hint.has_value() && *hint > max) {
      Skip(source_.path, 0, source_.name, TooLargeReason("document", *hint, max));
      return false;
    }
    std::string& text = doc->text;
    // +1: the read that finds the end needs room even when the hint is exact.
    text.resize(hint.has_value() ? static_cast<size_t>(*hint) + 1 : kTextFirstBlockBytes);
    uint64_t filled = 0;
    while (true) {
      if (filled == text.size()) text.resize(std::max(2 * text.size(), kTextFirstBlockBytes));
      NEARDUP_ASSIGN_OR_RETURN(size_t n, stream->Read(text.data() + filled, text.size() - filled));
      if (n == 0) break;
      filled += n;
      if (filled > max && !stream->HasEnd()) {
        // A pipe, FIFO or device may never end (/dev/zero): the document is
        // the whole stream, so nothing after it is lost by not reading on.
        text.clear();
        Skip(source_.path, 0, source_.name,
             "document of more than " + std::to_string(max) +
                 " bytes exceeds max_document_bytes (" + std::to_string(max) +
                 "); this input (a pipe, FIFO or device) may never end: the rest was not read");
        return false;
      }
      if (filled > max) {
        // A file ends: count the rest without keeping it.
        text.resize(kTextFirstBlockBytes);
        while (true) {
          NEARDUP_ASSIGN_OR_RETURN(n, stream->Read(text.data(), text.size()));
          if (n == 0) break;
          filled += n;
        }
        text.clear();
        Skip(source_.path, 0, source_.name, TooLargeReason("document", filled, max));
        return false;
      }
    }
    text.resize(filled);
    doc->id = source_.name;
    doc->raw_record.clear();
    return extracted_.Add(source_.path, doc);
  }

  const internal::ExcludedDirectoryId* FindExcluded(const struct stat& st) {
    if (!excluded_resolved_) {
      // Resolved when first needed, so an excluded directory created after
      // Open still counts.
      excluded_resolved_ = true;
      for (const InputOptions::ExcludedDirectory& dir : options_.excluded_directories) {
        struct stat dir_st;
        if (::stat(dir.path.c_str(), &dir_st) == 0) {
          excluded_.push_back({dir_st.st_dev, dir_st.st_ino, dir.reason});
        }
      }
    }
    for (const internal::ExcludedDirectoryId& dir : excluded_) {
      if (dir.device == st.st_dev && dir.inode == st.st_ino) return &dir;
    }
    return nullptr;
  }

  void Skip(const std::string& path, uint64_t line, std::string id, std::string reason) {
    if (block_skips_ != nullptr) {
      // Block reading: reported (and counted) by FinishBlock, in order.
      block_skips_->push_back(SkippedRecord{path, line, std::move(id), std::move(reason)});
      return;
    }
    ++records_skipped_;
    if (options_.on_skip) {
      options_.on_skip(SkippedRecord{path, line, std::move(id), std::move(reason)});
    }
  }

  std::vector<std::string> inputs_;
  InputOptions options_;
  size_t next_input_ = 0;
  std::vector<internal::DirectoryEntry> dir_entries_;
  size_t next_dir_entry_ = 0;
  std::unique_ptr<ByteStream> pending_stream_;
  std::string pending_name_;
  bool pending_jsonl_ = false;
  Source source_;
  std::unique_ptr<internal::JsonlRecordParser> parser_;
  Status error_;
  bool excluded_resolved_ = false;
  std::vector<internal::ExcludedDirectoryId> excluded_;
  uint64_t documents_with_invalid_utf8_ = 0;
  uint64_t documents_read_ = 0;
  uint64_t records_skipped_ = 0;
  internal::ExtractedDocuments extracted_;
  Status deferred_error_;  // met while files waited for extraction
  // Block reading: where Skip puts its reports while NextBlock runs.
  std::vector<SkippedRecord>* block_skips_ = nullptr;
  // Block reading: lines of the current JSONL source numbered so far (Number).
  uint64_t block_lines_ = 0;
};

DocumentReader::DocumentReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DocumentReader::~DocumentReader() = default;

Result<std::unique_ptr<DocumentReader>> DocumentReader::Open(std::vector<std::string> inputs,
                                                             InputOptions options) {
  if (inputs.empty()) return InvalidArgumentError("no inputs given (use \"-\" for stdin)");
  for (const std::string& input : inputs) {
    if (input == "-") continue;
    struct stat st;
    if (::stat(input.c_str(), &st) != 0) {
      int error = errno;
      if (error == ENOENT || error == ENOTDIR) {
        return NotFoundError("input not found: " + input);
      }
      return IoError(input + ": cannot examine input: " + std::strerror(error));
    }
  }
  auto impl = std::make_unique<Impl>(std::move(inputs), std::move(options));
  return std::unique_ptr<DocumentReader>(new DocumentReader(std::move(impl)));
}

std::unique_ptr<DocumentReader> DocumentReader::FromStream(std::unique_ptr<ByteStream> stream,
                                                           std::string source_name,
                                                           InputFormat format,
                                                           InputOptions options) {
  auto impl = std::make_unique<Impl>(std::vector<std::string>{}, std::move(options));
  impl->SetStream(std::move(stream), std::move(source_name), format);
  return std::unique_ptr<DocumentReader>(new DocumentReader(std::move(impl)));
}

Result<bool> DocumentReader::Next(Document* doc) { return impl_->Next(doc); }

namespace internal {

bool DocumentBlockReader::Next(DocumentReader& reader, size_t chunk_bytes, size_t max_documents,
                               size_t max_bytes, DocumentBlock* block) {
  return reader.impl_->NextBlock(chunk_bytes, max_documents, max_bytes, block);
}

void DocumentBlockReader::Number(DocumentReader& reader, DocumentBlock* block) {
  reader.impl_->NumberBlock(block);
}

Status DocumentBlockReader::Finish(DocumentReader& reader, const DocumentBlock& block) {
  return reader.impl_->FinishBlock(block);
}

const InputOptions& DocumentBlockReader::options(const DocumentReader& reader) {
  return reader.impl_->options();
}

}  // namespace internal

uint64_t DocumentReader::documents_read() const { return impl_->documents_read(); }
uint64_t DocumentReader::records_skipped() const { return impl_->records_skipped(); }
uint64_t DocumentReader::documents_with_invalid_utf8() const {
  return impl_->documents_with_invalid_utf8();
}
uint64_t DocumentReader::documents_extracted() const {
  return impl_->extracted().documents_extracted();
}
uint64_t DocumentReader::pages_without_text() const {
  return impl_->extracted().pages_without_text();
}
uint64_t DocumentReader::pages_read_by_ocr() const {
  return impl_->extracted().pages_read_by_ocr();
}

}  // namespace neardup
