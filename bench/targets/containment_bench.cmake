# Containment engine at archive scale: index build, full top-N, incremental
# add, single-document query latency, memory. Figures in docs/CONTAINMENT.md.
neardup_add_benchmark(NAME containment_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/containment_bench.cc
  LIBS neardup::core TBB::tbb)
target_include_directories(containment_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(containment_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
