// NEARDUP_INTRINSICS_WARNINGS_OFF / NEARDUP_INTRINSICS_WARNINGS_ON bracket
// SIMD intrinsic code (and, where it is needed, the include of
// <immintrin.h>). GCC 12 reports the _mm512_undefined_*() placeholders inside
// its own intrinsic headers as "(maybe) used uninitialized" once they are
// inlined (GCC bug 105593): a false positive about the header, not the
// caller, which -Werror would turn into a build failure. Every other
// compiler sees no-ops, so the suppression never hides a real warning there.
#ifndef NEARDUP_UTIL_INTRINSICS_WARNINGS_H_
#define NEARDUP_UTIL_INTRINSICS_WARNINGS_H_

#if defined(__GNUC__) && !defined(__clang__)
#define NEARDUP_INTRINSICS_WARNINGS_OFF                                                \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NEARDUP_INTRINSICS_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define NEARDUP_INTRINSICS_WARNINGS_OFF
#define NEARDUP_INTRINSICS_WARNINGS_ON
#endif

#endif  // NEARDUP_UTIL_INTRINSICS_WARNINGS_H_
