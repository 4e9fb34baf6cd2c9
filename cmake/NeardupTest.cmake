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
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(${ARG_NAME} PRIVATE
    NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "NEARDUP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
