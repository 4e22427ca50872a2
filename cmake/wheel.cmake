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

if(T2O_WHEEL_PREBUILT)
  # The files of the build tree `make build` made for the same torch (the
  # backend brought them up to date): copied, their run paths set to the
  # wheel's and their debug information stripped.
  file(GLOB _t2o_ext ${T2O_WHEEL_PREBUILT}/python/torch2onnx/_C*.so)
  file(GLOB _t2o_lib ${T2O_WHEEL_PREBUILT}/libtorch2onnx.so.${PROJECT_VERSION})
  set(_t2o_cli ${T2O_WHEEL_PREBUILT}/torch2onnx)
  if(NOT _t2o_ext OR NOT _t2o_lib OR NOT EXISTS ${_t2o_cli})
    message(FATAL_ERROR "T2O_WHEEL_PREBUILT=${T2O_WHEEL_PREBUILT} holds no built extension, library and CLI")
  endif()
  get_filename_component(_t2o_ext_name ${_t2o_ext} NAME)
  install(FILES ${_t2o_ext} DESTINATION torch2onnx)
  install(FILES ${_t2o_lib} DESTINATION torch2onnx/lib RENAME libtorch2onnx.so.${PROJECT_VERSION_MAJOR})
  install(PROGRAMS ${_t2o_cli} DESTINATION torch2onnx/bin)
  find_program(T2O_STRIP strip REQUIRED)
  foreach(_t2o_file "${_t2o_ext_name}" "lib/libtorch2onnx.so.${PROJECT_VERSION_MAJOR}" "bin/torch2onnx")
    if(_t2o_file MATCHES "^lib/")
      set(_t2o_rpath "${T2O_WHEEL_RPATH_LIB}")
    elseif(_t2o_file MATCHES "^bin/")
      set(_t2o_rpath "${T2O_WHEEL_RPATH_CLI}")
    else()
      set(_t2o_rpath "${T2O_WHEEL_RPATH_EXT}")
    endif()
    set(_t2o_path "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/torch2onnx/${_t2o_file}")
    if(_t2o_rpath)
      set(_t2o_set_rpath "file(RPATH_SET FILE \"${_t2o_path}\" NEW_RPATH \"${_t2o_rpath}\")")
    else()
      set(_t2o_set_rpath "file(RPATH_REMOVE FILE \"${_t2o_path}\")")
    endif()
    install(CODE "
      execute_process(COMMAND \"${T2O_STRIP}\" --strip-debug \"${_t2o_path}\" COMMAND_ERROR_IS_FATAL ANY)
      ${_t2o_set_rpath}")
  endforeach()
  return()
endif()

install(TARGETS torch2onnx_python LIBRARY DESTINATION torch2onnx)
install(TARGETS torch2onnx LIBRARY DESTINATION torch2onnx/lib NAMELINK_SKIP)
install(TARGETS torch2onnx_cli RUNTIME DESTINATION torch2onnx/bin)
set_target_properties(torch2onnx_python PROPERTIES INSTALL_RPATH "${T2O_WHEEL_RPATH_EXT}")
set_target_properties(torch2onnx PROPERTIES INSTALL_RPATH "${T2O_WHEEL_RPATH_LIB}")
set_target_properties(torch2onnx_cli PROPERTIES INSTALL_RPATH "${T2O_WHEEL_RPATH_CLI}")
