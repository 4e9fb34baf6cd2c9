# Warning and sanitizer flags, applied to neardup's own targets through the
# interface target neardup_build_flags (never as global flags).
add_library(neardup_build_flags INTERFACE)
target_compile_options(neardup_build_flags INTERFACE -Wall -Wextra -Werror)
# The libraries are built position-independent (for shared objects); without
# this flag -fPIC would make every exported function interposable, so GCC could
# no longer inline or specialise calls between them inside one library.
target_compile_options(neardup_build_flags INTERFACE -fno-semantic-interposition)
# GCC 12 reports -Wrestrict false positives inside libstdc++'s std::string
# operator+ at -O3 (GCC bug 105651); they are not in our code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(neardup_build_flags INTERFACE -Wno-restrict)
endif()

if(NEARDUP_SANITIZE)
  target_compile_options(neardup_build_flags INTERFACE
    -fsanitize=${NEARDUP_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(neardup_build_flags INTERFACE -fsanitize=${NEARDUP_SANITIZE})
endif()

# The linker. A build links some fifty test executables of 50-130 MB each
# (twice in CI: Release and ASan); mold links them in a fraction of GNU ld's
# time. Used when found, for neardup's own build only (a parent project that
# embeds neardup keeps its linker); -DNEARDUP_LINKER=default keeps the
# compiler's own.
set(NEARDUP_LINKER "auto" CACHE STRING "Linker for neardup's binaries: auto (mold when found), mold, default")
if(NEARDUP_IS_TOP_LEVEL AND NOT NEARDUP_LINKER STREQUAL "default")
  find_program(NEARDUP_MOLD mold)
  if(NEARDUP_MOLD AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang"
     AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
    add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=mold>)
    message(STATUS "neardup: linking with mold (${NEARDUP_MOLD})")
  elseif(NEARDUP_LINKER STREQUAL "mold")
    message(FATAL_ERROR "NEARDUP_LINKER=mold, but mold was not found (apt-get install mold)")
  endif()
endif()
