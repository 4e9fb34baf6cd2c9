// Verification sketches for the candidate documents only: the second
// fingerprinting from the records' locations, and the near-duplicate search
// around it (neardup/deferred_sketches.h).
#include "neardup/deferred_sketches.h"

#include <sys/stat.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/batches_in_flight.h"
#include "engine/located_records.h"
#include "engine/near_duplicate_search.h"
#include "io/byte_stream.h"
#include "io/decompressing_stream.h"
#include "io/input_files.h"
#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"
#include "io/text_arena.h"
#include "neardup/near_duplicate_stages.h"

namespace neardup {
namespace {

// At most this many documents per slice, so that short records still make
// slices small enough to spread over the cores.
constexpr size_t kMaxSliceDocuments = 512;

// A slice of `documents` (positions [begin, end)), parsed and fingerprinted
// by one task (internal::NextRange cuts it).
struct Slice {
  size_t begin = 0;
  size_t end = 0;
  // Kept raw records are copied here, each followed by the padding the
  // parser reads past a line's end.
  std::string copies;
  std::vector<std::string_view> lines;
  internal::TextArena arena;
  std::vector<internal::JsonlRecord> records;
  std::vector<std::string_view> texts;
  std::vector<Fingerprint> fingerprints;
  Status status;
};

// True when `path` is read as an uncompressed JSONL file through a mapping:
// the reader's own tests (DocumentReader's StartSource), by the file's name
// or the format, its type and its first bytes.
bool IsMappedJsonl(const std::string& path, const InputOptions& input) {
  if (path == "-" || !input.map_files) return false;
  const bool jsonl = input.format == InputFormat::kJsonl ||
                     (input.format == InputFormat::kAuto && internal::IsJsonlName(path));
  if (!jsonl) return false;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0) {
    return false;
  }
  Result<std::unique_ptr<ByteStream>> raw = internal::OpenFileStream(path);
  if (!raw.ok()) return false;
  internal::Compression compression = internal::Compression::kNone;
  Result<std::unique_ptr<ByteStream>> stream =
      internal::OpenDecompressed(*std::move(raw), path, &compression);
  return stream.ok() && compression == internal::Compression::kNone && (*stream)->HasEnd();
}

// Moves the sketches `selection` names, and the counts, from `from` into
// *to, whose other sketches stay.
void MergeSelected(const SketchSelection& selection, Fingerprint&& from, Fingerprint* to) {
  if (selection.simhash) {
    to->simhash = from.simhash;
    to->simhash128 = from.simhash128;
    to->simhash_wide = from.simhash_wide;
    to->num_shingles = from.num_shingles;
  }
  if (selection.minhash) to->minhash = std::move(from.minhash);
  if (selection.kvalue_minhash) to->kvalue_minhash = std::move(from.kvalue_minhash);
  if (selection.chunks) to->chunks = std::move(from.chunks);
  to->num_tokens = from.num_tokens;
  to->invalid_utf8_sequences = from.invalid_utf8_sequences;
}

}  // namespace

SketchSelection VerificationSketches(const NearDuplicateOptions& options) {
  SketchSelection selection;
  if (options.method == NearDuplicateMethod::kSimHash) {
    selection.simhash = true;
  } else {
    selection.minhash = true;
    selection.chunks = options.verify_exact;
  }
  return selection;
}

SketchSelection CandidateSketches(const NearDuplicateOptions& options) {
  SketchSelection selection;
  if (options.method == NearDuplicateMethod::kSimHash) {
    selection.simhash = true;
  } else {
    selection.kvalue_minhash = true;
  }
  return selection;
}

bool CanDeferVerificationSketches(std::span<const std::string> inputs, const InputOptions& input,
                                  const NearDuplicateOptions& options) {
  if (options.method != NearDuplicateMethod::kMinHash || inputs.empty()) return false;
  return std::all_of(inputs.begin(), inputs.end(), [&](const std::string& path) {
    struct stat info {};
    if (path == "-" || ::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return IsMappedJsonl(path, input);
    }
    // A directory: every file the reader will read in it (entries with a
    // skip reason give no document).
    if (!input.excluded_directories.empty()) return false;
    Result<std::vector<internal::DirectoryEntry>> entries = internal::ListDirectory(path);
    return entries.ok() && std::all_of(entries->begin(), entries->end(),
                                       [&](const internal::DirectoryEntry& entry) {
                                         return !entry.skip_reason.empty() ||
                                                IsMappedJsonl(entry.path, input);
                                       });
  });
}

Status FingerprintLocatedRecords(const FingerprintedCorpus& corpus,
                                 std::span<const uint64_t> documents,
                                 const Fingerprinter& fingerprinter, const InputOptions& input,
                                 std::vector<Fingerprint>* fingerprints, size_t batch_bytes) {
  const size_t n = corpus.ids.size();
  const bool located = corpus.record_locations.size() == n;
  if (!located && corpus.raw_records.size() != n) {
    return FailedPreconditionError(
        "record locations are missing (an input was not a mapped JSONL file)");
  }
  if (fingerprints->size() != n) {
    return InvalidArgumentError("fingerprints (" + std::to_string(fingerprints->size()) +
                                ") must be one per document (" + std::to_string(n) + ")");
  }
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i] >= n || (i > 0 && documents[i] <= documents[i - 1])) {
      return InvalidArgumentError("documents must ascend and be below " + std::to_string(n));
    }
    if (!located && !corpus.is_jsonl[documents[i]]) {
      return FailedPreconditionError("document " + std::to_string(documents[i]) +
                                     " has no JSONL record to fingerprint again");
    }
  }
  if (documents.empty()) return Status::Ok();
  std::vector<std::shared_ptr<const internal::MappedInput>> files;
  if (located) {
    NEARDUP_ASSIGN_OR_RETURN(files, internal::MapRecordFiles(corpus));
  }
  auto record_size = [&](uint64_t doc) {
    return located ? corpus.record_locations[doc].size : corpus.raw_records[doc].size();
  };
  // Where document `doc` came from, for errors.
  auto source = [&](uint64_t doc) {
    return located ? corpus.record_files[corpus.record_locations[doc].file].path
                   : "document " + std::to_string(doc);
  };

  const SketchSelection& selection = fingerprinter.selection();
  tbb::enumerable_thread_specific<std::unique_ptr<internal::JsonlRecordParser>> parsers;
  const size_t slice_bytes = std::max<size_t>(1, batch_bytes);
  Status error;
  size_t next = 0;
  // Per file, where the pages already given back end.
  std::vector<uint64_t> released(files.size(), 0);
  FingerprintPipelineOptions pipeline;
  tbb::parallel_pipeline(
      internal::BatchesInFlight(pipeline),
      tbb::make_filter<void, Slice*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control&
                                                                                control) {
        return internal::NextRange<Slice>(control, &next, documents.size(), !error.ok(),
                                          slice_bytes, kMaxSliceDocuments,
                                          [&](size_t i) { return record_size(documents[i]); });
      }) & tbb::make_filter<Slice*, Slice*>(tbb::filter_mode::parallel, [&](Slice* slice) {
        std::unique_ptr<internal::JsonlRecordParser>& parser = parsers.local();
        if (parser == nullptr) {
          parser = std::make_unique<internal::JsonlRecordParser>(input.text_field, input.id_field);
        }
        const std::span<const uint64_t> docs =
            documents.subspan(slice->begin, slice->end - slice->begin);
        slice->lines.resize(docs.size());
        if (located) {
          for (size_t j = 0; j < docs.size(); ++j) {
            const RecordLocation& at = corpus.record_locations[docs[j]];
            const internal::MappedInput& file = *files[at.file];
            if (!internal::IsWholeLine(file, at.offset, at.size)) {
              slice->status = internal::RecordFileChanged(source(docs[j]));
              return slice;
            }
            // The mapping's zero page after the file pads the last
            // line as the parser requires.
            slice->lines[j] = std::string_view(file.data() + at.offset, at.size);
          }
        } else {
          size_t bytes = 0;
          for (uint64_t doc : docs) bytes += record_size(doc) + internal::kLinePaddingBytes;
          slice->copies.assign(bytes, '\0');
          size_t offset = 0;
          for (size_t j = 0; j < docs.size(); ++j) {
            const std::string& record = corpus.raw_records[docs[j]];
            std::copy(record.begin(), record.end(), slice->copies.begin() + offset);
            slice->lines[j] = std::string_view(slice->copies).substr(offset, record.size());
            offset += record.size() + internal::kLinePaddingBytes;
          }
        }
        slice->records.resize(docs.size());
        for (size_t j = 0; j < docs.size(); ++j) {
          const std::string_view line = slice->lines[j];
          internal::JsonlRecord& record = slice->records[j];
          if (!parser->ParseRecord(line, &slice->arena, &record).ok() ||
              (record.has_id &&
               internal::FieldView(line, slice->arena, record.id) != corpus.ids[docs[j]])) {
            slice->status = internal::RecordFileChanged(source(docs[j]));
            return slice;
          }
        }
        // Views only now: the arena may move while it grows.
        slice->texts.resize(docs.size());
        for (size_t j = 0; j < docs.size(); ++j) {
          slice->texts[j] =
              internal::FieldView(slice->lines[j], slice->arena, slice->records[j].text);
        }
        slice->status = fingerprinter.ComputeBatch(slice->texts, &slice->fingerprints);
        if (!slice->status.ok()) return slice;
        for (size_t j = 0; j < docs.size(); ++j) {
          MergeSelected(selection, std::move(slice->fingerprints[j]), &(*fingerprints)[docs[j]]);
        }
        return slice;
      }) & tbb::make_filter<Slice*, void>(tbb::filter_mode::serial_in_order, [&](Slice* raw) {
        std::unique_ptr<Slice> slice(raw);
        if (!error.ok()) return;
        // A file that shrank under the parse gave zeros for its lost bytes
        // (a record that looks changed): the shrink is the error.
        if (located) {
          Status read = internal::CheckRecordsRead(corpus, files, slice->begin, slice->end,
                                                   [&](size_t i) { return documents[i]; });
          if (!read.ok()) slice->status = read;
        }
        if (!slice->status.ok()) {
          error = slice->status;
          return;
        }
        if (!located) return;
        // Records ascend within a file: the pages before this slice's
        // last record are not read again.
        internal::ReleaseThrough(files, corpus.record_locations[documents[slice->end - 1]],
                                 &released);
      }));
  if (error.ok() && located) error = internal::CheckRecordFilesUnchanged(files);
  return error;
}

Result<std::vector<SimilarPair>> FindNearDuplicatePairsDeferred(
    FingerprintedCorpus* corpus, const Fingerprinter& verifier, const InputOptions& input,
    const Recipe& recipe, const NearDuplicateOptions& options, NearDuplicateReport* report) {
  if (options.method != NearDuplicateMethod::kMinHash) {
    return InvalidArgumentError("only MinHash verification sketches can be deferred");
  }
  std::vector<Fingerprint>& fingerprints = corpus->fingerprints;
  return internal::SearchNearDuplicates(
      fingerprints, recipe, options, report,
      [&](std::span<const CandidatePair> candidates, NearDuplicateReport* stage_report) {
        // The documents of a candidate pair (both sides have features: the
        // candidate stage lists no other), in order.
        std::vector<uint8_t> needed(fingerprints.size(), 0);
        for (const CandidatePair& pair : candidates) {
          needed[pair.a] = 1;
          needed[pair.b] = 1;
        }
        std::vector<uint64_t> documents;
        for (uint64_t doc = 0; doc < needed.size(); ++doc) {
          if (needed[doc] != 0) documents.push_back(doc);
        }
        stage_report->sketched_documents = documents.size();
        return FingerprintLocatedRecords(*corpus, documents, verifier, input, &fingerprints);
      },
      corpus->band_keys, corpus->band_key_params, corpus->band_key_num_hashes,
      corpus->band_key_choice);
}

}  // namespace neardup
