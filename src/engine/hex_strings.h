// Hex strings of 64-bit values for the fingerprint JSON line
// (engine/fingerprint_json.h): 16 lowercase digits, most significant first,
// as neardup::AppendHex64 writes them, and the JSON array
// ["<16 hex>","<16 hex>",...] of a MinHash sketch.
//
// Why a file of its own: with 128 values per document, the digit-per-loop
// writer (one string append per value) was the largest single cost of
// `neardup fingerprint --minhash` (14% of one thread; docs/BENCHMARKS.md,
// session 8). The portable path spreads each nibble into a byte of its own
// (SWAR, about 30 instructions per value); the AVX2 path (also AVX-512
// without VBMI) four values per step, about 4 instructions and two stores
// per value; the AVX-512 path (VBMI) turns
// eight values into 128 digits with two byte permutes and a table shuffle,
// and lays them out with their `","` separators by three more permutes and
// a blend: three 64-byte stores per eight values (152 bytes).
// Cost: as above; no allocation beyond growing `out` once per array.
// Thread safety: pure functions.
#ifndef NEARDUP_ENGINE_HEX_STRINGS_H_
#define NEARDUP_ENGINE_HEX_STRINGS_H_

#include <cstdint>
#include <span>
#include <string>

namespace neardup::internal {

// The 16 digits of `value` at out[0, 16).
void WriteHex64Digits(char* out, uint64_t value);

// Appends ["v0","v1",...] (no spaces) to *out. The AVX-512 path runs when
// the CPU path (hash/cpu_path.h, NEARDUP_CPU_PATH) is avx512 and the CPU has
// VBMI, the AVX2 one on the other avx2 and avx512 paths.
void AppendHexStringArray(std::string* out, std::span<const uint64_t> values);

// The three implementations, for differential tests.
void AppendHexStringArrayPortable(std::string* out, std::span<const uint64_t> values);
// REQUIRES: HexStringsAvx512Supported().
void AppendHexStringArrayAvx512(std::string* out, std::span<const uint64_t> values);
// REQUIRES: CpuSupports(CpuPath::kAvx2) (hash/cpu_path.h).
void AppendHexStringArrayAvx2(std::string* out, std::span<const uint64_t> values);
bool HexStringsAvx512Supported();

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_HEX_STRINGS_H_
