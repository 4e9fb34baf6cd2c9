// TryParseFlatRecord: the JSONL line most inputs are made of, one object
// whose values are all strings or numbers ({"id": "...", "text": "..."}),
// read in one pass over its bytes instead of simdjson's first stage, its
// walk and a separate look for backslashes in each string.
//
// It is a shortcut, never a second definition: it returns true only for a
// line that JsonlRecordParser's simdjson route would accept with the same
// record, byte for byte (the same views into the line, the same unescaped
// values in the arena), and false, leaving the arena as it found it, for
// everything it is not sure of: another value type (true, false, null, an
// object, an array), a key with an escape or a byte >= 0x80, invalid UTF-8
// (the simdjson route repairs it), an unescaped control character, an
// escape simdjson refuses, a missing text field, trailing content, any other
// syntax. jsonl_flat_record_test.cc compares both routes on random and
// hand-made lines.
//
// Why: on the 256 MB benchmark corpus simdjson's stage 1 and the walk were
// 8% of one thread of `neardup fingerprint`, the string ends and the
// backslash search another pass over each text (docs/BENCHMARKS.md,
// session 9). Here each string's end, its backslashes, control characters
// and bytes >= 0x80 come from one 64-byte compare per window (AVX-512BW; a
// byte loop elsewhere); only strings with bytes >= 0x80 are validated as
// UTF-8 (simdjson::validate_utf8) and only those with backslashes unescaped
// (io/json_unescape.h), on AVX-512 in the same pass as the scan (session
// 10: the separate unescaping pass had been 6-7% of one thread; session 21
// gave CPUs without VBMI2 the same one pass).
//
// Cost: O(line) with no allocation; the arena grows by the unescaped
// strings. Thread safety: pure function (the arena is the caller's).
#ifndef NEARDUP_IO_JSONL_FLAT_RECORD_H_
#define NEARDUP_IO_JSONL_FLAT_RECORD_H_

#include <string_view>

#include "io/jsonl_record_parser.h"
#include "io/text_arena.h"

namespace neardup::internal {

// See the header comment. On true, *record is what ParseRecord gives
// (fields in the line or appended to *arena). REQUIRES: kLinePaddingBytes
// (line_reader.h) readable bytes follow `line`.
bool TryParseFlatRecord(std::string_view line, std::string_view text_field,
                        std::string_view id_field, TextArena* arena, JsonlRecord* record);

// The same with the byte-loop string scanner, for differential tests.
bool TryParseFlatRecordPortable(std::string_view line, std::string_view text_field,
                                std::string_view id_field, TextArena* arena, JsonlRecord* record);
// The AVX-512BW route of CPUs without VBMI/VBMI2 (Skylake-SP, Cascade
// Lake), which TryParseFlatRecord takes there: each string's end found and
// its escapes decoded in the same 64-byte pass, the runs between escapes
// copied by vector loads and stores, each escape decoded alone (on CPUs
// with VBMI2 the escapes of a window are decoded at once). For
// differential tests; REQUIRES: JsonUnescapeAvx512BwSupported()
// (json_unescape.h), the check TryParseFlatRecord makes before taking it.
bool TryParseFlatRecordAvx512Bw(std::string_view line, std::string_view text_field,
                                std::string_view id_field, TextArena* arena, JsonlRecord* record);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_JSONL_FLAT_RECORD_H_
