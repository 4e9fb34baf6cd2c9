// Formatting output lines on all cores and writing them in order: the
// result is byte-identical whatever the thread count.
//
// Items [0, n) go in chunks of `chunk_items`; a oneTBB pipeline formats up to
// two chunks per thread at once (format(begin, end, &text) appends the lines
// of items [begin, end) to text) and writes the chunks' texts one after
// another in item order. Memory: about 2 * threads chunks of text.
// Thread safety: `format` is called concurrently on disjoint ranges.
#ifndef NEARDUP_APPS_CLI_ORDERED_WRITER_H_
#define NEARDUP_APPS_CLI_ORDERED_WRITER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "neardup/stage_time.h"
#include "neardup/status.h"
#include "output.h"

namespace neardup::cli {

// The first write error, after which nothing more is written.
// `serial_time`, when given, sums the CPU time of the in-order steps (cutting
// chunks, writing them): --profile's serial figure.
Status WriteInOrder(size_t n, size_t chunk_items,
                    const std::function<void(size_t begin, size_t end, std::string* text)>& format,
                    OutputFile* out, SerialCpuTime* serial_time = nullptr);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_ORDERED_WRITER_H_
