# Which LibTorch torch2onnx builds on: one setting, T2O_TORCH.
#
#   wheel   (default) the LibTorch inside the torch wheel installed for
#           T2O_PYTHON (PyTorch 2.x; a CPU or a CUDA wheel: only
#           libtorch_cpu and libc10 are linked, so CUDA is never needed)
#   system  Debian's LibTorch (libtorch-dev, PyTorch 1.13.1), found with
#           find_package(Torch); T2O_PYTHON defaults to /usr/bin/python3
#
# Defines the imported target t2o::libtorch, T2O_TORCH_VERSION,
# T2O_TORCH_LIBDIR (where libtorch_python is) and sets the C++ standard
# (LibTorch 2.13 and newer need C++20).
set(T2O_TORCH "wheel" CACHE STRING "LibTorch to build on: wheel (torch 2.x of T2O_PYTHON) or system (Debian's 1.13)")
set_property(CACHE T2O_TORCH PROPERTY STRINGS wheel system)

if(T2O_TORCH STREQUAL "system")
  if(NOT T2O_PYTHON)
    set(T2O_PYTHON /usr/bin/python3)
  endif()
  find_package(Torch REQUIRED)
  add_library(t2o::libtorch INTERFACE IMPORTED)
  target_link_libraries(t2o::libtorch INTERFACE torch)
  separate_arguments(T2O_TORCH_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  target_compile_options(t2o::libtorch INTERFACE ${T2O_TORCH_FLAGS})
  set(T2O_TORCH_VERSION ${Torch_VERSION})
  set(T2O_TORCH_LIBDIR ${TORCH_INSTALL_PREFIX}/lib)
  set(CMAKE_CXX_STANDARD 17)
elseif(T2O_TORCH STREQUAL "wheel")
  if(NOT T2O_PYTHON)
    message(FATAL_ERROR "T2O_TORCH=wheel needs T2O_PYTHON: the Python whose torch to build on "
                        "(`make` sets up build/venv with the pinned torch; or -DT2O_TORCH=system for Debian's 1.13)")
  endif()
  execute_process(
    COMMAND ${T2O_PYTHON} -c "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
    OUTPUT_VARIABLE _t2o_torch_info RESULT_VARIABLE _t2o_rc ERROR_VARIABLE _t2o_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _t2o_rc EQUAL 0)
    message(FATAL_ERROR "${T2O_PYTHON} cannot import torch:\n${_t2o_err}")
  endif()
  string(REPLACE "\n" ";" _t2o_torch_info "${_t2o_torch_info}")
  list(GET _t2o_torch_info 0 _t2o_torch_dir)
  list(GET _t2o_torch_info 1 T2O_TORCH_VERSION)
  list(GET _t2o_torch_info 2 _t2o_abi)
  set(T2O_TORCH_LIBDIR ${_t2o_torch_dir}/lib)
  foreach(lib torch_cpu c10)
    if(NOT EXISTS ${T2O_TORCH_LIBDIR}/lib${lib}.so)
      message(FATAL_ERROR "the torch wheel at ${_t2o_torch_dir} has no lib/lib${lib}.so")
    endif()
  endforeach()
  add_library(t2o::libtorch INTERFACE IMPORTED)
  # The wheel's include/ also holds the protobuf headers torch was built with
  # (google/): next to Debian's protobuf (which ONNX uses) they would mix two
  # protobuf versions. The build sees the wheel's headers through a tree of
  # links to everything in include/ but google/.
  set(_t2o_inc ${CMAKE_BINARY_DIR}/torch_include)
  file(REMOVE_RECURSE ${_t2o_inc})
  file(MAKE_DIRECTORY ${_t2o_inc})
  file(GLOB _t2o_entries RELATIVE ${_t2o_torch_dir}/include ${_t2o_torch_dir}/include/*)
  foreach(entry ${_t2o_entries})
    if(NOT entry STREQUAL "google")
      file(CREATE_LINK ${_t2o_torch_dir}/include/${entry} ${_t2o_inc}/${entry} SYMBOLIC)
    endif()
  endforeach()
  set(T2O_TORCH_INCLUDE_TREE ${_t2o_inc})
  set(T2O_TORCH_INCLUDE_DIRS ${_t2o_inc} ${_t2o_inc}/torch/csrc/api/include)
  set(T2O_TORCH_ABI ${_t2o_abi})
  target_include_directories(t2o::libtorch SYSTEM INTERFACE ${T2O_TORCH_INCLUDE_DIRS})
  # --no-as-needed: libtorch_cpu registers the operators when it loads, even
  # when no symbol of it is referenced directly.
  target_link_libraries(t2o::libtorch INTERFACE
    -Wl,--no-as-needed ${T2O_TORCH_LIBDIR}/libtorch_cpu.so ${T2O_TORCH_LIBDIR}/libc10.so -Wl,--as-needed)
  target_compile_definitions(t2o::libtorch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_t2o_abi})
  set(CMAKE_BUILD_RPATH ${T2O_TORCH_LIBDIR})
  set(CMAKE_INSTALL_RPATH ${T2O_TORCH_LIBDIR})
  set(CMAKE_CXX_STANDARD 20)
  message(STATUS "torch2onnx builds on LibTorch ${T2O_TORCH_VERSION} (${_t2o_torch_dir})")
else()
  message(FATAL_ERROR "T2O_TORCH must be wheel or system, not '${T2O_TORCH}'")
endif()
set(CMAKE_CXX_STANDARD_REQUIRED ON)
# Recorded for setup.py, which reuses a build only when its torch is the one pip installs for.
set(T2O_TORCH_VERSION_BUILT ${T2O_TORCH_VERSION} CACHE INTERNAL "the torch version this build is on")
target_compile_features(t2o::libtorch INTERFACE cxx_std_${CMAKE_CXX_STANDARD})
