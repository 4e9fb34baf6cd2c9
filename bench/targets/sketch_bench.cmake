neardup_add_benchmark(NAME sketch_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/sketch_bench.cc
  LIBS neardup_sketch)
