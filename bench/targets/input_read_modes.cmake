# The input side alone: mapping vs pread vs populating, with the first read
# of the bytes (bench/input_read_modes.cc; docs/FINGERPRINT_SPEED.md).
add_executable(input_read_modes ${CMAKE_CURRENT_SOURCE_DIR}/input_read_modes.cc)
target_link_libraries(input_read_modes PRIVATE neardup_build_flags)
