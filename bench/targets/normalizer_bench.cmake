# Normalize alone, per CPU path (text/normalizer.h).
neardup_add_benchmark(NAME normalizer_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/normalizer_bench.cc
  LIBS neardup::core)
target_compile_definitions(normalizer_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
