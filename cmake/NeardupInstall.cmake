# Installs the public headers, the module libraries and a CMake package, so
# that another project can say
#   find_package(neardup REQUIRED)
#   target_link_libraries(app PRIVATE neardup::core)
# The libraries are static; their private dependencies (TBB, simdjson,
# SQLite, zlib, zstd, libdeflate, utf8proc, xxHash, OpenSSL's libcrypto) are
# found again by the package config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NEARDUP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/neardup)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/neardup
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT neardupTargets NAMESPACE neardup:: DESTINATION ${NEARDUP_INSTALL_CMAKEDIR})

# An installed library with the CUDA backend links the static CUDA runtime:
# its package config must find the CUDA toolkit too.
if(NEARDUP_HAVE_CUDA)
  set(NEARDUP_PACKAGE_NEEDS_CUDA TRUE)
else()
  set(NEARDUP_PACKAGE_NEEDS_CUDA FALSE)
endif()
# The same for libpq, when the PostgreSQL sink is built into neardup_sink.
set(NEARDUP_PACKAGE_NEEDS_LIBPQ ${NEARDUP_HAVE_LIBPQ})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/neardupConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/neardupConfig.cmake
                              INSTALL_DESTINATION ${NEARDUP_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/neardupConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/neardupConfig.cmake
              ${PROJECT_BINARY_DIR}/neardupConfigVersion.cmake
        DESTINATION ${NEARDUP_INSTALL_CMAKEDIR})
