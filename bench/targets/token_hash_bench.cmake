# XXH3 of a corpus's word tokens alone, per CPU path (text/token_hash_avx512.h).
neardup_add_benchmark(NAME token_hash_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/token_hash_bench.cc
  LIBS neardup::core)
target_compile_definitions(token_hash_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
