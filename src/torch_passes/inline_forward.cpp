// Takes forward() of the module as a graph with every call inlined.
#include <torch/csrc/jit/passes/inliner.h>


#include "torch_passes/origin.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {

namespace {

// Whether example `args` can be forward()'s arguments under `schema` (self first).
bool accepts(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const auto& params = schema.arguments();
  if (args.size() + 1 > params.size()) return false;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].type()->isSubtypeOf(*params[i + 1].type())) return false;
  for (size_t i = args.size() + 1; i < params.size(); ++i)
    if (!params[i].default_value()) return false;
  return true;
}

// forward(), or for a module whose forward is overloaded (a scripted nn.LSTM:
// forward__0 on a tensor, forward__1 on a PackedSequence) the first overload
// that takes the example args.
torch::jit::Method forward_method(torch::jit::Module& module, const std::vector<c10::IValue>& args) {
  if (auto m = module.find_method("forward")) return *m;
  std::vector<std::string> overloads;
  for (int k = 0;; ++k) {
    auto m = module.find_method("forward__" + std::to_string(k));
    if (!m) break;
    if (accepts(m->function().getSchema(), args)) return *m;
    overloads.push_back(m->name());
  }
  if (overloads.empty()) throw Error(Error::Kind::Load, "the TorchScript module has no forward() method to export");
  std::string names;
  for (const auto& o : overloads) names += (names.empty() ? "" : ", ") + o;
  throw Error(Error::Kind::Args, "no overload of the module's forward() (" + names + ") takes the example args");
}

}  // namespace

TorchGraph inline_forward(torch::jit::Module& module, const std::vector<c10::IValue>& args, const TorchContext& ctx) {
  switch (ctx.options.training) {
    case TrainingMode::Eval: module.eval(); break;
    case TrainingMode::Training: module.train(true); break;
    case TrainingMode::Preserve: break;
  }
  auto method = forward_method(module, args);
  TorchGraph tg;
  tg.graph = method.graph()->copy();
  torch::jit::Inline(*tg.graph);
  const auto& schema = method.function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    const auto& a = schema.arguments()[i];
    tg.input_arg_names.push_back(a.name());
    tg.input_defaults.push_back(a.default_value() ? std::optional<c10::IValue>(*a.default_value()) : std::nullopt);
  }
  tg.root_class = module.type()->name() ? plain_class_name(module.type()->name()->qualifiedName()) : "Module";
  return tg;
}

}  // namespace torch2onnx::torch_side
