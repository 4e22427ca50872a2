# Installs torch2onnx into a scratch prefix, builds examples/cpp_api against
# the installed package with find_package(torch2onnx), runs it on a small
# model and checks the result in ONNX Runtime.
set(prefix ${BINARY_DIR}/cpp_api_test/install)
set(example_build ${BINARY_DIR}/cpp_api_test/build)
set(work ${BINARY_DIR}/cpp_api_test/work)
file(MAKE_DIRECTORY ${work})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/cpp_api -B ${example_build}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${example_build} -j2)
run(${PYTHON} ${SOURCE_DIR}/tests/cpp_api/check_example.py ${example_build}/export_example ${work})
