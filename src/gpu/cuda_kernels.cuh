// The kernels of the GPU fingerprint path (gpu/cuda_pipeline.h gives the
// stages; cuda_pipeline.cu launches them). Included by cuda_pipeline.cu only.
//
// Index spaces: byte positions of the batch; normalised positions; token
// starts (all tokens, in text order); kept tokens (after the stopword
// filter, in text order, so each document's are contiguous:
// [token_offsets[d], token_offsets[d + 1])). Features of every shingle width
// live in the kept-token space too: document d's features are the windows
// starting at its first f_d kept tokens, so its segment is
// [token_offsets[d], feature_ends[d]) and no feature array needs compacting
// or a search for its document.
#ifndef NEARDUP_GPU_CUDA_KERNELS_CUH_
#define NEARDUP_GPU_CUDA_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/gpu_bottomk.h"
#include "gpu/gpu_hash.h"
#include "gpu/gpu_tables.h"
#include "gpu/gpu_token.h"

namespace neardup::internal::gpu {

constexpr int kThreads = 256;

// The recipe's tables, passed by value as a kernel argument (under 600
// bytes), so two pipelines of different recipes never share state.
struct DeviceTables {
  uint8_t byte_class[128];
  uint8_t mapped[128];
  uint8_t secret[kXxh3SecretSize];
  FeatureHashKind hash;
  uint64_t seed;
  Xxh3ShortKeys short_keys;  // MakeXxh3ShortKeys(secret, seed)
};

__device__ __forceinline__ uint32_t GlobalThread() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint32_t GridThreads() { return gridDim.x * blockDim.x; }

// The first index of sorted[0, count) whose value is >= value.
__device__ __forceinline__ uint32_t LowerBound(const uint32_t* sorted, uint32_t count,
                                               uint32_t value) {
  uint32_t lo = 0;
  uint32_t hi = count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (sorted[mid] < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The kept bytes of 16-byte chunk v of the text (0 for v past the end), for
// the scan that places each chunk's first kept byte.
struct KeptInChunk {
  const uint8_t* text;
  uint32_t n;
  const uint8_t* byte_class;  // device memory
  __device__ uint32_t operator()(uint32_t v) const {
    uint32_t kept = 0;
    const uint32_t base = v * 16;
    for (uint32_t i = base; i < base + 16 && i < n; ++i)
      kept += byte_class[text[i] & 0x7f] & kByteKept;
    return kept;
  }
};

// The tables are __grid_constant__: read in place from the parameter space,
// never copied per thread (taking the address of an ordinary parameter, as
// the hash does with the secret, makes a per-thread local copy).
//
// Sixteen bytes per thread: one 16-byte load, two 16-byte stores (the byte
// tables in shared memory) where no byte is deleted; with deletions,
// chunk_positions[v] is where chunk v's first kept byte goes, and the rest
// follow it.
__global__ void NormalizeKernel(const uint8_t* text, uint32_t n, const uint32_t* chunk_positions,
                                const __grid_constant__ DeviceTables tables, uint8_t* normalized,
                                uint8_t* attrs) {
  __shared__ uint8_t byte_class[128];
  __shared__ uint8_t mapped[128];
  if (threadIdx.x < 128) {
    byte_class[threadIdx.x] = tables.byte_class[threadIdx.x];
    mapped[threadIdx.x] = tables.mapped[threadIdx.x];
  }
  __syncthreads();
  const uint32_t num_vectors = (n + 15) / 16;
  for (uint32_t v = GlobalThread(); v < num_vectors; v += GridThreads()) {
    const uint32_t base = v * 16;
    if (chunk_positions == nullptr && base + 16 <= n) {
      // REQUIRES: text, normalized and attrs 16-byte aligned (cudaMalloc).
      const uint4 in = *reinterpret_cast<const uint4*>(text + base);
      uint4 out;
      uint4 attr;
      const uint32_t* in_words = &in.x;
      uint32_t* out_words = &out.x;
      uint32_t* attr_words = &attr.x;
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        uint32_t o = 0;
        uint32_t a = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const uint32_t c = (in_words[w] >> (8 * b)) & 0x7f;
          o |= static_cast<uint32_t>(mapped[c]) << (8 * b);
          a |= static_cast<uint32_t>((byte_class[c] & kByteToken) ? kAttrToken : 0) << (8 * b);
        }
        out_words[w] = o;
        attr_words[w] = a;
      }
      *reinterpret_cast<uint4*>(normalized + base) = out;
      *reinterpret_cast<uint4*>(attrs + base) = attr;
      continue;
    }
    const uint32_t end = base + 16 < n ? base + 16 : n;
    uint32_t p = chunk_positions != nullptr ? chunk_positions[v] : base;
    for (uint32_t i = base; i < end; ++i) {
      const uint8_t c = text[i] & 0x7f;
      const uint8_t cls = byte_class[c];
      if ((cls & kByteKept) == 0) continue;
      normalized[p] = mapped[c];
      attrs[p] = (cls & kByteToken) ? kAttrToken : 0;
      ++p;
    }
  }
}

// flags[d] = 1 when document d holds a byte >= 0x80: the byte tables cover
// ASCII only, so its fingerprint is left to the CPU (the other kernels read
// such bytes as `& 0x7f`, safely, and their results for it are dropped).
// Testing here rather than on the host saves the host a pass over the input.
// One thread per 16-byte chunk; a chunk with such a byte finds its document
// by binary search (rare outside non-ASCII text). REQUIRES: flags zeroed,
// text 16-byte aligned.
__global__ void NonAsciiKernel(const uint8_t* text, uint32_t n, const uint32_t* offsets,
                               uint32_t num_docs, uint8_t* flags) {
  const uint32_t num_vectors = (n + 15) / 16;
  for (uint32_t v = GlobalThread(); v < num_vectors; v += GridThreads()) {
    const uint32_t base = v * 16;
    const uint32_t end = base + 16 < n ? base + 16 : n;
    if (end == base + 16) {
      const uint4 in = *reinterpret_cast<const uint4*>(text + base);
      if (((in.x | in.y | in.z | in.w) & 0x80808080u) == 0) continue;
    }
    uint32_t d = num_docs;  // none yet
    for (uint32_t i = base; i < end; ++i) {
      if ((text[i] & 0x80) == 0) continue;
      // The document holding byte i: the last d with offsets[d] <= i.
      if (d == num_docs || i >= offsets[d + 1]) d = LowerBound(offsets, num_docs + 1, i + 1) - 1;
      flags[d] = 1;
    }
  }
}

// Normalised document offsets, and the doc-start mark of each document's
// first normalised position (so tokens never run across documents).
__global__ void DocOffsetsKernel(const uint32_t* offsets, uint32_t num_docs, uint32_t n,
                                 const uint8_t* text, const uint8_t* byte_class,
                                 const uint32_t* chunk_positions, uint32_t normalized_size,
                                 uint32_t* norm_offsets, uint8_t* attrs) {
  for (uint32_t d = GlobalThread(); d <= num_docs; d += GridThreads()) {
    const uint32_t o = offsets[d];
    uint32_t p = o;
    if (chunk_positions != nullptr) {
      if (o < n) {
        p = chunk_positions[o / 16];
        for (uint32_t i = o & ~15u; i < o; ++i) p += byte_class[text[i] & 0x7f] & kByteKept;
      } else {
        p = normalized_size;
      }
    }
    norm_offsets[d] = p;
    // Empty documents mark their successor's start: the same byte, value.
    if (d < num_docs && p < normalized_size) attrs[p] |= kAttrDocStart;
  }
}

struct TokenStartPredicate {
  const uint8_t* attrs;
  __device__ bool operator()(uint32_t p) const {
    const uint8_t a = attrs[p];
    if ((a & kAttrToken) == 0) return false;
    return p == 0 || (a & kAttrDocStart) != 0 || (attrs[p - 1] & kAttrToken) == 0;
  }
};

// One thread per token: its end, the stopword test and, for a short token
// (gpu/gpu_token.h), the feature hash; a long one is appended to
// long_tokens for LongTokenKernel. REQUIRES: normalized and attrs readable
// kTokenPadding bytes past normalized_size; *num_long zeroed.
__global__ void TokenKernel(const uint32_t* starts, uint32_t num_tokens, const uint8_t* normalized,
                            const uint8_t* attrs, uint32_t normalized_size,
                            const __grid_constant__ DeviceTables tables, const uint8_t* stop_bytes,
                            const uint32_t* stop_offsets, uint32_t num_stopwords, uint64_t* hashes,
                            uint8_t* keep, uint32_t* long_tokens, uint32_t* num_long) {
  for (uint32_t t = GlobalThread(); t < num_tokens; t += GridThreads()) {
    const uint32_t s = starts[t];
    const uint32_t len = TokenEndHd(attrs, normalized_size, s) - s;
    const uint8_t* token = normalized + s;
    const bool stop = num_stopwords > 0 &&
                      StopwordContainsHd(stop_bytes, stop_offsets, num_stopwords, token, len);
    keep[t] = !stop;
    if (stop) {
      hashes[t] = 0;
    } else if (IsShortTokenHd(tables.hash, len)) {
      hashes[t] = ShortTokenHashHd(tables.hash, token, len, tables.short_keys);
    } else {
      long_tokens[atomicAdd(num_long, 1u)] = t;
    }
  }
}

// The hashes of the tokens TokenKernel left to it (general XXH3), a thread
// each.
__global__ void LongTokenKernel(const uint32_t* long_tokens, const uint32_t* num_long,
                                const uint32_t* starts, const uint8_t* normalized,
                                const uint8_t* attrs, uint32_t normalized_size,
                                const __grid_constant__ DeviceTables tables, uint64_t* hashes) {
  const uint32_t count = *num_long;
  for (uint32_t i = GlobalThread(); i < count; i += GridThreads()) {
    const uint32_t t = long_tokens[i];
    const uint32_t s = starts[t];
    const uint32_t len = TokenEndHd(attrs, normalized_size, s) - s;
    hashes[t] = TokenHashHd(tables.hash, normalized + s, len, tables.seed, tables.secret);
  }
}

// A warp per document: its tokens are the starts in [norm_offsets[d],
// norm_offsets[d + 1]); lane 0 finds them, the warp labels them.
__global__ void TokenDocsKernel(const uint32_t* starts, uint32_t num_tokens,
                                const uint32_t* norm_offsets, uint32_t num_docs, uint32_t* docs) {
  const uint32_t lane = threadIdx.x & 31;
  for (uint32_t d = GlobalThread() / 32; d < num_docs; d += GridThreads() / 32) {
    uint32_t begin = 0;
    uint32_t end = 0;
    if (lane == 0) {
      begin = LowerBound(starts, num_tokens, norm_offsets[d]);
      end = LowerBound(starts, num_tokens, norm_offsets[d + 1]);
    }
    begin = __shfl_sync(0xffffffffu, begin, 0);
    end = __shfl_sync(0xffffffffu, end, 0);
    for (uint32_t t = begin + lane; t < end; t += 32) docs[t] = d;
  }
}

// token_offsets[d] = first kept token of document d, d in [0, num_docs].
__global__ void TokenOffsetsKernel(const uint32_t* token_docs, uint32_t num_tokens,
                                   uint32_t num_docs, uint32_t* token_offsets) {
  for (uint32_t d = GlobalThread(); d <= num_docs; d += GridThreads()) {
    token_offsets[d] = LowerBound(token_docs, num_tokens, d);
  }
}

// Features of width K per document: n - K + 1 full windows, or one
// short-document feature when 0 < n < K.
__device__ __forceinline__ uint32_t FeatureCountOf(uint32_t n, uint32_t width) {
  if (n == 0) return 0;
  return n >= width ? n - width + 1 : 1;
}

// Per document: the kept-token count and the end of its feature segment.
__global__ void FeatureEndsKernel(const uint32_t* token_offsets, uint32_t num_docs, uint32_t width,
                                  uint32_t* feature_ends, uint32_t* num_tokens) {
  for (uint32_t d = GlobalThread(); d < num_docs; d += GridThreads()) {
    const uint32_t n = token_offsets[d + 1] - token_offsets[d];
    if (feature_ends != nullptr) feature_ends[d] = token_offsets[d] + FeatureCountOf(n, width);
    if (num_tokens != nullptr) num_tokens[d] = n;
  }
}

// The feature of the window starting at kept token t of document d.
__device__ __forceinline__ uint64_t FeatureAt(const uint64_t* token_hashes,
                                              const uint32_t* token_offsets, uint32_t d, uint32_t t,
                                              uint32_t width, uint64_t leading) {
  const uint32_t n = token_offsets[d + 1] - token_offsets[d];
  return CombineHd(token_hashes + t, n < width ? n : width, leading);
}

// Features in kept-token space (positions past a document's segment are left
// unwritten: no sort or reader looks at them).
__global__ void FeatureKernel(const uint64_t* token_hashes, const uint32_t* token_docs,
                              const uint32_t* token_offsets, const uint32_t* feature_ends,
                              uint32_t num_tokens, uint32_t width, uint64_t leading, bool remix,
                              uint64_t* features) {
  for (uint32_t t = GlobalThread(); t < num_tokens; t += GridThreads()) {
    const uint32_t d = token_docs[t];
    if (t >= feature_ends[d]) continue;
    const uint64_t f = FeatureAt(token_hashes, token_offsets, d, t, width, leading);
    features[t] = remix ? Mix64Hd(f) : f;
  }
}

// A warp per document, features computed on the fly: each lane takes a
// window, and for each bit the warp counts the ones with a ballot; lane b
// keeps the counts of bits b and b + 32.
__global__ void SimHashKernel(const uint64_t* token_hashes, const uint32_t* token_offsets,
                              uint32_t num_docs, uint32_t width, uint64_t leading, bool wide,
                              uint64_t* high, uint64_t* low) {
  const uint32_t lane = threadIdx.x & 31;
  for (uint32_t d = GlobalThread() / 32; d < num_docs; d += GridThreads() / 32) {
    const uint32_t begin = token_offsets[d];
    const uint32_t end = begin + FeatureCountOf(token_offsets[d + 1] - begin, width);
    uint32_t ones_high[2] = {0, 0};  // bits lane, lane + 32 of the feature
    uint32_t ones_low[2] = {0, 0};   // the same of the 128-bit low word
    for (uint32_t base = begin; base < end; base += 32) {
      const bool active = base + lane < end;
      const uint64_t f =
          active ? FeatureAt(token_hashes, token_offsets, d, base + lane, width, leading) : 0;
#pragma unroll
      for (int b = 0; b < 64; ++b) {
        const uint32_t count = __popc(__ballot_sync(0xffffffffu, (f >> b) & 1));
        if (lane == static_cast<uint32_t>(b & 31)) ones_high[b >> 5] += count;
      }
      if (wide) {
        const uint64_t g = active ? Mix64Hd(f ^ kSimHash128LowSaltHd) : 0;
#pragma unroll
        for (int b = 0; b < 64; ++b) {
          const uint32_t count = __popc(__ballot_sync(0xffffffffu, (g >> b) & 1));
          if (lane == static_cast<uint32_t>(b & 31)) ones_low[b >> 5] += count;
        }
      }
    }
    // Bit b is 1 iff the signed sum 2 * ones - n is >= 0 (the paper's tie
    // rule; a document without features is all ones).
    const uint64_t n = end - begin;
    const uint64_t hi_lo32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_high[0]} >= n);
    const uint64_t hi_hi32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_high[1]} >= n);
    const uint64_t lo_lo32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_low[0]} >= n);
    const uint64_t lo_hi32 = __ballot_sync(0xffffffffu, 2 * uint64_t{ones_low[1]} >= n);
    if (lane == 0) {
      high[d] = hi_lo32 | (hi_hi32 << 32);
      if (wide) low[d] = lo_lo32 | (lo_hi32 << 32);
    }
  }
}

// Bottom-k from each document's sorted features: the first k distinct. With
// `only` not null, only the documents it flags.
__global__ void BottomKKernel(const uint64_t* sorted, const uint32_t* token_offsets,
                              const uint32_t* feature_ends, const uint8_t* only, uint32_t num_docs,
                              uint32_t k, uint64_t* out, uint32_t* counts) {
  for (uint32_t d = GlobalThread(); d < num_docs; d += GridThreads()) {
    if (only != nullptr && !only[d]) continue;
    uint32_t held = 0;
    const uint32_t end = feature_ends[d];
    uint64_t last = 0;
    for (uint32_t j = token_offsets[d]; j < end && held < k; ++j) {
      const uint64_t v = sorted[j];
      if (held > 0 && last == v) continue;
      out[size_t{d} * k + held++] = v;
      last = v;
    }
    counts[d] = held;
  }
}

constexpr uint32_t kFullMask = 0xffffffffu;

// Sorts the 32 * R values a warp holds, element r * 32 + lane in v[r] of
// lane `lane`, ascending (gpu/gpu_bottomk.h gives the network). With this
// layout a stride of 32 or more pairs two registers of the same lane (a
// compare-exchange, no communication) and a smaller one pairs the same
// register of lanes lane and lane ^ stride (one 64-bit shuffle). The loops
// run over exponents so that they unroll fully and every v[] index is a
// constant: a register array indexed at run time would live in local memory.
template <int R>
__device__ __forceinline__ void WarpBitonicSort(uint64_t (&v)[R], uint32_t lane) {
  constexpr int kLogSize = 5 + (R >= 2) + (R >= 4) + (R >= 8) + (R >= 16);
  static_assert(R == 1 || R == 2 || R == 4 || R == 8 || R == 16, "R: a power of two <= 16");
#pragma unroll
  for (int log_size = 1; log_size <= kLogSize; ++log_size) {
    const uint32_t size = 1u << log_size;
#pragma unroll
    for (int log_stride = log_size - 1; log_stride >= 0; --log_stride) {
      const uint32_t stride = 1u << log_stride;
      if (stride >= 32) {
        const int s = static_cast<int>(stride / 32);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if ((r & s) != 0) continue;  // the pair's upper register
          // r * 32 + lane is the pair's lower index: it takes the minimum
          // iff the pair is ascending.
          const bool ascending = BitonicKeepsMin(r * 32 + lane, size, stride);
          const uint64_t a = v[r];
          const uint64_t b = v[r + s];
          const uint64_t lo = a < b ? a : b;
          const uint64_t hi = a < b ? b : a;
          v[r] = ascending ? lo : hi;
          v[r + s] = ascending ? hi : lo;
        }
      } else {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const uint64_t other = __shfl_xor_sync(kFullMask, v[r], stride);
          const bool keeps_min = BitonicKeepsMin(r * 32 + lane, size, stride);
          v[r] = keeps_min ? (v[r] < other ? v[r] : other) : (v[r] < other ? other : v[r]);
        }
      }
    }
  }
}

// The bottom-k of `num` candidates in `buffer` (shared memory; every lane's
// writes to it done and visible, __syncwarp): sorts them in registers and
// writes the first k distinct to out[0, k) (coalesced). Returns how many
// distinct it found, stopping at k (so a result < k means all of them).
template <int R>
__device__ __forceinline__ uint32_t BottomKOfCandidates(const uint64_t* buffer, uint32_t num,
                                                        uint32_t k, uint64_t* out, uint32_t lane) {
  uint64_t v[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const uint32_t i = r * 32 + lane;
    // Padding sorts after every candidate, ties included, so elements
    // [0, num) of the sorted registers are exactly the sorted candidates.
    v[r] = i < num ? buffer[i] : UINT64_MAX;
  }
  WarpBitonicSort<R>(v, lane);
  uint32_t held = 0;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    // The element before r * 32 + lane: the lane below, or for lane 0 the
    // last lane of the register before.
    const uint64_t below = __shfl_up_sync(kFullMask, v[r], 1);
    const uint64_t wrapped = __shfl_sync(kFullMask, v[r > 0 ? r - 1 : 0], 31);
    const uint32_t i = r * 32 + lane;
    const bool first = i == 0 || v[r] != (lane == 0 ? wrapped : below);
    const uint32_t taken = __ballot_sync(kFullMask, i < num && first);
    const uint32_t pos = held + __popc(taken & ((1u << lane) - 1));
    if (((taken >> lane) & 1) != 0 && pos < k) out[pos] = v[r];
    held += __popc(taken);
    if (held >= k) return k;  // warp-uniform
  }
  return held;
}

// Bottom-k without sorting in global memory, a warp per document (the
// candidate threshold, the sorting network and why the result is exact:
// gpu/gpu_bottomk.h). Candidates go to shared memory (a ballot compacts
// them), then to registers for the network. A document with fewer than k
// distinct candidates under a threshold (repeated shingles) tries again with
// every feature; one whose candidates do not fit in kBottomKCandidates is
// flagged in needs_sort[] for the sorted path (cub::DeviceSegmentedSort and
// BottomKKernel), and *num_flagged counts it.
//
// Replaces k rounds of a warp min-reduction (each a pass over all
// candidates and 15 shuffles): the network costs 15 to 30 shuffle stages per
// register instead, whatever k.
//
// Three blocks per SM in the launch bounds cap registers at 85: with none,
// ptxas chose 80 registers and spilled 20 bytes (the 16-register network
// plus the per-document state); at 85 nothing spills (ptxas -v, sm_90).
__global__ void __launch_bounds__(kThreads, 3)
    BottomKSelectKernel(const uint64_t* features, const uint32_t* token_offsets,
                        const uint32_t* feature_ends, uint32_t num_docs, uint32_t k, uint64_t* out,
                        uint32_t* counts, uint8_t* needs_sort, uint32_t* num_flagged) {
  __shared__ uint64_t candidates[kThreads / 32][kBottomKCandidates];
  const uint32_t lane = threadIdx.x & 31;
  uint64_t* buffer = candidates[threadIdx.x / 32];
  for (uint32_t d = GlobalThread() / 32; d < num_docs; d += GridThreads() / 32) {
    const uint32_t begin = token_offsets[d];
    const uint32_t end = feature_ends[d];
    const uint32_t n = end - begin;
    uint64_t threshold = BottomKThreshold(n, k);
    uint64_t* doc_out = out + size_t{d} * k;
    uint32_t held = 0;
    bool flag = false;
    while (true) {
      uint32_t num = 0;
      for (uint32_t base = begin; base < end; base += 32) {
        const bool valid = base + lane < end;
        const uint64_t v = valid ? features[base + lane] : 0;
        const bool take = valid && v <= threshold;
        const uint32_t mask = __ballot_sync(kFullMask, take);
        const uint32_t pos = num + __popc(mask & ((1u << lane) - 1));
        if (take && pos < kBottomKCandidates) buffer[pos] = v;
        num += __popc(mask);
      }
      __syncwarp();
      if (num > kBottomKCandidates) {
        flag = true;
        break;
      }
      switch (BottomKRegisters(num)) {
        case 1:
          held = BottomKOfCandidates<1>(buffer, num, k, doc_out, lane);
          break;
        case 2:
          held = BottomKOfCandidates<2>(buffer, num, k, doc_out, lane);
          break;
        case 4:
          held = BottomKOfCandidates<4>(buffer, num, k, doc_out, lane);
          break;
        case 8:
          held = BottomKOfCandidates<8>(buffer, num, k, doc_out, lane);
          break;
        default:
          held = BottomKOfCandidates<16>(buffer, num, k, doc_out, lane);
          break;
      }
      // Exact once k are found or every feature was a candidate.
      if (held >= k || threshold == UINT64_MAX) break;
      if (n > kBottomKCandidates) {
        flag = true;
        break;
      }
      // Retry with every feature: it rewrites doc_out from the start and
      // finds at least the held values again.
      threshold = UINT64_MAX;
      __syncwarp();  // every lane done reading the buffer before it is refilled
    }
    if (lane == 0) {
      counts[d] = held;
      needs_sort[d] = flag;
      if (flag) atomicAdd(num_flagged, 1u);
    }
    __syncwarp();
  }
}

// Segment ends for the sorted fallback: a flagged document's features, an
// empty segment for the others.
__global__ void FlaggedEndsKernel(const uint32_t* token_offsets, const uint32_t* feature_ends,
                                  const uint8_t* flags, uint32_t num_docs, uint32_t* ends) {
  for (uint32_t d = GlobalThread(); d < num_docs; d += GridThreads()) {
    ends[d] = flags[d] ? feature_ends[d] : token_offsets[d];
  }
}

// k-value bins without sorting: each bin's minimum by atomicMin.
// REQUIRES: mins filled with UINT64_MAX and filled with 0 beforehand.
__global__ void KValueAtomicKernel(const uint64_t* features, const uint32_t* token_docs,
                                   const uint32_t* feature_ends, uint32_t num_tokens, uint32_t k,
                                   unsigned long long* mins, uint8_t* filled) {
  for (uint32_t t = GlobalThread(); t < num_tokens; t += GridThreads()) {
    const uint32_t d = token_docs[t];
    if (t >= feature_ends[d]) continue;
    const uint64_t v = features[t];
    const size_t slot = size_t{d} * k + KValueBin(v, k);
    atomicMin(mins + slot, static_cast<unsigned long long>(v));
    filled[slot] = 1;
  }
}

__global__ void DensifyKernel(const uint64_t* mins, const uint8_t* filled,
                              const uint32_t* token_offsets, const uint32_t* feature_ends,
                              uint32_t num_docs, uint32_t k, uint64_t seed, uint64_t* values,
                              uint8_t* empty) {
  const size_t total = size_t{num_docs} * k;
  for (size_t x = GlobalThread(); x < total; x += GridThreads()) {
    const uint32_t d = static_cast<uint32_t>(x / k);
    const uint32_t i = static_cast<uint32_t>(x % k);
    const bool no_features = feature_ends[d] == token_offsets[d];
    if (i == 0) empty[d] = no_features;
    if (no_features) {
      values[x] = 0;
      continue;
    }
    const uint8_t* doc_filled = filled + size_t{d} * k;
    const uint32_t source = doc_filled[i] ? i : DensifySource(doc_filled, k, seed, i);
    values[x] = mins[size_t{d} * k + source];
  }
}

__global__ void ChunkIdKernel(const uint64_t* features, const uint32_t* token_docs,
                              const uint32_t* feature_ends, uint32_t num_tokens, uint32_t* ids) {
  for (uint32_t t = GlobalThread(); t < num_tokens; t += GridThreads()) {
    if (t < feature_ends[token_docs[t]]) ids[t] = static_cast<uint32_t>(features[t] >> 32);
  }
}

// Keep a sorted chunk id when it is sampled and differs from the one before
// it in its document; keep[num_tokens] = 0 closes the scan.
__global__ void ChunkKeepKernel(const uint32_t* sorted, const uint32_t* token_docs,
                                const uint32_t* token_offsets, const uint32_t* feature_ends,
                                uint32_t num_tokens, uint32_t modulus, uint32_t* keep) {
  for (uint32_t j = GlobalThread(); j <= num_tokens; j += GridThreads()) {
    if (j == num_tokens) {
      keep[j] = 0;
      continue;
    }
    const uint32_t d = token_docs[j];
    if (j >= feature_ends[d]) {
      keep[j] = 0;
      continue;
    }
    const uint32_t id = sorted[j];
    const bool sampled = modulus == 1 || id % modulus == 0;
    keep[j] = sampled && (j == token_offsets[d] || sorted[j - 1] != id);
  }
}

__global__ void ChunkScatterKernel(const uint32_t* sorted, const uint32_t* keep,
                                   const uint32_t* positions, uint32_t num_tokens,
                                   const uint32_t* token_offsets, uint32_t num_docs,
                                   uint32_t* ids_out, uint32_t* chunk_offsets) {
  for (uint32_t j = GlobalThread(); j < num_tokens; j += GridThreads()) {
    if (keep[j]) ids_out[positions[j]] = sorted[j];
  }
  for (uint32_t d = GlobalThread(); d <= num_docs; d += GridThreads()) {
    chunk_offsets[d] = positions[token_offsets[d]];
  }
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_CUDA_KERNELS_CUH_
