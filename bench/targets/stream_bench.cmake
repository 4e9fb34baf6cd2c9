neardup_add_benchmark(NAME stream_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/stream_bench.cc
  LIBS neardup::core)
target_compile_definitions(stream_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
