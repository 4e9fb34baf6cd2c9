# Warning and sanitizer flags, applied to neardup's own targets through the
# interface target neardup_build_flags (never as global flags).
add_library(neardup_build_flags INTERFACE)
target_compile_options(neardup_build_flags INTERFACE -Wall -Wextra -Werror)

if(NEARDUP_SANITIZE)
  target_compile_options(neardup_build_flags INTERFACE
    -fsanitize=${NEARDUP_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(neardup_build_flags INTERFACE -fsanitize=${NEARDUP_SANITIZE})
endif()
