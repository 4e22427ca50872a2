// The newest opset this build exports. T2O_MAX_OPSET is given to this file
// alone (CMakeLists.txt, from the ONNX library the build found), so moving it
// recompiles one file, not every file that includes the registry.
#include "torch2onnx/symbolic/registry.h"

#ifndef T2O_MAX_OPSET
#error "T2O_MAX_OPSET is set by CMakeLists.txt for this file"
#endif

namespace torch2onnx {

int max_opset() { return T2O_MAX_OPSET; }

int default_program_opset() { return T2O_MAX_OPSET < 20 ? T2O_MAX_OPSET : 20; }

}  // namespace torch2onnx
