// Concrete ByteStreams (the interface is in neardup/document_reader.h): a file
// descriptor, standard input, an in-memory string, and a few replayed bytes in
// front of another stream (what compression detection peeked at).
#ifndef NEARDUP_IO_BYTE_STREAM_H_
#define NEARDUP_IO_BYTE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::internal {

// Opens `path` for reading. NotFound when it does not exist, IoError with the
// system's reason otherwise. The stream's errors name `path`.
Result<std::unique_ptr<ByteStream>> OpenFileStream(const std::string& path);

// Standard input (file descriptor 0, never closed). Errors name "-" as stdin.
std::unique_ptr<ByteStream> OpenStdinStream();

// Serves the bytes of `data`.
std::unique_ptr<ByteStream> MakeStringStream(std::string data);

// Serves `prefix`, then the rest of `rest`.
std::unique_ptr<ByteStream> MakePrefixedStream(std::string prefix,
                                               std::unique_ptr<ByteStream> rest);

// Reads until `size` bytes or the end of the stream; returns the count.
Result<size_t> ReadFully(ByteStream* stream, char* buffer, size_t size);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_BYTE_STREAM_H_
