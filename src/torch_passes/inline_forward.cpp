// Takes forward() of the module as a graph with every call inlined.
#include <torch/csrc/jit/passes/inliner.h>

#include "torch_passes/origin.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {

TorchGraph inline_forward(torch::jit::Module& module, const TorchContext& ctx) {
  switch (ctx.options.training) {
    case TrainingMode::Eval: module.eval(); break;
    case TrainingMode::Training: module.train(true); break;
    case TrainingMode::Preserve: break;
  }
  auto method = module.find_method("forward");
  if (!method)
    throw Error(Error::Kind::Load, "the TorchScript module has no forward() method to export");
  TorchGraph tg;
  tg.graph = method->graph()->copy();
  torch::jit::Inline(*tg.graph);
  const auto& schema = method->function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    const auto& a = schema.arguments()[i];
    tg.input_arg_names.push_back(a.name());
    tg.input_defaults.push_back(a.default_value() ? std::optional<c10::IValue>(*a.default_value()) : std::nullopt);
  }
  tg.root_class = module.type()->name() ? plain_class_name(module.type()->name()->qualifiedName()) : "Module";
  return tg;
}

}  // namespace torch2onnx::torch_side
