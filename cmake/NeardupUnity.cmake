# Unity (jumbo) builds of neardup's own targets, for CI (docs/ARCHITECTURE.md
# "Build"). scripts/test.sh builds from scratch, and parsing the same
# standard, oneTBB, simdjson and cpp-httplib headers once per source file is
# much of that time: NEARDUP_UNITY_BUILD=ON compiles the library modules, the
# front ends, the Python module, the fuzzers, examples and benchmarks in
# batches of NEARDUP_UNITY_BATCH_SIZE files, one translation unit per batch
# (src/engine: 60 CPU-s as 16 files, 27 as one). Off by default: an edit to
# one file would recompile its whole batch.
#
# Two rules follow for the sources:
# - Files of one target must not define two things of the same name, even in
#   anonymous namespaces (rename the helper, or give it a file-specific name).
# - Files that switch the instruction set (`#pragma GCC target`,
#   `__attribute__((target(...)))`: the SIMD kernels) are compiled on their
#   own (neardup_unity_exclude_isa_files below): a pragma must not reach the
#   next file of a batch, and their code stays exactly as in a normal build.
option(NEARDUP_UNITY_BUILD "Compile neardup's targets in unity batches (CI)" OFF)
set(NEARDUP_UNITY_BATCH_SIZE 8 CACHE STRING "Source files per unity batch under NEARDUP_UNITY_BUILD")
if(NEARDUP_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${NEARDUP_UNITY_BATCH_SIZE})
endif()

# neardup_unity_whole_target(target ...): each target's sources in one unity
# batch (up to 64 files) instead of batches of NEARDUP_UNITY_BATCH_SIZE. For
# the front ends and the Python module, whose every file includes CLI11 or
# pybind11 and much of the public API: that inline code is most of a batch's
# compile, so a second batch of a few files cost nearly as much as the first
# (the CLI's similar_command.cc alone: 25 CPU-s under ASan;
# docs/ARCHITECTURE.md "Build"). The library modules keep batches of 8: most
# of their compile is their own code.
function(neardup_unity_whole_target)
  if(NEARDUP_UNITY_BUILD)
    set_target_properties(${ARGN} PROPERTIES UNITY_BUILD_BATCH_SIZE 64)
  endif()
endfunction()

# Every build-system target declared in DIR and below it, into OUT.
function(neardup_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    neardup_targets_below(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Marks the C++ sources that switch the instruction set
# SKIP_UNITY_BUILD_INCLUSION, in every target that compiles them. Called once,
# at the end of the top-level CMakeLists.txt, when all targets exist; reads
# each source once at configure time (milliseconds).
function(neardup_unity_exclude_isa_files)
  if(NOT NEARDUP_UNITY_BUILD)
    return()
  endif()
  neardup_targets_below(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(batch ${target} UNITY_BUILD_BATCH_SIZE)
    # Test binaries (NEARDUP_UNITY_TESTS: one batch) keep their own rule.
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY" OR batch STREQUAL "0")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    foreach(source ${sources})
      if(NOT source MATCHES "\\.(cc|cpp|cxx)$" OR source MATCHES "^\\$<")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE path)
      if(NOT EXISTS ${path})
        continue()  # generated at build time
      endif()
      file(STRINGS ${path} isa_lines REGEX "pragma GCC target|__attribute__\\(\\(target\\(")
      if(isa_lines)
        set_source_files_properties(${path} TARGET_DIRECTORY ${target}
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
endfunction()
