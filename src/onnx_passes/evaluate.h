// Evaluates one ONNX node on constant inputs (for constant folding), with
// ONNX's semantics, using ATen kernels.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace torch2onnx::onnx_passes {

// Whether `evaluate` knows the op.
bool can_evaluate(const ir::Node& node);

// The node's outputs, or nullopt when the op (or this use of it) is not
// supported. `inputs` align with node.inputs() (nullptr for omitted ones).
std::optional<std::vector<ir::Tensor>> evaluate(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                                int64_t opset);

}  // namespace torch2onnx::onnx_passes
