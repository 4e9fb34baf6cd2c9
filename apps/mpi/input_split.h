// How neardup-mpi spreads the inputs over ranks so that every rank reads
// only its share and the documents keep their single-process order.
//
// The inputs, in the order given, are laid end to end on one line of bytes
// (a file by its size; a directory by the sizes of the files below it; a
// compressed file by its compressed size) and the line is cut into
// `size` equal intervals, one per rank. An uncompressed JSONL file (by name,
// or any regular file under --format jsonl) is split by byte range at line
// boundaries: a line belongs to the rank whose interval holds its first
// byte. Any other input is read whole by the rank whose interval holds its
// first byte. Standard input ("-") can only be read by rank 0, which then
// reads every input. So the ranks' shares, concatenated in rank order, are
// exactly the single-process reader's documents, and a document's global
// number is its position there (the sum of the counts of the ranks before).
//
// A split piece is read through DocumentReader::FromStream; ids of records
// without one ("<file>:<line>") and skip reports give the whole file's line
// numbers, which need the newlines of the pieces before it (on earlier
// ranks). Every rank reads its pieces at once, numbering a piece that
// starts inside its file from a stand-in line; the newlines are counted by
// the stream as it reads; PieceLineNumbers then sums them over the ranks
// and names the documents again (InputOptions::on_line_id; or the caller
// does, from a callback: neardup-mpi fingerprint, line_id_patch.h) and
// reports the skipped records, which it held back, with the file's lines.
// Only a rank's first piece can start inside a file (its later ones start
// at their inputs' beginning), and no rank waits for another to read.
// Cost: one stat per input (a walk of each input directory) on rank 0.
#ifndef NEARDUP_APPS_MPI_INPUT_SPLIT_H_
#define NEARDUP_APPS_MPI_INPUT_SPLIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common_options.h"
#include "mpi_comm.h"
#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::mpi {

// One input as rank 0 saw it.
struct InputUnit {
  std::string path;
  uint64_t bytes = 0;
  bool splittable = false;  // an uncompressed regular JSONL file
};

// The byte intervals of the ranks over the inputs: collective (rank 0
// examines the inputs and broadcasts what it found). NotFound / IoError as
// DocumentReader::Open for a missing input.
Result<std::vector<InputUnit>> ExamineInputs(Comm& comm, const cli::InputFlags& flags);

// A part of this rank's share: whole inputs, or one byte range of a split
// file.
struct SharePiece {
  std::vector<std::string> whole_inputs;  // read with DocumentReader::Open
  std::string split_path;                 // else this file's [begin, end)
  uint64_t begin = 0;
  uint64_t end = 0;
  // The line of `begin` in the file: 1 for a piece at the file's start,
  // else 0 (unknown) for good: such a piece is read only through PieceLineNumbers (OpenPiece
  // refuses it without one), which numbers it from a stand-in line and
  // names its lines after the read (Finish leaves this field as it is).
  uint64_t first_line_number = 1;
  // Split pieces: the input's index among the units, and whether a later rank's piece of
  // it needs this piece's newline count (the piece ends before the file
  // does).
  size_t unit = 0;
  bool count_newlines = false;

  // A split piece that starts inside its file (its first line unknown: a
  // stand-in line numbers it, PieceLineNumbers).
  bool StartsInsideFile() const { return !split_path.empty() && first_line_number == 0; }
};

// This rank's pieces, in input order. Collective (the ranks agree on the
// status).
Result<std::vector<SharePiece>> PlanShare(Comm& comm, const std::vector<InputUnit>& units);

// The file's line numbers of the pieces: pass it to
// OpenPiece for each of this rank's pieces, then call Finish on every rank
// (also after a failed read, before the ranks agree on it).
class PieceLineNumbers {
 public:
  // `units`: ExamineInputs' count; `skips` gets the skipped records.
  PieceLineNumbers(const std::vector<SharePiece>& pieces, size_t units, cli::SkipReporter* skips);
  PieceLineNumbers(const PieceLineNumbers&) = delete;
  PieceLineNumbers& operator=(const PieceLineNumbers&) = delete;

  // Collective: sums the pieces' newlines over the ranks, names the
  // documents whose ids are lines again in `ids` (the caller's documents,
  // numbered as OpenPiece's first_document counts them) and reports the
  // skipped records held back, in reading order, with the file's lines.
  // `read_failed`: this rank's read ended in an error (its counts are of a
  // partial read); the ranks after it then report their held skips of
  // pieces that start inside a file without a line (a line counted from a
  // partial read would be wrong).
  void Finish(Comm& comm, std::vector<std::string>* ids, bool read_failed);
  // The same, for a caller that keeps no ids (neardup-mpi fingerprint,
  // which formats each id into its line as it reads): `rename(document,
  // line)` is called for each document whose id is "<file>:<stand-in
  // line>", in document order, with the file's line.
  void Finish(Comm& comm, const std::function<void(uint64_t document, uint64_t line)>& rename,
              bool read_failed);

  // For OpenPiece: sets `options` to read `piece` (its documents the
  // caller's from `first_document` on); returns where its stream counts
  // the piece's newlines, or null when no rank needs them.
  uint64_t* Prepare(const SharePiece& piece, uint64_t first_document, InputOptions* options);

 private:
  static constexpr size_t kNoUnit = SIZE_MAX;
  struct Held {
    SkippedRecord record;
    size_t unit;  // the line is counted from this unit's stand-in, or kNoUnit
  };
  struct LineId {
    uint64_t document;
    uint64_t line;
    size_t unit;
  };
  cli::SkipReporter* skips_;
  bool hold_skips_;                 // a piece starts inside its file: every skip waits
  std::vector<uint64_t> newlines_;  // per unit, of this rank's piece
  std::vector<Held> held_;          // the skips the reporter will print, in order
  uint64_t not_held_ = 0;           // the skips after those: counted only
  std::vector<LineId> line_ids_;
};

// A reader over one piece with the flags' options; skipped records go to
// `skips` (through `lines` when given; the piece's documents are the
// caller's from `first_document` on). InvalidArgument for a split piece
// whose first line is unknown (it starts inside its file) without `lines`.
Result<std::unique_ptr<DocumentReader>> OpenPiece(const SharePiece& piece,
                                                  const cli::InputFlags& flags,
                                                  cli::SkipReporter* skips, bool keep_raw_records,
                                                  PieceLineNumbers* lines = nullptr,
                                                  uint64_t first_document = 0);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_INPUT_SPLIT_H_
