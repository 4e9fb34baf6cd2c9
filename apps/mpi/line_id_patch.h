// `neardup-mpi fingerprint` formats each document's line, id included, as
// it reads its share (so no rank waits for the newlines of the pieces
// before it: input_split.h). A record without an id gets
// "<file>:<line>" with a stand-in line in a piece that starts inside its
// file; after the read, PieceLineNumbers::Finish knows the file's line, and
// RenumberLineIds puts it into the formatted text (in place when the
// string's capacity holds the growth).
// Thread safety: a pure function of its arguments.
#ifndef NEARDUP_APPS_MPI_LINE_ID_PATCH_H_
#define NEARDUP_APPS_MPI_LINE_ID_PATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "neardup/status.h"

namespace neardup::mpi {

// One line to renumber: where it starts in the text, and the file's line
// its id names.
struct LineIdRename {
  uint64_t start = 0;
  uint64_t line = 0;
};

// Replaces, in each line of `text` starting at renames[i].start (ascending),
// the digits that end its id (`{"id":"<file>:<digits>"`, the first key of a
// fingerprint line) with renames[i].line. The text grows by the digits
// added (a file's line is never below its stand-in, but a shorter number
// works too): in place, one pass from the back, when text->capacity()
// holds the growth; else (or with a shorter number) one forward copy into
// an exact reservation (twice the text at the peak, never the ~3x of a
// reallocating resize). InternalError, with `text` unchanged, when a start
// is not such a line or the starts are not ascending.
Status RenumberLineIds(std::string* text, const std::vector<LineIdRename>& renames);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_LINE_ID_PATCH_H_
