#include "torch_passes/cpp_meta_kernels.h"

#include <ATen/MetaFunctions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <sstream>
#include <string>

namespace torch2onnx::torch_side {
namespace {

// Whether the meta kernel in effect for aten::add.Tensor is a Python
// function (its registration names a .py file), as after `import torch`.
bool python_meta_kernels_active() {
  auto op = c10::Dispatcher::singleton().findSchema({"aten::add", "Tensor"});
  if (!op) return false;
  std::istringstream state(op->dumpState());
  for (std::string line; std::getline(state, line);)
    if (line.rfind("Meta: ", 0) == 0) return line.find(".py:") != std::string::npos;
  return false;
}

}  // namespace

CppMetaKernels::CppMetaKernels() {
  if (!python_meta_kernels_active()) return;
  lib_ = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::Meta, __FILE__, __LINE__);
  torch::Library& m = *lib_;
  (void)m;  // (an empty list where this LibTorch exports no meta functions)
#include "cpp_meta_kernels.inc"
}

CppMetaKernels::~CppMetaKernels() = default;

}  // namespace torch2onnx::torch_side
