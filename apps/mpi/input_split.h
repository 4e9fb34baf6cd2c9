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
// A split piece is read through DocumentReader::FromStream with the file's
// own line numbers (InputOptions::first_line_number, from a prefix sum of
// the pieces' newline counts), so ids of records without one and skip
// reports are those of the whole file.
// Cost: one stat per input (a walk of each input directory) on rank 0; each
// rank reads its pieces twice (a newline count, then the parse).
#ifndef NEARDUP_APPS_MPI_INPUT_SPLIT_H_
#define NEARDUP_APPS_MPI_INPUT_SPLIT_H_

#include <cstdint>
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
  uint64_t first_line_number = 1;
};

// This rank's pieces, in input order. Collective (the newline prefix sums).
Result<std::vector<SharePiece>> PlanShare(Comm& comm, const std::vector<InputUnit>& units);

// A reader over one piece with the flags' options; skipped records go to
// `skips`.
Result<std::unique_ptr<DocumentReader>> OpenPiece(const SharePiece& piece,
                                                  const cli::InputFlags& flags,
                                                  cli::SkipReporter* skips, bool keep_raw_records);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_INPUT_SPLIT_H_
