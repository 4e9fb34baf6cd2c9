// Compiles a hot function twice, with and without the popcnt instruction
// (the baseline x86-64 target has none, and std::popcount then becomes a
// library call); the loader picks the clone for the CPU it runs on. Not
// under ThreadSanitizer: the clones' ifunc resolvers run during relocation,
// before the TSan runtime is set up, and crash there (a TSan build gets the
// baseline version only).
#ifndef NEARDUP_INDEX_HAMMING_CPU_H_
#define NEARDUP_INDEX_HAMMING_CPU_H_

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__POPCNT__) && \
    !defined(__SANITIZE_THREAD__)
#define NEARDUP_POPCNT_CLONES __attribute__((target_clones("default", "popcnt")))
#else
#define NEARDUP_POPCNT_CLONES
#endif

// Compiles a loop that GCC vectorises twice, for SSE2 (the baseline) and for
// AVX2 (four 64-bit lanes).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__) && \
    !defined(__SANITIZE_THREAD__)
#define NEARDUP_AVX2_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define NEARDUP_AVX2_CLONES
#endif

#endif  // NEARDUP_INDEX_HAMMING_CPU_H_
