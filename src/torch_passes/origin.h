// Where a PyTorch node came from: module path, torch-style scope and source lines.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include <torch/csrc/jit/ir/ir.h>

#include "ir/graph.h"

namespace torch2onnx::torch_side {

class OriginTable {
 public:
  explicit OriginTable(std::string root_class) : root_class_(std::move(root_class)) {}
  // Shared by every node with the same call stack and source line.
  std::shared_ptr<const ir::Origin> of(const torch::jit::Node* node);

 private:
  std::string root_class_;
  std::unordered_map<std::string, std::shared_ptr<const ir::Origin>> cache_;
};

// "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d" -> "Conv2d"
std::string plain_class_name(const std::string& qualified);

// "module.path (file.py:12)" for messages.
std::string describe_origin(const ir::Origin& o);

}  // namespace torch2onnx::torch_side
