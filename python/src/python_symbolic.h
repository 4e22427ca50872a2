// Python symbolic functions on the C++ registry: torch.onnx's `g.op(...)` API
// over a SymbolicContext, for register_custom_op_symbolic and for
// torch.autograd.Functions with a static `symbolic`.
#pragma once

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/utils/pybind.h>

#include "torch2onnx/symbolic/registry.h"

namespace torch2onnx::python {

// A C++ symbolic that calls `fn(g, *args)` (the GIL taken for the call).
SymbolicFn python_symbolic(pybind11::function fn);

// The symbolic of prim::PythonOp: calls the autograd Function's `symbolic`.
void python_op_symbolic(SymbolicContext& ctx);

// True when a prim::PythonOp's autograd Function has a `symbolic` method.
bool has_symbolic(const torch::jit::Node& n);

// A prim::PythonOp's autograd Function name ("MyLogExp").
std::string function_name(const torch::jit::Node& n);

// The classes Python symbolics see: Value, ValueType, GraphContext.
void bind_symbolic_api(pybind11::module_& m);

}  // namespace torch2onnx::python
