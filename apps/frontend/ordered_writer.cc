#include "ordered_writer.h"

#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "neardup/effective_threads.h"

namespace neardup::cli {

Status WriteInOrder(size_t n, size_t chunk_items,
                    const std::function<void(size_t begin, size_t end, std::string* text)>& format,
                    OutputFile* out, SerialCpuTime* serial_time) {
  chunk_items = std::max<size_t>(chunk_items, 1);
  // The library's own figure: a caller's task arena lowers it too.
  const size_t threads = EffectiveThreads();
  struct Chunk {
    size_t begin = 0;
    size_t end = 0;
    std::string text;
  };
  Status status;                     // written by the write filter only
  std::atomic<bool> failed = false;  // read by the input filter too
  size_t next = 0;
  tbb::parallel_pipeline(
      std::max<size_t>(2 * threads, 2),
      tbb::make_filter<void, std::shared_ptr<Chunk>>(
          tbb::filter_mode::serial_in_order,
          [&](tbb::flow_control& control) -> std::shared_ptr<Chunk> {
            SerialCpuTime::Scope timed(serial_time);
            // A failed write stops the input; chunks already taken are
            // formatted but not written.
            if (next >= n || failed.load(std::memory_order_relaxed)) {
              control.stop();
              return nullptr;
            }
            auto chunk = std::make_shared<Chunk>();
            chunk->begin = next;
            chunk->end = std::min(n, next + chunk_items);
            next = chunk->end;
            return chunk;
          }) &
          tbb::make_filter<std::shared_ptr<Chunk>, std::shared_ptr<Chunk>>(
              tbb::filter_mode::parallel,
              [&](std::shared_ptr<Chunk> chunk) {
                format(chunk->begin, chunk->end, &chunk->text);
                return chunk;
              }) &
          tbb::make_filter<std::shared_ptr<Chunk>, void>(
              tbb::filter_mode::serial_in_order, [&](const std::shared_ptr<Chunk>& chunk) {
                SerialCpuTime::Scope timed(serial_time);
                if (!status.ok()) return;
                status = out->Write(chunk->text);
                if (!status.ok()) failed.store(true, std::memory_order_relaxed);
              }));
  return status;
}

}  // namespace neardup::cli
