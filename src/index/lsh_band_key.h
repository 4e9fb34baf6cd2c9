// Band keys of the LSH index: one 64-bit hash per band of a MinHash sketch.
//
// Frozen: the key of band `band` is XXH3-64 (Collet) of the band's
// rows_per_band values as little-endian 64-bit words, seeded with the band
// index, so equal value tuples in different bands get unrelated keys. A change
// here changes every stored band key.
// Cost: one XXH3 call per band (about 10 ns for 8 rows).
#ifndef NEARDUP_INDEX_LSH_BAND_KEY_H_
#define NEARDUP_INDEX_LSH_BAND_KEY_H_

#include <bit>
#include <cstdint>

#include "neardup/lsh_params.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace neardup::internal {

// The key of band `band`: its rows start at values[band * rows_per_band].
inline uint64_t BandKey(const uint64_t* values, int rows_per_band, int band) {
  const uint64_t* rows = values + static_cast<size_t>(band) * rows_per_band;
  if constexpr (std::endian::native == std::endian::little) {
    return XXH3_64bits_withSeed(rows, sizeof(uint64_t) * rows_per_band,
                                static_cast<XXH64_hash_t>(band));
  } else {
    // Hash the little-endian bytes so keys agree across platforms.
    XXH3_state_t state;
    XXH3_64bits_reset_withSeed(&state, static_cast<XXH64_hash_t>(band));
    for (int i = 0; i < rows_per_band; ++i) {
      const uint64_t le = __builtin_bswap64(rows[i]);
      XXH3_64bits_update(&state, &le, sizeof(le));
    }
    return XXH3_64bits_digest(&state);
  }
}

// BandKeys with rows_per_band known at compile time: XXH3's length
// dispatch folds away and the band's reads get fixed offsets. The same
// function of the same bytes, so the same keys (tested against BandKey).
template <int kRows>
inline void ComputeBandKeysFixed(int first_band, int num_bands, const uint64_t* sketch,
                                 uint64_t* keys) {
  for (int b = 0; b < num_bands; ++b) keys[b] = BandKey(sketch, kRows, first_band + b);
}

// keys[b] = BandKey(sketch, rows_per_band, first_band + b) for b in
// [0, num_bands): the bands [first_band, first_band + num_bands) of the
// scheme, keyed exactly as in an index of all its bands. The shapes
// ChooseLshParams picks for 128 hashes at the usual thresholds (b = 16,
// r = 8 and b = 9, r = 13) take a specialised loop.
// REQUIRES: sketch holds (first_band + num_bands) * rows_per_band values;
// keys num_bands.
inline void ComputeBandKeys(const LshParams& params, const uint64_t* sketch, uint64_t* keys,
                            int first_band = 0) {
  switch (params.rows_per_band) {
    case 8:
      return ComputeBandKeysFixed<8>(first_band, params.num_bands, sketch, keys);
    case 13:
      return ComputeBandKeysFixed<13>(first_band, params.num_bands, sketch, keys);
    default:
      for (int b = 0; b < params.num_bands; ++b) {
        keys[b] = BandKey(sketch, params.rows_per_band, first_band + b);
      }
  }
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_BAND_KEY_H_
