// Models written with LibTorch's C++ frontend (torch::nn::Module) exported to
// ONNX: the forward call is traced with LibTorch's tracer, with the module's
// parameters and buffers read as the module tree names them ("conv1.weight",
// "encoder.layers.0.norm1.bias"), then exported through the same pipeline as
// a TorchScript module.
//
//   struct NetImpl : torch::nn::Module { ... torch::Tensor forward(torch::Tensor x); };
//   TORCH_MODULE(Net);
//   Net net;
//   net->eval();
//   torch2onnx::export_cpp_module(*net, [&](const std::vector<c10::IValue>& in) {
//     return c10::IValue(net->forward(in[0].toTensor()));
//   }, {torch::randn({1, 3, 32, 32})}, "net.onnx");
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/nn/module.h>

#include "torch2onnx/options.h"

namespace torch2onnx {

// What runs the model: the example args in, its output out (a tensor, or a
// tuple/list of them, nested as the model returns them).
using CppForward = std::function<c10::IValue(const std::vector<c10::IValue>&)>;

// The traced module: a TorchScript module holding `module`'s parameters and
// buffers (the same tensors) in a tree of submodules named as its own, whose
// forward() is what `forward` computed on `args` (a trace: control flow as
// the example takes it). export_model() takes it, as do the other functions
// of torch2onnx.h.
torch::jit::Module trace_cpp_module(const torch::nn::Module& module, const CppForward& forward,
                                    const std::vector<c10::IValue>& args);

// trace_cpp_module, then export_model to `path`.
void export_cpp_module(const torch::nn::Module& module, const CppForward& forward,
                       const std::vector<c10::IValue>& args, const std::string& path,
                       const ExportOptions& options = {});

// Any callable on tensors, without a module: tensors it captures become
// constants of the graph (ONNX initializers).
void export_cpp_function(const CppForward& forward, const std::vector<c10::IValue>& args, const std::string& path,
                         const ExportOptions& options = {});

}  // namespace torch2onnx
