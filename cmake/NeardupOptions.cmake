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
