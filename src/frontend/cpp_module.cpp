// LibTorch C++-frontend models (include/torch2onnx/cpp_frontend.h): the
// torch::nn::Module tree is mirrored by a TorchScript module tree holding the
// same tensors, and the forward call is traced with LibTorch's tracer with
// that module as `self`, so the graph reads every parameter and buffer as
// an attribute of its submodule (`self.encoder.layers.0.norm1.weight`): the
// pipeline names them as a Python model's.
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/nn/module.h>

#include <cctype>

#include "torch2onnx/cpp_frontend.h"
#include "torch2onnx/torch2onnx.h"

namespace torch2onnx {
namespace {

// "torch::nn::Conv2dImpl" -> "__torch__.torch.nn.Conv2dImpl" (a TorchScript class name).
c10::QualifiedName class_name(const torch::nn::Module& m) {
  std::vector<std::string> atoms{"__torch__"};
  std::string atom;
  const std::string& name = m.name();
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == ':') {
      if (!atom.empty()) atoms.push_back(atom);
      atom.clear();
      continue;
    }
    const char c = name[i];
    atom += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  }
  if (atoms.size() == 1) atoms.push_back("Module");
  if (std::isdigit(static_cast<unsigned char>(atoms.back()[0]))) atoms.back() = "_" + atoms.back();
  return c10::QualifiedName(atoms);
}

torch::jit::Module mirror(const torch::nn::Module& m) {
  torch::jit::Module out(class_name(m));
  out.register_attribute("training", c10::BoolType::get(), m.is_training());
  for (const auto& p : m.named_parameters(/*recurse=*/false))
    if (p.value().defined()) out.register_parameter(p.key(), p.value(), /*is_buffer=*/false);
  for (const auto& b : m.named_buffers(/*recurse=*/false))
    if (b.value().defined()) out.register_buffer(b.key(), b.value());
  for (const auto& c : m.named_children()) out.register_module(c.key(), mirror(*c.value()));
  return out;
}

}  // namespace

torch::jit::Module trace_cpp_module(const torch::nn::Module& module, const CppForward& forward,
                                    const std::vector<c10::IValue>& args) {
  torch::jit::Module self = mirror(module);
  std::shared_ptr<torch::jit::tracer::TracingState> state;
  try {
    state = torch::jit::tracer::trace(
                torch::jit::Stack(args.begin(), args.end()),
                [&forward](torch::jit::Stack inputs) -> torch::jit::Stack {
                  return {forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()))};
                },
                [](const torch::autograd::Variable&) { return std::string(); }, /*strict=*/false,
                /*force_outplace=*/false, &self)
                .first;
  } catch (const c10::Error& e) {
    throw Error(Error::Kind::Args, std::string("tracing the C++ module's forward failed: ") + e.what_without_backtrace());
  }
  auto fn = self._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*self.type()->name(), "forward"), state->graph);
  self.type()->addMethod(fn);
  return self;
}

void export_cpp_module(const torch::nn::Module& module, const CppForward& forward,
                       const std::vector<c10::IValue>& args, const std::string& path, const ExportOptions& options) {
  export_model(trace_cpp_module(module, forward, args), args, path, options);
}

void export_cpp_function(const CppForward& forward, const std::vector<c10::IValue>& args, const std::string& path,
                         const ExportOptions& options) {
  export_cpp_module(torch::nn::Module("Function"), forward, args, path, options);
}

}  // namespace torch2onnx
