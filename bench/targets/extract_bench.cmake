# Document extraction per format (neardup/document_extractor.h); the fixture
# writers it uses come with the tests (GoogleTest), so it is built with them.
if(TARGET GTest::gtest)
  neardup_add_benchmark(NAME extract_bench
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/extract_bench.cc
    LIBS neardup::core GTest::gtest PkgConfig::POPPLER_CPP PkgConfig::LIBZIP ZLIB::ZLIB)
  target_include_directories(extract_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
endif()
