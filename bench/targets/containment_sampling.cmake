# Accuracy and cost of chunk sampling (chunks.sample_modulus) against exact
# containment on the synthetic archive. Figures in docs/CONTAINMENT.md.
neardup_add_benchmark(NAME containment_sampling
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/accuracy/containment_sampling.cc
  LIBS neardup::core TBB::tbb)
target_include_directories(containment_sampling PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(containment_sampling PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
