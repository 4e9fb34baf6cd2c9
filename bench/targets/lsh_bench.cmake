neardup_add_benchmark(NAME lsh_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/lsh_bench.cc
  LIBS neardup_index)
