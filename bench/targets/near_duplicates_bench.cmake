# FindNearDuplicatePairs over 1M synthetic sketches, and JaccardAtLeast on
# real documents' sketches. Figures in docs/ACCURACY.md.
neardup_add_benchmark(NAME near_duplicates_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/near_duplicates_bench.cc
  LIBS neardup::core TBB::tbb)
target_include_directories(near_duplicates_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(near_duplicates_bench PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
