# The optional CUDA fingerprint backend (issue 19). Enabled when a CUDA
# compiler is found: on PATH, through CMAKE_CUDA_COMPILER / CUDACXX, or at
# /usr/local/cuda/bin/nvcc where Debian-less CUDA installs put it. Without
# one, NEARDUP_HAVE_CUDA is OFF and everything else builds as before.
option(NEARDUP_ENABLE_CUDA "Build the CUDA fingerprint backend when a CUDA compiler is found" ON)
# Hopper (H100, H200) machine code plus PTX, which the driver compiles for
# newer GPUs at load time.
set(NEARDUP_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING
    "CUDA architectures of the fingerprint kernels")
set(NEARDUP_HAVE_CUDA OFF)
if(NEARDUP_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(NEARDUP_NVCC nvcc)
    if(NOT NEARDUP_NVCC)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${NEARDUP_CUDA_ARCHITECTURES})
    endif()
    if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
    endif()
    enable_language(CUDA)
    # CMake 3.25 predates nvcc's C++20 dialect flag; the sources need C++20
    # (the public headers use std::span).
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(NEARDUP_HAVE_CUDA ON)
    message(STATUS "neardup: CUDA backend ON (${CMAKE_CUDA_COMPILER}, sm ${NEARDUP_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "neardup: no CUDA compiler found; the CUDA backend is not built")
  endif()
endif()
