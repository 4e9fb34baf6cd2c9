# The load generator of `neardup serve` (a plain program, not Google
# Benchmark: it drives a running server over loopback). Needs cpp-httplib.
if(TARGET neardup_server)
  find_package(Threads REQUIRED)
  add_executable(server_load server_load.cc)
  target_link_libraries(server_load PRIVATE PkgConfig::HTTPLIB Threads::Threads)
endif()
