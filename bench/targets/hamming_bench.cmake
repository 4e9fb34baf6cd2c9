# Hamming index vs FAISS's binary hash indexes (when Debian's libfaiss-dev is
# installed). Figures: docs/HAMMING_INDEX.md.
neardup_add_benchmark(NAME hamming_bench SOURCES hamming_bench.cc LIBS neardup_index TBB::tbb)
if(TARGET faiss)
  target_link_libraries(hamming_bench PRIVATE faiss)
  target_compile_definitions(hamming_bench PRIVATE NEARDUP_HAVE_FAISS=1)
  if(TARGET OpenMP::OpenMP_CXX)
    target_link_libraries(hamming_bench PRIVATE OpenMP::OpenMP_CXX)
  endif()
endif()
