# How test binaries are compiled (docs/ARCHITECTURE.md "Build"). The suite's
# compile time is most of CI's time, and test sources are most of it: their
# code runs once per CTest run, so it is compiled for build speed, while the
# library under test keeps the build type's flags.
# - -Og: a third to a half less compile time than -O3 for a gtest file, and
#   still readable in a debugger. The library's objects stay at -O2/-O3.
# - NEARDUP_UNITY_TESTS (scripts/test.sh turns it on): each test binary's
#   sources compile as one translation unit, so gtest/gmock and our headers
#   are parsed once per binary, not once per file. Off by default: an edit to
#   one test file would recompile its whole binary. Test files must therefore
#   not define two things of the same name in one binary (helpers in
#   anonymous namespaces included).
option(NEARDUP_UNITY_TESTS "Compile each test binary's sources as one translation unit" OFF)
# - NEARDUP_TEST_PCH (scripts/test.sh turns it on): gtest, gmock and the big
#   standard headers are precompiled once per build (the target
#   neardup_test_pch) and every test binary reuses that header (REUSE_FROM),
#   instead of parsing them again (18 Release test binaries: 162 -> 120
#   CPU-s, for 14 CPU-s to build the header). Off by default: an incremental
#   build compiles few test files, and ccache caches no compile that uses a
#   precompiled header unless told to (its `sloppiness`).
option(NEARDUP_TEST_PCH "Precompile gtest, gmock and std headers once for all test binaries" OFF)
# - NEARDUP_TEST_DEBUG_INFO=OFF (scripts/test.sh): test sources without
#   debug information in a build that has it (the asan preset's -g1). Under
#   ASan+UBSan that is a fifth less compile time for a test binary (text_test:
#   52 -> 42.5 CPU-s); a report still names the test's functions (symbols)
#   and gives file and line in the library, which keeps -g1.
option(NEARDUP_TEST_DEBUG_INFO "Compile test sources with the build type's debug information" ON)
# - NEARDUP_TEST_FULL_UBSAN=OFF (scripts/test.sh): in a build with
#   NEARDUP_SANITIZE=...undefined, test sources leave out UBSan's vptr, null,
#   alignment and pointer-overflow checks, which instrument every member
#   access and pointer use of gtest's and the standard library's inline code:
#   ~30% of a test binary's compile time under ASan+UBSan (session 19). The
#   library's own sources keep every check; test sources keep ASan and the
#   arithmetic, bounds and object-size checks; a null dereference still stops
#   under ASan (SEGV report).
option(NEARDUP_TEST_FULL_UBSAN "Test sources get every UBSan check of NEARDUP_SANITIZE" ON)
if(NOT NEARDUP_TEST_FULL_UBSAN AND NEARDUP_SANITIZE MATCHES "undefined" AND NOT TARGET neardup_test_ubsan_light)
  # An interface target, so that its flag comes after neardup_build_flags'
  # -fsanitize=... on the command line (the later one wins).
  add_library(neardup_test_ubsan_light INTERFACE)
  target_compile_options(neardup_test_ubsan_light INTERFACE
    -fno-sanitize=vptr,null,alignment,pointer-overflow)
endif()
# - NEARDUP_SLOW_TESTS=OFF (the asan and tsan presets): the tests labelled
#   `slow` are not registered, and the executables that only they run are not
#   built (serve_crash_test, postgres_sink_test, neardup-mpi-testhooks). Those
#   presets' test runs leave the label out anyway (the slow tests run in the
#   Release build only), so a sanitizer build compiled them for nothing.
option(NEARDUP_SLOW_TESTS "Build and register the tests labelled slow" ON)
set(NEARDUP_TEST_PCH_HEADERS
  <gmock/gmock.h> <gtest/gtest.h>
  <algorithm> <atomic> <chrono> <cstdint> <cstdio> <cstdlib> <cstring> <filesystem> <fstream>
  <functional> <map> <memory> <mutex> <optional> <random> <regex> <set> <span> <sstream>
  <string> <string_view> <thread> <unordered_map> <unordered_set> <utility> <vector>)

# neardup_test_build_options(target): the include paths and compile options
# every test binary gets: src/ for the module's internals, tests/ for the
# shared helpers ("support/temp_dir.h", "support/planted_corpus.h").
function(neardup_test_compile_options target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    target_compile_options(${target} PRIVATE -Og)
  endif()
  if(NOT NEARDUP_TEST_DEBUG_INFO)
    target_compile_options(${target} PRIVATE -g0)
  endif()
  if(TARGET neardup_test_ubsan_light)
    target_link_libraries(${target} PRIVATE neardup_test_ubsan_light)
  endif()
endfunction()

# The precompiled header's own target: compiled with exactly the options of
# a test binary (a GCC precompiled header is used only by compiles with the
# same code-generation options; otherwise GCC parses the headers as text).
function(neardup_test_pch_target)
  if(TARGET neardup_test_pch)
    return()
  endif()
  set(anchor ${PROJECT_BINARY_DIR}/neardup_test_pch.cc)
  if(NOT EXISTS ${anchor})
    file(WRITE ${anchor} "// The source of the test binaries' precompiled header (NEARDUP_TEST_PCH).\n")
  endif()
  add_library(neardup_test_pch OBJECT ${anchor})
  set_target_properties(neardup_test_pch PROPERTIES UNITY_BUILD OFF)
  target_link_libraries(neardup_test_pch PRIVATE GTest::gmock GTest::gtest neardup_build_flags)
  neardup_test_compile_options(neardup_test_pch)
  target_precompile_headers(neardup_test_pch PRIVATE ${NEARDUP_TEST_PCH_HEADERS})
endfunction()

function(neardup_test_build_options target)
  neardup_test_compile_options(${target})
  if(NEARDUP_TEST_PCH)
    neardup_test_pch_target()
    target_precompile_headers(${target} REUSE_FROM neardup_test_pch)
  endif()
  if(NEARDUP_UNITY_TESTS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  endif()
  # ThreadSanitizer builds run oneTBB with one thread (why: the file's
  # comment; scripts/tsan_check.sh).
  if(NEARDUP_SANITIZE MATCHES "thread")
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/one_tbb_thread.cc)
    target_link_libraries(${target} PRIVATE TBB::tbb)
  endif()
endfunction()

# neardup_add_test(NAME name SOURCES a.cc ... [LIBS lib ...])
# Declares one GoogleTest binary and registers its tests with CTest.
function(neardup_add_test)
  if(NOT NEARDUP_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main
                                            neardup_build_flags)
  neardup_test_build_options(${ARG_NAME})
  target_compile_definitions(${ARG_NAME} PRIVATE
    NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "NEARDUP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
