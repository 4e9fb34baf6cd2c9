# dedup's output side alone: several threads writing one file at offsets by
# pwrite vs through a shared writable mapping (bench/output_write_modes.cc;
# docs/PARALLELISM.md, session 14).
find_package(Threads REQUIRED)
add_executable(output_write_modes ${CMAKE_CURRENT_SOURCE_DIR}/output_write_modes.cc)
target_link_libraries(output_write_modes PRIVATE neardup_build_flags Threads::Threads)
