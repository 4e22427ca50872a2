// torch.onnx's operator_export_type fallbacks: a PyTorch operator kept as one
// ONNX node, for a runtime that implements it.
#pragma once

#include <string>

#include "torch2onnx/symbolic/registry.h"

namespace torch2onnx::convert {

// ONNX_ATEN / ONNX_ATEN_FALLBACK: an `ATen` node of domain org.pytorch.aten
// with attributes `operator` ("add") and `overload_name` ("Tensor").
SymbolicFn aten_node(const std::string& op, const std::string& overload);

// ONNX_FALLTHROUGH: a node `name` of domain `ns` ("custom_ops::foo" -> Foo
// of custom_ops), as the operator is.
SymbolicFn passthrough_node(const std::string& ns, const std::string& name);

}  // namespace torch2onnx::convert
