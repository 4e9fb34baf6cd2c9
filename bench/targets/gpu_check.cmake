# The GPU backend's check and throughput benchmark (scripts/gpu_check.sh),
# a plain executable (no Google Benchmark) so it runs where only the
# libraries it carries are present.
if(NEARDUP_HAVE_CUDA)
  add_executable(neardup_gpu_check gpu_fingerprint_check.cc)
  target_include_directories(neardup_gpu_check PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(neardup_gpu_check PRIVATE neardup::core TBB::tbb neardup_build_flags)
endif()
