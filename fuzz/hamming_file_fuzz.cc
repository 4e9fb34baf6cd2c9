// Fuzz target: arbitrary bytes -> a HammingIndex file -> HammingIndex::Open.
// Each input is tried as given, with its header checksum recomputed, and with
// both checksums recomputed (so that mutated bodies reach the structural
// checks of verify_data and, without it, the queries), each opened with
// verify_data off and on. An input that opens is queried: FindAll, FindFirst,
// their bulk forms, SelfJoin and Clusters. Checks: a failed open is DataLoss;
// every reported distance is the true distance and at most max_distance; the
// bulk answers equal the single ones; FindFirst is FindAll's first match.
// Never crashes or reads out of bounds (run under ASan+UBSan in CI).
#include <unistd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "index/hamming_state.h"
#include "neardup/check.h"
#include "neardup/hamming_index.h"

namespace {

using neardup::HammingIndex;
using neardup::HammingMatch;

// A file per process, rewritten for every input: in /dev/shm where there is
// one (tmpfs; a disk-backed /tmp makes the run ~30x slower), unless TMPDIR
// says otherwise.
const std::string& TempPath() {
  static const std::string path = [] {
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    if (std::getenv("TMPDIR") == nullptr && std::filesystem::is_directory("/dev/shm") &&
        ::access("/dev/shm", W_OK) == 0) {
      dir = "/dev/shm";
    }
    return (dir / ("neardup_hamming_file_fuzz_" + std::to_string(::getpid()) + ".ndh")).string();
  }();
  return path;
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  NEARDUP_CHECK(f != nullptr) << "cannot write " << path;
  if (!bytes.empty()) NEARDUP_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  NEARDUP_CHECK(std::fclose(f) == 0);
}

void CheckMatch(const HammingMatch& m, uint64_t query, int max_distance) {
  NEARDUP_CHECK(m.distance == std::popcount(m.fingerprint ^ query)) << "wrong distance";
  NEARDUP_CHECK(m.distance <= max_distance) << "distance past max_distance";
}

void Exercise(const HammingIndex& index, const std::vector<uint8_t>& bytes) {
  const int k = index.options().max_distance;
  // Queries: fixed extremes and words of the input (often stored
  // fingerprints, or near them, so that matches are found).
  std::vector<uint64_t> queries = {0, ~uint64_t{0}, 0x5555555555555555ULL};
  for (size_t at = neardup::internal::kHammingHeaderBytes;
       at + 8 <= bytes.size() && queries.size() < 12; at += 8 * (1 + queries.size())) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + at, 8);
    queries.push_back(word);
    queries.push_back(word ^ 1);
  }
  const neardup::HammingMatchesBulk bulk = index.FindAllBulk(queries);
  const auto firsts = index.FindFirstBulk(queries);
  NEARDUP_CHECK(bulk.offsets.size() == queries.size() + 1 && firsts.size() == queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    const std::vector<HammingMatch> all = index.FindAll(queries[i]);
    for (const HammingMatch& m : all) CheckMatch(m, queries[i], k);
    const auto from_bulk = bulk.For(i);
    NEARDUP_CHECK(std::equal(all.begin(), all.end(), from_bulk.begin(), from_bulk.end()))
        << "FindAllBulk differs from FindAll";
    const auto first = index.FindFirst(queries[i]);
    NEARDUP_CHECK(first.has_value() == !all.empty() && firsts[i] == first);
    if (first) NEARDUP_CHECK(*first == all.front());
  }
  for (const neardup::HammingPair& pair : index.SelfJoin()) {
    NEARDUP_CHECK(pair.distance == std::popcount(pair.a.fingerprint ^ pair.b.fingerprint) &&
                  pair.distance <= k)
        << "wrong self-join distance";
  }
  const neardup::HammingClusters clusters = index.Clusters();
  NEARDUP_CHECK(clusters.offsets.back() == clusters.members.size());
}

void Try(const std::vector<uint8_t>& bytes) {
  WriteFile(TempPath(), bytes);
  for (bool verify : {false, true}) {
    auto opened = HammingIndex::Open(TempPath(), {.verify_data = verify});
    if (!opened.ok()) {
      // Damage is DataLoss; a header that names a newer format version is
      // FailedPrecondition, as for every other file of the project.
      const neardup::StatusCode code = opened.status().code();
      NEARDUP_CHECK(code == neardup::StatusCode::kDataLoss ||
                    (code == neardup::StatusCode::kFailedPrecondition &&
                     opened.status().message().find("newer than this build") != std::string::npos))
          << "unexpected error: " << opened.status().message();
      continue;
    }
    Exercise(*opened, bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  Try(bytes);
  if (size >= neardup::internal::kHammingHeaderBytes) {
    neardup::internal::ResealHammingFile(bytes, /*data_too=*/false);
    Try(bytes);
    neardup::internal::ResealHammingFile(bytes, /*data_too=*/true);
    Try(bytes);
  }
  std::filesystem::remove(TempPath());
  return 0;
}
