# The epoll load generator of `neardup serve` (bench/server/http_load.cc): a
# plain program over POSIX sockets (no HTTP library), so that a request costs
# the client a few microseconds, not the server's own price.
if(TARGET neardup_server)
  find_package(Threads REQUIRED)
  add_executable(server_http_load server/http_load.cc)
  set_target_properties(server_http_load PROPERTIES OUTPUT_NAME http_load)
  target_link_libraries(server_http_load PRIVATE Threads::Threads neardup_build_flags)
endif()
