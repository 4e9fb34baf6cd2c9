# Accuracy harness: precision / recall / F1 of every near-duplicate method
# against exact Jaccard ground truth on real text. Run bench/accuracy/run.sh;
# figures in docs/ACCURACY.md.
neardup_add_benchmark(NAME accuracy_harness
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/accuracy_harness.cc
  LIBS neardup::core TBB::tbb)
target_include_directories(accuracy_harness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(accuracy_harness PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
