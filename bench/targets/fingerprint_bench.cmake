neardup_add_benchmark(NAME fingerprint_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fingerprint_bench.cc
  LIBS neardup::core)
target_compile_definitions(fingerprint_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
