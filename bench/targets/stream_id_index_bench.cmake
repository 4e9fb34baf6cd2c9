neardup_add_benchmark(NAME stream_id_index_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/stream_id_index_bench.cc
  LIBS neardup_hash)
