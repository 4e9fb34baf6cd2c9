// CPU cost of the ways to bring a page-cache file into memory for the JSONL
// chunker, with the first read of the bytes (memchr for line ends, as
// ParseJsonlBlock does) and nothing else: the input side of a one-thread
// `neardup fingerprint` (docs/FINGERPRINT_SPEED.md, session 13).
//
//   build/release/bench/input_read_modes FILE [ROUNDS]
//
// Modes, 1 MiB chunks, run alternately ROUNDS times (default 8), the mean
// and best CPU time (user + sys) of each printed:
//   map       read-only private mapping, MADV_SEQUENTIAL, pages faulted in by
//             the reads, each chunk's pages dropped (MADV_DONTNEED) after it
//             (what MappedInput and the pipeline do)
//   populate  the same, each chunk populated first (MADV_POPULATE_READ)
//   map_pop   the same, the whole file mapped with MAP_POPULATE
//   pread     pread(2) of each chunk into one reused buffer
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#include "process_clock.h"

namespace {

using neardup::bench::CpuSeconds;

constexpr size_t kChunk = size_t{1} << 20;

size_t CountLines(const char* begin, const char* end) {
  size_t lines = 0;
  while (begin < end) {
    const void* newline = std::memchr(begin, '\n', static_cast<size_t>(end - begin));
    if (newline == nullptr) break;
    begin = static_cast<const char*>(newline) + 1;
    ++lines;
  }
  return lines;
}

size_t ReadMapped(int fd, size_t size, bool populate_chunks, bool populate_all) {
  void* mapped =
      mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate_all ? MAP_POPULATE : 0), fd, 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  char* data = static_cast<char*>(mapped);
  madvise(data, size, MADV_SEQUENTIAL);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t lines = 0;
  for (size_t offset = 0; offset < size; offset += kChunk) {
    const size_t length = std::min(kChunk, size - offset);
    if (populate_chunks)
      madvise(data + offset, (length + page - 1) / page * page, MADV_POPULATE_READ);
    lines += CountLines(data + offset, data + offset + length);
    if (offset >= kChunk) madvise(data + offset - kChunk, kChunk, MADV_DONTNEED);
  }
  munmap(data, size);
  return lines;
}

size_t ReadChunks(int fd, size_t size) {
  std::unique_ptr<char[]> buffer(new char[kChunk + 64]);
  size_t lines = 0;
  for (size_t offset = 0; offset < size; offset += kChunk) {
    const ssize_t n = pread(fd, buffer.get(), kChunk, static_cast<off_t>(offset));
    if (n <= 0) break;
    lines += CountLines(buffer.get(), buffer.get() + n);
  }
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [ROUNDS]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  if (rounds <= 0) {
    std::fprintf(stderr, "ROUNDS must be a positive number, not %s\n", argv[2]);
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  if (st.st_size == 0) {
    std::fprintf(stderr, "%s: empty file\n", argv[1]);
    close(fd);
    return 1;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const char* names[] = {"map", "populate", "map_pop", "pread"};
  std::vector<double> total(4, 0), best(4, 1e9);
  size_t lines = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int mode = 0; mode < 4; ++mode) {
      const double start = CpuSeconds();
      lines = mode == 3 ? ReadChunks(fd, size) : ReadMapped(fd, size, mode == 1, mode == 2);
      const double cpu = CpuSeconds() - start;
      total[mode] += cpu;
      best[mode] = std::min(best[mode], cpu);
    }
  }
  std::printf("%zu bytes, %zu lines, %d rounds; CPU ms per pass (mean, best)\n", size, lines,
              rounds);
  for (int mode = 0; mode < 4; ++mode) {
    std::printf("%-9s %7.1f %7.1f\n", names[mode], 1e3 * total[mode] / rounds, 1e3 * best[mode]);
  }
  close(fd);
  return 0;
}
