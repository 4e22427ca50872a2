// Meta-device outputs for operators LibTorch's C++ build cannot run on meta.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace torch2onnx::torch_side {

// The outputs of `kind` on these (meta) inputs, or nullopt when there is no
// shape function for it. Throws for inputs PyTorch would reject.
std::optional<std::vector<c10::IValue>> meta_outputs(const std::string& kind, const std::vector<c10::IValue>& stack);

}  // namespace torch2onnx::torch_side
