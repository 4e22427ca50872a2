# The wheel (pip wheel . / pip install .: pyproject.toml, scikit-build-core,
# tools/wheel/backend.py). Into the package directory torch2onnx/: the
# extension _C, the CLI as bin/torch2onnx (run by the `torch2onnx` command,
# python/_torch2onnx_cli.py) and the library it links as lib/. They find
# LibTorch in the installed torch beside the package (the wheel pins that
# torch's version) and each other through $ORIGIN.
# (Debian's LibTorch, T2O_TORCH=system, is on the system's library path: no run path to it)
if(T2O_TORCH STREQUAL "system")
  set(T2O_WHEEL_RPATH_EXT "")
  set(T2O_WHEEL_RPATH_LIB "")
  set(T2O_WHEEL_RPATH_CLI "$ORIGIN/../lib")
else()
  set(T2O_WHEEL_RPATH_EXT "$ORIGIN/../torch/lib")
  set(T2O_WHEEL_RPATH_LIB "$ORIGIN/../../torch/lib")
  set(T2O_WHEEL_RPATH_CLI "$ORIGIN/../lib:$ORIGIN/../../torch/lib")
endif()
install(FILES ${PROJECT_SOURCE_DIR}/python/_torch2onnx_cli.py DESTINATION .)

# At install, a file of the package (a path under torch2onnx/) loses its
# debug information and gets rpath as its run path (none when empty).
function(t2o_wheel_finish file rpath)
  find_program(T2O_STRIP strip REQUIRED)
  set(path "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/torch2onnx/${file}")
  if(rpath)
    set(set_rpath "file(RPATH_SET FILE \"${path}\" NEW_RPATH \"${rpath}\")")
  else()
    set(set_rpath "file(RPATH_REMOVE FILE \"${path}\")")
  endif()
  install(CODE "
    execute_process(COMMAND \"${T2O_STRIP}\" --strip-debug \"${path}\" COMMAND_ERROR_IS_FATAL ANY)
    ${set_rpath}")
endfunction()

# The extension, the library (under its soname only: a wheel has no symbolic
# links) and the CLI, each copied and finished.
function(t2o_wheel_install ext ext_name lib cli)
  set(lib_name libtorch2onnx.so.${PROJECT_VERSION_MAJOR})
  install(FILES ${ext} DESTINATION torch2onnx)
  install(FILES ${lib} DESTINATION torch2onnx/lib RENAME ${lib_name})
  install(PROGRAMS ${cli} DESTINATION torch2onnx/bin RENAME torch2onnx)
  t2o_wheel_finish("${ext_name}" "${T2O_WHEEL_RPATH_EXT}")
  t2o_wheel_finish("lib/${lib_name}" "${T2O_WHEEL_RPATH_LIB}")
  t2o_wheel_finish("bin/torch2onnx" "${T2O_WHEEL_RPATH_CLI}")
endfunction()

if(T2O_WHEEL_PREBUILT)
  # The files of the build tree `make` made for the same torch (the backend
  # brought them up to date).
  file(GLOB _t2o_ext ${T2O_WHEEL_PREBUILT}/python/torch2onnx/_C*.so)
  file(GLOB _t2o_lib ${T2O_WHEEL_PREBUILT}/libtorch2onnx.so.${PROJECT_VERSION})
  set(_t2o_cli ${T2O_WHEEL_PREBUILT}/torch2onnx)
  if(NOT _t2o_ext OR NOT _t2o_lib OR NOT EXISTS ${_t2o_cli})
    message(FATAL_ERROR "T2O_WHEEL_PREBUILT=${T2O_WHEEL_PREBUILT} holds no built extension, library and CLI")
  endif()
  get_filename_component(_t2o_ext_name ${_t2o_ext} NAME)
  t2o_wheel_install(${_t2o_ext} ${_t2o_ext_name} ${_t2o_lib} ${_t2o_cli})
  return()
endif()

# This build's targets.
t2o_wheel_install($<TARGET_FILE:torch2onnx_python> $<TARGET_FILE_NAME:torch2onnx_python>
                  $<TARGET_FILE:torch2onnx> $<TARGET_FILE:torch2onnx_cli>)
