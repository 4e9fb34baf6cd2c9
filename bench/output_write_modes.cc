// CPU and wall cost of writing one output file at offsets from several
// threads, the way PositionedOutput's file writer does (1 MiB ranges handed
// out in order to whichever thread is free), by pwrite(2) and through a
// MAP_SHARED writable mapping: the output side of few-dups `dedup -o FILE`
// (docs/PARALLELISM.md, session 14).
//
//   build/release/bench/output_write_modes FILE [THREADS] [MIB] [ROUNDS]
//
// FILE is created, written and removed each pass (put it on the file system
// dedup writes to). Defaults: 2 threads, 255 MiB, 6 rounds. Each pass first
// preallocates the file (fallocate KEEP_SIZE, as PositionedOutput::Reserve),
// then copies from an anonymous buffer, then fsyncs. Modes, run alternately:
//   pwrite    pwrite of each range (the product's way; on ext4 the copies
//             take the inode lock one at a time)
//   map       ftruncate, shared mapping, memcpy of each range (page faults
//             one page or folio at a time), munmap
//   map_pop   the same, each range populated first (MADV_POPULATE_WRITE,
//             Linux 5.14+; the mode is skipped where it is refused)
//   pwrite_wb pwrite, then writeback started on the range
//             (sync_file_range SYNC_FILE_RANGE_WRITE), as the product's
//             `-o FILE` temporary since session 10
//   sized_wb  the same into a file given its full size first (ftruncate,
//             as the temporary since session 15): no write extends the
//             file past a gap
//   sized_nofa sized_wb without the fallocate (delayed allocation: blocks
//             allocated by the writeback, no unwritten extents to convert)
// Printed per mode: mean and best CPU (user + sys, all threads) and wall of
// the copy, and of the copy with the fsync.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#include "process_clock.h"

namespace {

using neardup::bench::CpuSeconds;
using neardup::bench::WallSeconds;

constexpr size_t kChunk = size_t{1} << 20;

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

// Runs `copy(offset, length)` for every 1 MiB range of [0, size) on
// `threads` threads, ranges taken in order by whichever thread is free.
template <typename Copy>
void OnThreads(int threads, size_t size, const Copy& copy) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (;;) {
        const size_t offset = next.fetch_add(kChunk);
        if (offset >= size) return;
        copy(offset, std::min(kChunk, size - offset));
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
}

struct Pass {
  double copy_cpu = 0, copy_wall = 0, cpu = 0, wall = 0;
};

// The modes, in the order they are run and printed.
enum Mode : int { kPwrite, kMap, kMapPopulate, kPwriteWb, kSizedWb, kSizedNofa, kModes };

// One pass of `mode`. Returns false where map_pop is refused.
bool WriteOnce(const char* path, int mode, int threads, const char* source, size_t size,
               Pass* pass) {
  const bool preallocated = mode != kSizedNofa;
  const bool positioned = mode == kPwrite || mode == kPwriteWb || mode == kSizedWb ||
                          mode == kSizedNofa;  // pwrite, else a shared mapping
  const bool sized = mode == kSizedWb || mode == kSizedNofa;
  const bool writeback = mode != kPwrite;  // sync_file_range per range
  unlink(path);
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path);
  const double cpu0 = CpuSeconds();
  const double wall0 = WallSeconds();
  if (preallocated && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(size)) != 0) {
    Fail("fallocate");
  }
  bool refused = false;
  if (positioned) {
    if (sized && ftruncate(fd, static_cast<off_t>(size)) != 0) Fail("ftruncate");
    OnThreads(threads, size, [&](size_t offset, size_t length) {
      if (pwrite(fd, source + offset, length, static_cast<off_t>(offset)) !=
          static_cast<ssize_t>(length))
        Fail("pwrite");
      if (writeback) {
        (void)sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                              SYNC_FILE_RANGE_WRITE);
      }
    });
  } else {
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) Fail("ftruncate");
    void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) Fail("mmap");
    char* out = static_cast<char*>(mapped);
    std::atomic<bool> refused_flag{false};
    OnThreads(threads, size, [&](size_t offset, size_t length) {
      if (mode == kMapPopulate && madvise(out + offset, length, MADV_POPULATE_WRITE) != 0) {
        if (errno != EINVAL) Fail("madvise");
        refused_flag = true;
      }
      std::memcpy(out + offset, source + offset, length);
    });
    refused = refused_flag;
    if (munmap(mapped, size) != 0) Fail("munmap");
  }
  pass->copy_cpu = CpuSeconds() - cpu0;
  pass->copy_wall = WallSeconds() - wall0;
  if (fsync(fd) != 0) Fail("fsync");
  pass->cpu = CpuSeconds() - cpu0;
  pass->wall = WallSeconds() - wall0;
  close(fd);
  unlink(path);
  return !refused;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [THREADS] [MIB] [ROUNDS]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const long mib = argc > 3 ? std::atol(argv[3]) : 255;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 6;
  if (threads <= 0 || mib <= 0 || rounds <= 0) {
    std::fprintf(stderr, "THREADS, MIB and ROUNDS must be positive numbers\n");
    return 2;
  }
  const size_t size = static_cast<size_t>(mib) << 20;
  std::unique_ptr<char[]> source(new char[size]);
  for (size_t i = 0; i < size; ++i) source[i] = static_cast<char>(i * 131 + (i >> 12));
  const char* names[kModes] = {"pwrite", "map", "map_pop", "pwrite_wb", "sized_wb", "sized_nofa"};
  std::vector<Pass> total(kModes), best(kModes, Pass{1e9, 1e9, 1e9, 1e9});
  bool populate_refused = false;
  for (int round = 0; round < rounds; ++round) {
    for (int mode = 0; mode < kModes; ++mode) {
      if (mode == kMapPopulate && populate_refused) continue;
      Pass pass;
      if (!WriteOnce(argv[1], mode, threads, source.get(), size, &pass)) populate_refused = true;
      total[mode].copy_cpu += pass.copy_cpu;
      total[mode].copy_wall += pass.copy_wall;
      total[mode].cpu += pass.cpu;
      total[mode].wall += pass.wall;
      best[mode].copy_cpu = std::min(best[mode].copy_cpu, pass.copy_cpu);
      best[mode].copy_wall = std::min(best[mode].copy_wall, pass.copy_wall);
      best[mode].cpu = std::min(best[mode].cpu, pass.cpu);
      best[mode].wall = std::min(best[mode].wall, pass.wall);
    }
  }
  std::printf("%zu bytes, %d threads, %d rounds; ms (mean / best)\n", size, threads, rounds);
  std::printf("%-10s %17s %17s %17s %17s\n", "mode", "copy CPU", "copy wall", "+fsync CPU",
              "+fsync wall");
  for (int mode = 0; mode < kModes; ++mode) {
    if (mode == kMapPopulate && populate_refused) {
      std::printf("%-10s refused (MADV_POPULATE_WRITE needs Linux 5.14+)\n", names[mode]);
      continue;
    }
    const Pass& t = total[mode];
    const Pass& b = best[mode];
    std::printf("%-10s %8.1f /%7.1f %8.1f /%7.1f %8.1f /%7.1f %8.1f /%7.1f\n", names[mode],
                1e3 * t.copy_cpu / rounds, 1e3 * b.copy_cpu, 1e3 * t.copy_wall / rounds,
                1e3 * b.copy_wall, 1e3 * t.cpu / rounds, 1e3 * b.cpu, 1e3 * t.wall / rounds,
                1e3 * b.wall);
  }
  return 0;
}
