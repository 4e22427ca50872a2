// torch2onnx._C.module_tree (module_tree.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace torch2onnx::python {

void bind_module_tree(pybind11::module_& m);

}  // namespace torch2onnx::python
